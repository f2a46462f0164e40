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

// ---- words -------------------------------------------------------------------------

namespace {

// Each text's words as ids of one table (split at spaces; runs of spaces are one).
std::vector<std::vector<uint32_t>> word_ids(const std::vector<std::string>& texts,
                                            std::unordered_map<std::string_view, uint32_t>& table) {
  std::vector<std::vector<uint32_t>> out;
  for (const std::string& t : texts) {
    std::vector<uint32_t> w;
    for (std::size_t i = 0; i < t.size();) {
      const std::size_t end = std::min(t.find(' ', i), t.size());
      if (end > i)
        w.push_back(table.try_emplace(std::string_view(t).substr(i, end - i), static_cast<uint32_t>(table.size()))
                        .first->second);
      i = end + 1;
    }
    out.push_back(std::move(w));
  }
  return out;
}

// The words of w without the one at `skip` (none when skip >= size), as a hash key;
// `at` prefixes the position (substitution keys), or is -1.
std::string word_key(const std::vector<uint32_t>& w, std::size_t skip, int64_t at) {
  std::string k;
  if (at >= 0) k.append(reinterpret_cast<const char*>(&at), sizeof at);
  for (std::size_t i = 0; i < w.size(); ++i)
    if (i != skip) k.append(reinterpret_cast<const char*>(&w[i]), sizeof w[i]);
  return k;
}

int64_t levenshtein(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<int64_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), int64_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    int64_t diag = row[0];
    row[0] = static_cast<int64_t>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int64_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row.back();
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> word_neighbour_pairs(const std::vector<std::string>& texts,
                                                              int64_t min_words) {
  AG_CHECK(min_words >= 1, ValueError, "word_neighbour_pairs: min_words ", min_words, " must be at least 1");
  std::unordered_map<std::string_view, uint32_t> table;
  const auto words = word_ids(texts, table);
  // substitution: (position, the other words) -> texts; deletion: the words less one -> texts
  std::unordered_map<std::string, std::vector<int64_t>> substitution, deletion;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (static_cast<int64_t>(words[i].size()) < min_words) continue;
    for (std::size_t k = 0; k < words[i].size(); ++k) {
      substitution[word_key(words[i], k, static_cast<int64_t>(k))].push_back(static_cast<int64_t>(i));
      deletion[word_key(words[i], k, -1)].push_back(static_cast<int64_t>(i));
    }
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  auto add = [&](int64_t a, int64_t b) {
    if (words[static_cast<std::size_t>(a)] != words[static_cast<std::size_t>(b)])
      out.emplace_back(std::min(a, b), std::max(a, b));
  };
  for (const auto& [key, group] : substitution)
    for (std::size_t x = 0; x < group.size(); ++x)
      for (std::size_t y = x + 1; y < group.size(); ++y) add(group[x], group[y]);
  // Insertions: a text of min_words or more words equal to a longer text less one word.
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (static_cast<int64_t>(words[i].size()) < min_words) continue;
    if (auto it = deletion.find(word_key(words[i], words[i].size(), -1)); it != deletion.end())
      for (int64_t j : it->second) add(static_cast<int64_t>(i), j);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t word_distance(std::string_view a, std::string_view b) {
  std::unordered_map<std::string_view, uint32_t> table;
  const std::vector<std::string> texts{std::string(a), std::string(b)};
  const auto w = word_ids(texts, table);
  return levenshtein(w[0], w[1]);
}

std::vector<int64_t> nearest_word_distances(const std::vector<std::string>& queries,
                                            const std::vector<std::string>& pool, int64_t cap) {
  AG_CHECK(cap >= 1, ValueError, "nearest_word_distances: cap ", cap, " must be at least 1");
  std::unordered_map<std::string_view, uint32_t> table;
  const auto pw = word_ids(pool, table), qw = word_ids(queries, table);
  std::map<std::size_t, std::vector<std::size_t>> by_length;  // pool texts by word count
  for (std::size_t j = 0; j < pw.size(); ++j) by_length[pw[j].size()].push_back(j);
  std::vector<int64_t> out;
  for (const auto& q : qw) {
    int64_t best = cap;
    // |len(q) - len(p)| <= d < best, and both have more than d words.
    const std::size_t lo = q.size() >= static_cast<std::size_t>(cap) ? q.size() - static_cast<std::size_t>(cap) : 0;
    for (auto it = by_length.lower_bound(lo);
         it != by_length.end() && it->first < q.size() + static_cast<std::size_t>(best); ++it)
      for (std::size_t j : it->second) {
        const auto gap = static_cast<int64_t>(std::max(q.size(), it->first) - std::min(q.size(), it->first));
        if (gap >= best) continue;
        const int64_t d = levenshtein(q, pw[j]);
        if (d<best&& static_cast<int64_t>(std::min(q.size(), it->first))> d) best = d;
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
  for (const auto& [a, b] : word_neighbour_pairs(keys)) uf.join(a, b);
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
  for (std::size_t c = 0; c < n; ++c)
    part[c] = size[c] > options.max_held_out_cluster ? Split::train : split_of(key[c], options);
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
  st.max_held_out_cluster = options.max_held_out_cluster;
  for (std::size_t c = 0; c < n; ++c) {
    ++st.clusters[static_cast<int>(part[c])];
    st.messages[static_cast<int>(part[c])] += size[c];
    st.largest_cluster = std::max(st.largest_cluster, size[c]);
    if (size[c] > options.max_held_out_cluster) st.kept_in_train_for_size += size[c];
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
  std::vector<std::string> train_normalized, test_normalized;
  for (const Pair& p : s.train) train_normalized.push_back(normalize_source(p.source));
  for (const Pair& p : s.test) test_normalized.push_back(normalize_source(p.source));
  for (const std::string& k : train_normalized) train_keys.emplace(k, 0);
  for (const std::string& k : test_normalized) st.test_with_train_normalized_twin += train_keys.count(k);
  for (int64_t d : nearest_word_distances(test_normalized, train_normalized, 4)) ++st.test_nearest_words[d];
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
