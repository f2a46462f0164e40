// The cluster split and the n-gram nearest neighbours: see split.h.
#include "split.h"

#include <attograd/error.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

namespace translate {

using ag::ValueError;

namespace {

bool ascii_alnum(unsigned char c) { return std::isalnum(c) != 0; }

// The code point at s[i] and its byte length (a stray byte counts as itself, length 1).
std::pair<uint32_t, std::size_t> code_point(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
  if (n == 1 || i + n > s.size()) return {c, 1};
  uint32_t cp = c & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return {cp, n};
}

// Length of the printf directive at s[i] == '%' (flags, width, precision, length modifier,
// conversion; "%1$s" and "%*d" too), 0 if there is none ("%%", "100%").
std::size_t directive_length(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  auto digits = [&] {
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  };
  const std::size_t start = j;
  digits();
  if (j < s.size() && s[j] == '$' && j > start)
    ++j;  // positional argument
  else
    j = start;
  while (j < s.size() && std::string_view("-+ #0'I").find(s[j]) != std::string_view::npos) ++j;
  if (j < s.size() && s[j] == '*')
    ++j;
  else
    digits();
  if (j < s.size() && s[j] == '.') {
    ++j;
    if (j < s.size() && s[j] == '*')
      ++j;
    else
      digits();
  }
  while (j < s.size() && std::string_view("hlLqjzZt").find(s[j]) != std::string_view::npos) ++j;
  if (j < s.size() && std::string_view("diouxXeEfFgGaAcCsSpnm").find(s[j]) != std::string_view::npos) return j + 1 - i;
  return 0;
}

// Length of the quoted name opening at s[i], 0 if none (see normalize_source).
std::size_t quote_length(std::string_view s, std::size_t i) {
  static const std::pair<std::string_view, std::string_view> quotes[] = {{"'", "'"},
                                                                         {"\"", "\""},
                                                                         {"`", "'"},
                                                                         {"\xe2\x80\x98", "\xe2\x80\x99"},
                                                                         {"\xe2\x80\x9c", "\xe2\x80\x9d"},
                                                                         {"\xc2\xab", "\xc2\xbb"}};
  if (i > 0 && ascii_alnum(static_cast<unsigned char>(s[i - 1]))) return 0;
  for (const auto& [open, close] : quotes) {
    if (s.substr(i, open.size()) != open) continue;
    const std::size_t from = i + open.size(), end = s.find(close, from);
    if (end == std::string_view::npos || end == from || end - from > 40) return 0;
    const std::size_t after = end + close.size();
    if (after < s.size() && ascii_alnum(static_cast<unsigned char>(s[after]))) return 0;
    return after - i;
  }
  return 0;
}

// Union-find with path halving; the smaller root joins the larger id's root.
struct Clusters {
  std::vector<int64_t> parent;
  int64_t add() {
    parent.push_back(static_cast<int64_t>(parent.size()));
    return parent.back();
  }
  int64_t find(int64_t x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      auto& p = parent[static_cast<std::size_t>(x)];
      p = parent[static_cast<std::size_t>(p)];
      x = p;
    }
    return x;
  }
  void join(int64_t a, int64_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

}  // namespace

std::string normalize_source(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto space = [&] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  auto slot = [&] {
    space();
    out += '0';
    space();
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '%') {
      const std::size_t n = directive_length(s, i);
      n ? slot() : space();
      i += n ? n : (i + 1 < s.size() && s[i + 1] == '%' ? 2 : 1);
    } else if (std::isdigit(c)) {
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      slot();
    } else if (const std::size_t q = quote_length(s, i)) {
      slot();
      i += q;
    } else if (c < 0x80) {
      if (ascii_alnum(c))
        out += static_cast<char>(std::tolower(c));
      else
        space();
      ++i;
    } else {
      const auto [cp, n] = code_point(s, i);
      if ((cp >= 0x2000 && cp <= 0x206f) || (cp >= 0xa0 && cp <= 0xbf))
        space();
      else
        out.append(s.substr(i, n));
      i += n;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// ---- character 3-grams -------------------------------------------------------------

uint32_t GramTable::id(uint64_t key) { return ids_.try_emplace(key, static_cast<uint32_t>(ids_.size())).first->second; }

std::size_t GramTable::size() const { return ids_.size(); }

std::vector<uint32_t> GramTable::grams(std::string_view s) {
  std::vector<uint64_t> cps{' '};
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, n] = code_point(s, i);
    cps.push_back(cp);
    i += n;
  }
  cps.push_back(' ');
  std::vector<uint32_t> out;
  for (std::size_t i = 0; i + 2 < cps.size(); ++i) out.push_back(id(cps[i] << 42 | cps[i + 1] << 21 | cps[i + 2]));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  std::size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j])
      ++both, ++i, ++j;
    else if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  return static_cast<double>(both) / static_cast<double>(a.size() + b.size() - both);
}

