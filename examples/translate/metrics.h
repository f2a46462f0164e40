#pragma once
// Corpus BLEU and chrF as sacreBLEU 2.x computes them (sacrebleu.metrics.BLEU() and
// CHRF() with their defaults), so that scores printed here can be compared with papers
// and with `sacrebleu -m bleu chrf`.
//   strings     UTF-8. chrF counts code points, not bytes. An invalid byte is read as
//               U+FFFD (sacreBLEU would refuse the file; a metric should not throw on
//               a model's output).
//   whitespace  Python's str.split() set: \t\n\v\f\r, \x1c-\x1f, space, U+0085, U+00A0,
//               U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
//   references  refs[k][i] is the k-th reference of segment i (sacreBLEU's layout: one
//               stream per reference set). An empty reference string is dropped from its
//               segment; a segment left with none is a ValueError (as in sacreBLEU).
//   corpus      statistics are summed over the segments, then scored once. An empty
//               corpus scores 0 (sacreBLEU raises IndexError on it).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace translate {

// ---- BLEU -------------------------------------------------------------------------

// mteval-v13a tokenization as sacreBLEU's Tokenizer13a: drops "<skipped>", joins "-\n",
// turns newlines into spaces, unescapes &quot; &amp; &lt; &gt;, splits off ASCII
// punctuation except . , ' -, splits . and , unless they sit between digits, splits -
// after a digit. Returns the tokens joined by single spaces.
std::string tokenize_13a(std::string_view line);

enum class Smooth { None, Floor, AddK, Exp };

struct BleuOptions {
  Smooth smooth = Smooth::Exp;  // sacreBLEU's default for corpus and sentence BLEU
  // floor: 0.1, add-k: 1 when unset (sacreBLEU's SMOOTH_DEFAULTS); unused by none/exp.
  std::optional<double> smooth_value;
  bool effective_order = false;  // stop at the last order the hypotheses have n-grams of
  bool tokenize = true;          // 13a; false = split on whitespace only ("none")
};

inline constexpr int kBleuOrder = 4;

struct BleuScore {
  double score = 0.0;                           // 0..100
  std::array<double, kBleuOrder> precisions{};  // percent, n = 1..4 (smoothed)
  std::array<int64_t, kBleuOrder> counts{};     // clipped matches per order, summed
  std::array<int64_t, kBleuOrder> totals{};     // hypothesis n-grams per order, summed
  double bp = 0.0;                              // brevity penalty
  int64_t sys_len = 0;                          // hypothesis tokens
  int64_t ref_len = 0;                          // closest reference's tokens, summed
  double ratio() const { return ref_len ? double(sys_len) / double(ref_len) : 0.0; }
  // "BLEU = 34.12 60.0/40.0/30.0/20.0 (BP = 1.000 ratio = 1.000 hyp_len = 10 ref_len = 10)"
  std::string to_string() const;
};

// sacreBLEU's BLEU.compute_bleu: the score of summed statistics. ValueError on negative
// counts or counts above their totals.
BleuScore bleu_from_stats(const std::array<int64_t, kBleuOrder>& counts, const std::array<int64_t, kBleuOrder>& totals,
                          int64_t sys_len, int64_t ref_len, const BleuOptions& options = {});

// Corpus BLEU of hyps[i] against refs[k][i]. ValueError when a reference stream's length
// differs from the hypotheses', or when there is no reference stream.
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options = {});
// One reference per segment.
BleuScore corpus_bleu_single(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                             const BleuOptions& options = {});

// ---- chrF -------------------------------------------------------------------------

struct ChrfOptions {
  int char_order = 6;
  double beta = 2.0;
  bool whitespace = false;     // true keeps whitespace inside the character n-grams
  bool eps_smoothing = false;  // false: sacreBLEU's default "effective order" averaging
};

struct ChrfScore {
  double score = 0.0;  // 0..100
  // Summed per order n = 1..char_order: {hypothesis n-grams, reference n-grams, matches}.
  std::vector<std::array<int64_t, 3>> stats;
  double beta = 2.0;
  std::string to_string() const;  // "chrF2 = 48.53"
};

// The score of summed statistics (sacreBLEU's CHRF._compute_f_score). With
// eps_smoothing off, precision and recall are averaged over the orders where both the
// hypotheses and references have n-grams, and one F-beta is taken of the averages.
double chrf_from_stats(const std::vector<std::array<int64_t, 3>>& stats, const ChrfOptions& options = {});

// Corpus chrF of hyps[i] against refs[k][i]; with several references a segment keeps the
// statistics of the reference with the best segment F-score. Errors as corpus_bleu.
ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
                      const ChrfOptions& options = {});
ChrfScore corpus_chrf_single(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                             const ChrfOptions& options = {});

// UTF-8 to code points (invalid bytes -> U+FFFD) and Python's str.isspace().
std::u32string utf8_decode(std::string_view s);
bool is_python_space(char32_t c);

}  // namespace translate
