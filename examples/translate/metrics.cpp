// BLEU and chrF after sacreBLEU 2.x: sacrebleu/tokenizers/tokenizer_13a.py,
// tokenizer_re.py, metrics/bleu.py, metrics/chrf.py, metrics/helpers.py, utils.my_log.
#include "metrics.h"

#include <attograd/error.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace translate {

// ---- UTF-8 ------------------------------------------------------------------------

std::u32string utf8_decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t c = 0, min = 0;
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      c = b0 & 0x1F;
      min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      c = b0 & 0x0F;
      min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      c = b0 & 0x07;
      min = 0x10000;
    }
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      c = (c << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid, as in Python.
    ok = ok && c >= min && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
    if (ok) {
      out.push_back(c);
      i += len;
    } else {
      out.push_back(0xFFFD);
      ++i;
    }
  }
  return out;
}

namespace {

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Python's str.split(): runs of whitespace separate, leading/trailing ones vanish.
std::vector<std::u32string> split_ws(const std::u32string& s) {
  std::vector<std::u32string> words;
  std::u32string cur;
  for (char32_t c : s) {
    if (is_python_space(c)) {
      if (!cur.empty()) words.push_back(std::move(cur)), cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

void replace_all(std::u32string& s, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::u32string::npos; pos = hit + from.size())
    out.append(s, pos, hit - pos).append(to);
  out.append(s, pos);
  s = std::move(out);
}

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }  // [0-9]: ASCII only
bool is_period_comma(char32_t c) { return c == U'.' || c == U','; }
// [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +
// : ; < = > ? @  /   (not ' , - .)
bool is_13a_punct(char32_t c) {
  return (c >= U'{' && c <= U'~') || (c >= U'[' && c <= U'`') || (c >= U' ' && c <= U'&') || (c >= U'(' && c <= U'+') ||
         (c >= U':' && c <= U'@') || c == U'/';
}

// re.sub of a two-character pattern (a)(b) -> pre a mid b post: the leftmost match is
// replaced, and the search goes on after it, so matches never overlap.
template <class A, class B>
std::u32string sub_pairs(const std::u32string& s, A first, B second, std::u32string_view pre, std::u32string_view mid,
                         std::u32string_view post) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      out.append(pre).push_back(s[i]);
      out.append(mid).push_back(s[i + 1]);
      out.append(post);
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// Tokens of a 13a-tokenized (or, with tokenize off, only whitespace-split) segment after
// sacreBLEU's rstrip().
std::vector<std::u32string> bleu_tokens(std::string_view line, bool tokenize) {
  std::u32string s = utf8_decode(line);
  while (!s.empty() && is_python_space(s.back())) s.pop_back();
  if (!tokenize) return split_ws(s);
  replace_all(s, U"<skipped>", U"");
  replace_all(s, U"-\n", U"");
  replace_all(s, U"\n", U" ");
  replace_all(s, U"&quot;", U"\"");
  replace_all(s, U"&amp;", U"&");
  replace_all(s, U"&lt;", U"<");
  replace_all(s, U"&gt;", U">");
  s = U" " + s + U" ";
  std::u32string t;
  t.reserve(s.size() * 2);
  for (char32_t c : s) {
    if (is_13a_punct(c))
      t.append(U" ").append(1, c).append(U" ");
    else
      t.push_back(c);
  }
  auto not_digit = [](char32_t c) { return !is_digit(c); };
  t = sub_pairs(t, not_digit, is_period_comma, U"", U" ", U" ");  // ([^0-9])([\.,]) -> \1 \2
  t = sub_pairs(t, is_period_comma, not_digit, U" ", U" ", U"");  // ([\.,])([^0-9]) -> _\1 \2
  t = sub_pairs(
      t, is_digit, [](char32_t c) { return c == U'-'; }, U"", U" ", U" ");
  return split_ws(t);
}

std::string join_utf8(const std::vector<std::u32string>& words, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out.push_back(' ');
    for (char32_t c : words[i]) append_utf8(out, c);
  }
  return out;
}

// n-grams of orders 1..4 keyed by their tokens joined with spaces (tokens hold none, so
// the key is as unique as sacreBLEU's tuple).
using NgramCounts = std::unordered_map<std::string, int64_t>;
NgramCounts word_ngrams(const std::vector<std::u32string>& tokens) {
  NgramCounts counts;
  for (size_t n = 1; n <= kBleuOrder; ++n)
    for (size_t i = 0; i + n <= tokens.size(); ++i) ++counts[join_utf8(tokens, i, i + n)];
  return counts;
}

// The non-empty references of segment i (sacreBLEU drops "" and requires one left).
std::vector<std::string_view> segment_refs(const std::vector<std::vector<std::string>>& refs, size_t i) {
  std::vector<std::string_view> out;
  for (const auto& stream : refs)
    if (!stream[i].empty()) out.push_back(stream[i]);
  AG_CHECK(!out.empty(), ValueError, "metrics: segment ", i,
           " has only empty references (sacreBLEU: \"Empty or `None` reference sentence "
           "found.\")");
  return out;
}

void check_streams(const char* what, size_t n_hyps, const std::vector<std::vector<std::string>>& refs) {
  AG_CHECK(!refs.empty(), ValueError, what, ": no reference stream");
  for (size_t k = 0; k < refs.size(); ++k)
    AG_CHECK(refs[k].size() == n_hyps, ValueError, what, ": reference stream ", k, " has ", refs[k].size(),
             " segments but there are ", n_hyps, " hypotheses");
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// ---- BLEU -------------------------------------------------------------------------

std::string tokenize_13a(std::string_view line) {
  const auto tokens = bleu_tokens(line, true);
  return join_utf8(tokens, 0, tokens.size());
}

std::string BleuScore::to_string() const {
  std::string s = "BLEU = " + fixed(score, 2) + " ";
  for (int n = 0; n < kBleuOrder; ++n) s += (n ? "/" : "") + fixed(precisions[n], 1);
  s += " (BP = " + fixed(bp, 3) + " ratio = " + fixed(ratio(), 3) + " hyp_len = " + std::to_string(sys_len) +
       " ref_len = " + std::to_string(ref_len) + ")";
  return s;
}

BleuScore bleu_from_stats(const std::array<int64_t, kBleuOrder>& counts, const std::array<int64_t, kBleuOrder>& totals,
                          int64_t sys_len, int64_t ref_len, const BleuOptions& options) {
  for (int n = 0; n < kBleuOrder; ++n)
    AG_CHECK(counts[n] >= 0 && counts[n] <= totals[n], ValueError, "bleu_from_stats: order ", n + 1, " has ", counts[n],
             " matches of ", totals[n], " n-grams");
  AG_CHECK(sys_len >= 0 && ref_len >= 0, ValueError, "bleu_from_stats: lengths ", sys_len, " and ", ref_len);
  BleuScore r;
  r.counts = counts;
  r.totals = totals;
  r.sys_len = sys_len;
  r.ref_len = ref_len;
  if (sys_len < ref_len)
    r.bp = sys_len > 0 ? std::exp(1.0 - double(ref_len) / double(sys_len)) : 0.0;
  else
    r.bp = 1.0;

  bool any = false;  // sacreBLEU returns 0 early when nothing matched (its issue #141)
  for (int64_t c : counts) any = any || c != 0;
  if (!any) return r;

  double value = options.smooth_value.value_or(options.smooth == Smooth::Floor  ? 0.1
                                               : options.smooth == Smooth::AddK ? 1.0
                                                                                : 0.0);
  double smooth_mteval = 1.0;
  int eff_order = kBleuOrder;
  for (int n = 1; n <= kBleuOrder; ++n) {
    double correct = double(counts[n - 1]), total = double(totals[n - 1]);
    if (options.smooth == Smooth::AddK && n > 1) correct += value, total += value;
    if (total == 0.0) break;
    if (options.effective_order) eff_order = n;
    double& p = r.precisions[n - 1];
    if (correct == 0.0) {
      // 'exp' (mteval-v13a): the k-th order without a match counts as 1 / 2^k matches.
      if (options.smooth == Smooth::Exp) {
        smooth_mteval *= 2.0;
        p = 100.0 / (smooth_mteval * total);
      } else if (options.smooth == Smooth::Floor) {
        p = 100.0 * value / total;
      }
    } else {
      p = 100.0 * correct / total;
    }
  }
  // utils.my_log: log(0) is floored at -9999999999, which exp() turns into a score of 0.
  double sum_log = 0.0;
  for (int n = 0; n < eff_order; ++n) sum_log += r.precisions[n] == 0.0 ? -9999999999.0 : std::log(r.precisions[n]);
  r.score = r.bp * std::exp(sum_log / eff_order);
  return r;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options) {
  check_streams("corpus_bleu", hyps.size(), refs);
  std::array<int64_t, kBleuOrder> counts{}, totals{};
  int64_t sys_len = 0, ref_len = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    // Reference n-grams merged by their largest count over the references.
    NgramCounts ref_ngrams;
    std::vector<int64_t> ref_lens;
    for (std::string_view ref : segment_refs(refs, i)) {
      const auto tokens = bleu_tokens(ref, options.tokenize);
      ref_lens.push_back(static_cast<int64_t>(tokens.size()));
      for (auto& [ngram, c] : word_ngrams(tokens)) {
        int64_t& m = ref_ngrams[ngram];
        m = std::max(m, c);
      }
    }
    const auto tokens = bleu_tokens(hyps[i], options.tokenize);
    const auto hyp_len = static_cast<int64_t>(tokens.size());
    // The closest reference length; on a tie the shorter one.
    int64_t closest = -1, closest_diff = -1;
    for (int64_t len : ref_lens) {
      const int64_t diff = std::abs(hyp_len - len);
      if (closest_diff == -1 || diff < closest_diff)
        closest_diff = diff, closest = len;
      else if (diff == closest_diff && len < closest)
        closest = len;
    }
    sys_len += hyp_len;
    ref_len += closest;
    for (auto& [ngram, c] : word_ngrams(tokens)) {
      size_t n = 1;
      for (char ch : ngram) n += ch == ' ';
      totals[n - 1] += c;
      if (auto it = ref_ngrams.find(ngram); it != ref_ngrams.end()) counts[n - 1] += std::min(c, it->second);
    }
  }
  return bleu_from_stats(counts, totals, sys_len, ref_len, options);
}

BleuScore corpus_bleu_single(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                             const BleuOptions& options) {
  return corpus_bleu(hyps, std::vector<std::vector<std::string>>{refs}, options);
}

// ---- chrF -------------------------------------------------------------------------

std::string ChrfScore::to_string() const {
  // sacreBLEU names it chrF{beta} with beta an int; a fractional beta keeps its digits.
  std::string b = beta == std::floor(beta) ? std::to_string(int64_t(beta)) : fixed(beta, 2);
  return "chrF" + b + " = " + fixed(score, 2);
}

double chrf_from_stats(const std::vector<std::array<int64_t, 3>>& stats, const ChrfOptions& options) {
  const double eps = 1e-16, factor = options.beta * options.beta;
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (const auto& [n_hyp, n_ref, n_match] : stats) {
    AG_CHECK(n_match >= 0 && n_match <= n_hyp && n_match <= n_ref, ValueError, "chrf_from_stats: {hyp, ref, match} = {",
             n_hyp, ", ", n_ref, ", ", n_match, "}");
    const double prec = n_hyp > 0 ? double(n_match) / double(n_hyp) : eps;
    const double rec = n_ref > 0 ? double(n_match) / double(n_ref) : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return stats.empty() ? 0.0 : 100 * score / double(stats.size());
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec == 0.0) return 0.0;
  return 100 * ((1 + factor) * avg_prec * avg_rec / ((factor * avg_prec) + avg_rec));
}

namespace {

// Character n-gram counts of orders 1..char_order of one segment (code points).
std::vector<std::unordered_map<std::u32string, int64_t>> char_ngrams(std::string_view line, const ChrfOptions& o) {
  std::u32string s = utf8_decode(line);
  if (!o.whitespace) {
    std::u32string kept;
    for (char32_t c : s)
      if (!is_python_space(c)) kept.push_back(c);
    s = std::move(kept);
  }
  std::vector<std::unordered_map<std::u32string, int64_t>> out(o.char_order);
  for (size_t n = 1; n <= static_cast<size_t>(o.char_order); ++n)
    for (size_t i = 0; i + n <= s.size(); ++i) ++out[n - 1][s.substr(i, n)];
  return out;
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
                      const ChrfOptions& options) {
  check_streams("corpus_chrf", hyps.size(), refs);
  AG_CHECK(options.char_order >= 1, ValueError, "corpus_chrf: char_order ", options.char_order);
  AG_CHECK(options.beta > 0, ValueError, "corpus_chrf: beta ", options.beta);
  ChrfScore r;
  r.beta = options.beta;
  r.stats.assign(options.char_order, {0, 0, 0});
  for (size_t i = 0; i < hyps.size(); ++i) {
    const auto hyp = char_ngrams(hyps[i], options);
    std::vector<std::array<int64_t, 3>> best;
    double best_f = -1.0;
    for (std::string_view ref_line : segment_refs(refs, i)) {
      const auto ref = char_ngrams(ref_line, options);
      std::vector<std::array<int64_t, 3>> stats(options.char_order);
      for (int n = 0; n < options.char_order; ++n) {
        int64_t hyp_count = 0, ref_count = 0, match = 0;
        for (const auto& [g, c] : hyp[n]) {
          hyp_count += c;
          if (auto it = ref[n].find(g); it != ref[n].end()) match += std::min(c, it->second);
        }
        for (const auto& [g, c] : ref[n]) ref_count += c;
        // sacreBLEU does not count hypothesis n-grams of an order the reference lacks.
        stats[n] = {ref[n].empty() ? 0 : hyp_count, ref_count, match};
      }
      const double f = chrf_from_stats(stats, options);
      if (f > best_f) best_f = f, best = std::move(stats);
    }
    for (int n = 0; n < options.char_order; ++n)
      for (int k = 0; k < 3; ++k) r.stats[n][k] += best[n][k];
  }
  r.score = chrf_from_stats(r.stats, options);
  return r;
}

ChrfScore corpus_chrf_single(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                             const ChrfOptions& options) {
  return corpus_chrf(hyps, std::vector<std::vector<std::string>>{refs}, options);
}

}  // namespace translate