double char_similarity(std::string_view a, std::string_view b) {
  GramTable t;
  const auto ga = t.grams(a);
  return jaccard(ga, t.grams(b));
}

std::vector<std::pair<int64_t, int64_t>> similar_pairs(const std::vector<std::string>& texts, double threshold) {
  AG_CHECK(threshold > 0 && threshold <= 1, ValueError, "similar_pairs: threshold ", threshold, " must be in (0, 1]");
  GramTable table;
  std::vector<std::vector<uint32_t>> sets;
  for (const auto& t : texts) sets.push_back(table.grams(t));
  std::vector<int64_t> freq(table.size(), 0);
  for (const auto& s : sets)
    for (uint32_t g : s) ++freq[g];
  std::vector<std::vector<int64_t>> index(table.size());  // gram -> texts whose prefix has it
  std::vector<int64_t> seen(texts.size(), -1);            // the last text each candidate was checked for
  std::vector<std::pair<int64_t, int64_t>> out;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (sets[i].empty()) continue;
    std::vector<uint32_t> order = sets[i];  // rarest first (ties by id): one global order
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return std::pair{freq[a], a} < std::pair{freq[b], b};
    });
    const auto n = static_cast<double>(order.size());
    const auto prefix = static_cast<std::size_t>(n - std::ceil(threshold * n - 1e-9) + 1);
    for (std::size_t k = 0; k < std::min(prefix, order.size()); ++k) {
      for (int64_t j : index[order[k]]) {
        if (seen[static_cast<std::size_t>(j)] == static_cast<int64_t>(i)) continue;
        seen[static_cast<std::size_t>(j)] = static_cast<int64_t>(i);
        // Length filter: Jaccard <= min(|a|, |b|) / max(|a|, |b|).
        const auto m = static_cast<double>(sets[static_cast<std::size_t>(j)].size());
        if (std::min(m, n) < threshold * std::max(m, n) - 1e-9) continue;
        if (jaccard(sets[static_cast<std::size_t>(j)], sets[i]) >= threshold - 1e-12)
          out.emplace_back(j, static_cast<int64_t>(i));
      }
      index[order[k]].push_back(static_cast<int64_t>(i));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Neighbour> nearest_neighbours(const std::vector<std::string>& queries,
                                          const std::vector<std::string>& pool) {
  GramTable table;
  std::vector<std::vector<uint32_t>> sets;
  for (const auto& t : pool) sets.push_back(table.grams(t));
  std::vector<std::vector<int64_t>> index(table.size());
  for (std::size_t j = 0; j < sets.size(); ++j)
    for (uint32_t g : sets[j]) index[g].push_back(static_cast<int64_t>(j));
  std::vector<int64_t> shared(pool.size(), 0);
  std::vector<Neighbour> out;
  for (const auto& q : queries) {
    std::vector<int64_t> touched;
    const auto qs = table.grams(q);  // grams no pool text has get ids past the index
    for (uint32_t g : qs) {
      if (g >= index.size()) continue;
      for (int64_t j : index[g])
        if (shared[static_cast<std::size_t>(j)]++ == 0) touched.push_back(j);
    }
    std::sort(touched.begin(), touched.end());
    Neighbour best;
    for (int64_t j : touched) {
      const auto c = static_cast<double>(shared[static_cast<std::size_t>(j)]);
      const double sim = c / (static_cast<double>(qs.size() + sets[static_cast<std::size_t>(j)].size()) - c);
      if (sim > best.similarity) best = {j, sim};
      shared[static_cast<std::size_t>(j)] = 0;
    }
    out.push_back(best);
  }
  return out;
}

// ---- clusters and the split --------------------------------------------------------

std::vector<int64_t> cluster_pairs(const std::vector<Pair>& pairs, double threshold) {
  Clusters uf;
  std::unordered_map<std::string, int64_t> node;  // normalized text -> union-find node
  std::vector<std::string> keys;                  // node -> its normalized text
  auto node_of = [&](std::string key) {
    auto [it, fresh] = node.try_emplace(key, 0);
    if (fresh) it->second = uf.add(), keys.push_back(std::move(key));
    return it->second;
  };
  std::vector<int64_t> of(pairs.size());
  std::vector<std::string> sources;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    sources.push_back(pairs[i].source);
    of[i] = node_of(normalize_source(pairs[i].source));
    if (!pairs[i].entry.empty()) uf.join(of[i], node_of(normalize_source(pairs[i].entry)));
  }
  // Near-duplicates among the distinct normalized texts (equal ones share a node already),
  // then among the sources as they are.
  for (const auto& [a, b] : similar_pairs(keys, threshold)) uf.join(a, b);
  for (const auto& [a, b] : similar_pairs(sources, threshold))
    uf.join(of[static_cast<std::size_t>(a)], of[static_cast<std::size_t>(b)]);
  std::unordered_map<int64_t, int64_t> id;  // root -> cluster id, in order of first appearance
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    out.push_back(id.try_emplace(uf.find(of[i]), static_cast<int64_t>(id.size())).first->second);
  return out;
}

Splits split_by_cluster(const std::vector<Pair>& pairs, const SplitOptions& options, double threshold,
                        SplitStats* stats) {
  const std::vector<int64_t> cluster = cluster_pairs(pairs, threshold);
  const auto n = static_cast<std::size_t>(cluster.empty() ? 0 : *std::max_element(cluster.begin(), cluster.end()) + 1);
  std::vector<std::string> key(n);  // the smallest normalized text of each cluster
  std::vector<bool> has_key(n, false);
  std::vector<int64_t> size(n, 0);
  std::vector<std::string> normalized;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    normalized.push_back(normalize_source(pairs[i].source));
    const auto c = static_cast<std::size_t>(cluster[i]);
    if (!has_key[c] || normalized.back() < key[c]) key[c] = normalized.back(), has_key[c] = true;
    ++size[c];
  }
  std::vector<Split> part(n);
  for (std::size_t c = 0; c < n; ++c) part[c] = split_of(key[c], options);
  Splits s;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    switch (part[static_cast<std::size_t>(cluster[i])]) {
      case Split::train: s.train.push_back(pairs[i]); break;
      case Split::validation: s.validation.push_back(pairs[i]); break;
      case Split::test: s.test.push_back(pairs[i]); break;
    }
  }
  if (!stats) return s;
  SplitStats st;
  st.threshold = threshold;
  for (std::size_t c = 0; c < n; ++c) {
    ++st.clusters[static_cast<int>(part[c])];
    st.messages[static_cast<int>(part[c])] += size[c];
    st.largest_cluster = std::max(st.largest_cluster, size[c]);
  }
  std::vector<std::string> train_sources, test_sources;
  for (const Pair& p : s.train) train_sources.push_back(p.source);
  for (const Pair& p : s.test) test_sources.push_back(p.source);
  for (const Neighbour& nb : nearest_neighbours(test_sources, train_sources)) {
    st.max_test_train_similarity = std::max(st.max_test_train_similarity, nb.similarity);
    st.test_near_train += nb.similarity >= threshold - 1e-12;
    ++st.test_nearest_histogram[std::min(9, static_cast<int>(nb.similarity * 10))];
  }
  std::unordered_map<std::string, int> train_keys;
  for (const Pair& p : s.train) train_keys.emplace(normalize_source(p.source), 0);
  for (const Pair& p : s.test) st.test_with_train_normalized_twin += train_keys.count(normalize_source(p.source));
  *stats = st;
  return s;
}

std::vector<std::string> translation_memory(const std::vector<Pair>& train, const std::vector<std::string>& queries) {
  std::vector<std::string> pool;
  for (const Pair& p : train) pool.push_back(p.source);
  std::vector<std::string> out;
  for (const Neighbour& nb : nearest_neighbours(queries, pool))
    out.push_back(nb.index < 0 ? std::string() : train[static_cast<std::size_t>(nb.index)].target);
  return out;
}

}  // namespace translate
