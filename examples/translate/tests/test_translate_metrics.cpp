// Corpus BLEU and chrF of the translate example against hand-computed values and the
// expected scores of sacreBLEU's own tests (test/test_bleu.py, test_sentence_bleu.py,
// test_chrf.py of sacreBLEU 2.x, copied as literals below).
#include <attograd/error.h>
#include <doctest/doctest.h>

#include <cmath>

#include "translate/metrics.h"

using namespace translate;
using Strings = std::vector<std::string>;
using Streams = std::vector<std::vector<std::string>>;

namespace {

BleuScore bleu1(const std::string& hyp, const std::string& ref, BleuOptions o = {}) {
  return corpus_bleu_single(Strings{hyp}, Strings{ref}, o);
}
double chrf1(const std::string& hyp, const std::string& ref, ChrfOptions o = {}) {
  return corpus_chrf_single(Strings{hyp}, Strings{ref}, o).score;
}

}  // namespace

TEST_CASE("tokenize_13a: punctuation, numbers, dashes, escapes") {
  // Period and comma split off unless a digit is on the side that is checked: "x." -> "x ."
  // (rule 2), ".y" -> ". y" (rule 3); "3.5" and "1,000" keep both sides digits.
  CHECK(tokenize_13a("Hello, world.") == "Hello , world .");
  CHECK(tokenize_13a("It costs $1,000.50 today.") == "It costs $ 1,000.50 today .");
  CHECK(tokenize_13a("a.b") == "a . b");
  // "3." at the end: rule 2 wants a non-digit before, rule 3 sees "." then the pad space.
  CHECK(tokenize_13a("version 3.") == "version 3 .");
  // Dash splits only after a digit; an apostrophe never splits.
  CHECK(tokenize_13a("5-3 well-known don't") == "5 - 3 well-known don't");
  // The ASCII punctuation class: every one of these becomes its own token.
  CHECK(tokenize_13a("a(b)c[d]e{f}g:h;i!j?k\"l/m@n#o$p%q&r*s+t<u=v>w^x_y`z|~\\") ==
        "a ( b ) c [ d ] e { f } g : h ; i ! j ? k \" l / m @ n # o $ p % q & r * s + t "
        "< u = v > w ^ x _ y ` z | ~ \\");
  // Entities are unescaped (each once, in the order quot amp lt gt), then split.
  CHECK(tokenize_13a("&quot;Tom &amp; Jerry&quot; &lt;b&gt;") == "\" Tom & Jerry \" < b >");
  CHECK(tokenize_13a("&amp;quot;") == "& quot ;");  // &amp; -> & after &quot; was looked for
  // <skipped> vanishes, "-\n" joins a word, other newlines are spaces, runs of blanks
  // (Unicode ones too: U+00A0, U+3000) collapse.
  CHECK(tokenize_13a("hyph-\nen <skipped>x\ny") == "hyphen x y");
  CHECK(tokenize_13a("  a\t\xC2\xA0"
                     "b\xE3\x80\x80"
                     "c  ") == "a b c");
  // Non-ASCII letters are not punctuation; a period after one splits (rule 2: [^0-9]).
  CHECK(tokenize_13a("caf\xC3\xA9. na\xC3\xAFve,") == "caf\xC3\xA9 . na\xC3\xAFve ,");
  CHECK(tokenize_13a("") == "");
  CHECK(tokenize_13a("%s files, %d dirs") == "% s files , % d dirs");
}

TEST_CASE("BLEU: perfect match is 100 and to_string matches sacreBLEU's line") {
  BleuScore b = bleu1("the cat sat on the mat", "the cat sat on the mat");
  CHECK(b.score == doctest::Approx(100.0));
  CHECK(b.bp == 1.0);
  CHECK(b.sys_len == 6);
  CHECK(b.ref_len == 6);
  CHECK(b.to_string() == "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");
}

TEST_CASE("BLEU: hand-computed n-gram precisions") {
  // hyp "the cat sat on a mat" vs ref "the cat sat on the mat":
  //   1-grams 5/6 (all but "a"), 2-grams 3/5 (the cat, cat sat, sat on),
  //   3-grams 2/4 (the cat sat, cat sat on), 4-grams 1/3 (the cat sat on)
  //   BLEU = (5/6 * 3/5 * 2/4 * 1/3)^(1/4) = (1/12)^(1/4) = 53.7285...
  BleuScore b = bleu1("the cat sat on a mat", "the cat sat on the mat");
  CHECK(b.counts == std::array<int64_t, 4>{5, 3, 2, 1});
  CHECK(b.totals == std::array<int64_t, 4>{6, 5, 4, 3});
  CHECK(b.precisions[0] == doctest::Approx(100.0 * 5 / 6));
  CHECK(b.precisions[3] == doctest::Approx(100.0 / 3));
  CHECK(b.score == doctest::Approx(100.0 * std::pow(1.0 / 12, 0.25)).epsilon(1e-12));
  CHECK(b.to_string() == "BLEU = 53.73 83.3/60.0/50.0/33.3 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");
}

TEST_CASE("BLEU: statistics are summed over the corpus, not averaged per sentence") {
  // seg 1 "a b c d" = ref: 4/4 3/3 2/2 1/1.  seg 2 "e f g h" vs "e f x h": 3/4 1/3 0/2 0/1.
  // Summed: 7/8 4/6 2/4 1/2 -> (7/8 * 2/3 * 1/2 * 1/2)^(1/4) = (7/48)^(1/4) = 61.797...
  BleuScore b = corpus_bleu_single(Strings{"a b c d", "e f g h"}, Strings{"a b c d", "e f x h"});
  CHECK(b.counts == std::array<int64_t, 4>{7, 4, 2, 1});
  CHECK(b.totals == std::array<int64_t, 4>{8, 6, 4, 2});
  CHECK(b.score == doctest::Approx(100.0 * std::pow(7.0 / 48, 0.25)).epsilon(1e-12));
}

TEST_CASE("BLEU: no 4-gram match, exp smoothing (default) against none") {
  // hyp "a b c d e" vs ref "a b c x e": 4/5, 2/4, 1/3, 0/2.
  // exp: the first order without a match gets 1/2 match: p4 = 100 / (2 * 2) = 25 %
  //   BLEU = (0.8 * 0.5 * 1/3 * 0.25)^(1/4) = (1/30)^(1/4) = 42.7287...
  BleuScore e = bleu1("a b c d e", "a b c x e");
  CHECK(e.precisions[3] == doctest::Approx(25.0));
  CHECK(e.score == doctest::Approx(100.0 * std::pow(1.0 / 30, 0.25)).epsilon(1e-12));
  // none: log(0) is floored at -9999999999, so the score is exactly 0 (no NaN, no -inf).
  BleuOptions none;
  none.smooth = Smooth::None;
  BleuScore n = bleu1("a b c d e", "a b c x e", none);
  CHECK(n.score == 0.0);
  CHECK(n.precisions[3] == 0.0);
  CHECK(n.precisions[0] == doctest::Approx(80.0));
}

TEST_CASE("BLEU: segments shorter than 4 tokens score 0 without effective order") {
  // No 4-gram exists, the loop stops at order 4 with precision 0 -> 0, as sacreBLEU does at
  // corpus level; with effective_order the mean runs over orders 1..3 -> 100.
  CHECK(bleu1("a b c", "a b c").score == 0.0);
  BleuOptions eff;
  eff.effective_order = true;
  CHECK(bleu1("a b c", "a b c", eff).score == doctest::Approx(100.0));
}

TEST_CASE("BLEU: brevity penalty") {
  // 5 tokens against 10, every n-gram matches: BP = exp(1 - 10/5) = e^-1.
  BleuScore s = bleu1("a b c d e", "a b c d e f g h i j");
  CHECK(s.bp == doctest::Approx(std::exp(-1.0)));
  CHECK(s.score == doctest::Approx(100.0 * std::exp(-1.0)));
  CHECK(s.ratio() == 0.5);
  // Longer hypothesis: BP = 1; 5/6 4/5 3/4 2/3 -> (1/3)^(1/4).
  BleuScore l = bleu1("a b c d e f", "a b c d e");
  CHECK(l.bp == 1.0);
  CHECK(l.score == doctest::Approx(100.0 * std::pow(1.0 / 3, 0.25)));
  CHECK(l.ratio() == doctest::Approx(1.2));
}

TEST_CASE("BLEU: several references merge counts and take the closest length") {
  // hyp has 5 tokens, references 4 and 6: equally close, the shorter (4) is taken.
  // "the" occurs twice in the hypothesis, once in each reference -> clipped to 1.
  Streams refs{{"the a b c"}, {"x the y z w v"}};
  BleuScore b = corpus_bleu(Strings{"the the a b c"}, refs);
  CHECK(b.ref_len == 4);
  CHECK(b.sys_len == 5);
  CHECK(b.counts[0] == 4);  // the (clipped to 1), a, b, c
  // A segment whose second reference is "" uses only the first.
  Streams with_empty{{"a b c d"}, {""}};
  CHECK(corpus_bleu(Strings{"a b c d"}, with_empty).score == doctest::Approx(100.0));
}

TEST_CASE("BLEU: empty hypothesis, empty corpus, bad input") {
  BleuScore e = bleu1("", "a b c");
  CHECK(e.score == 0.0);
  CHECK(e.bp == 0.0);
  CHECK(e.sys_len == 0);
  CHECK(e.ref_len == 3);
  BleuScore empty = corpus_bleu_single(Strings{}, Strings{});
  CHECK(empty.score == 0.0);
  CHECK(empty.sys_len == 0);
  CHECK_THROWS_AS(bleu1("a", ""), ag::ValueError);  // sacreBLEU: empty reference
  CHECK_THROWS_AS(corpus_bleu_single(Strings{"a", "b"}, Strings{"a"}), ag::ValueError);
  CHECK_THROWS_AS(corpus_bleu(Strings{"a"}, Streams{}), ag::ValueError);
  CHECK_THROWS_AS(bleu_from_stats({3, 0, 0, 0}, {2, 0, 0, 0}, 2, 2), ag::ValueError);
  // Invalid UTF-8 is read as U+FFFD, one per bad byte, and scored.
  CHECK(tokenize_13a("a\xFF\xC3") == "a\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("BLEU: sacreBLEU test_bleu.py cases") {
  // test_corpus_bleu_cases: the README example, two reference streams.
  Streams refs{{"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
               {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
  Strings hyps{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  CHECK(corpus_bleu(hyps, refs).score == doctest::Approx(48.530827).epsilon(1e-8));
  BleuOptions none;
  none.smooth = Smooth::None;
  CHECK(corpus_bleu(hyps, refs, none).score == doctest::Approx(48.530827).epsilon(1e-8));
  BleuOptions raw;
  raw.tokenize = false;
  CHECK(corpus_bleu(hyps, refs, raw).score == doctest::Approx(49.1919566).epsilon(1e-8));
  CHECK(corpus_bleu(Strings{"", "", ""}, refs).score == 0.0);

  // test_case_statistics and test_offset (raw_corpus_bleu: tokenize none, floor, effective
  // order): counts [4,2,1,0] of totals [6,5,4,3]; floor 0.1 gives 0.1555722182.
  BleuOptions floor;
  floor.tokenize = false;
  floor.smooth = Smooth::Floor;
  floor.effective_order = true;
  BleuScore s = bleu1("am I am a character sequence", "I am a symbol string sequence a a", floor);
  CHECK(s.counts == std::array<int64_t, 4>{4, 2, 1, 0});
  CHECK(s.totals == std::array<int64_t, 4>{6, 5, 4, 3});
  CHECK(s.score / 100 == doctest::Approx(0.1555722182).epsilon(1e-8));
  floor.smooth_value = 0.0;
  CHECK(bleu1("am I am a character sequence", "I am a symbol string sequence a a", floor).score == 0.0);

  // test_case_effective_order with floor 0.01.
  floor.smooth_value = 0.01;
  CHECK(bleu1("test", "a test", floor).score / 100 == doctest::Approx(0.3678794411714425).epsilon(1e-8));
  CHECK(bleu1("a test", "a test", floor).score / 100 == doctest::Approx(1.0));
  CHECK(bleu1("a little test", "a test", floor).score / 100 == doctest::Approx(0.03218297948685433).epsilon(1e-8));

  // test_case_scoring: compute_bleu([9,7,5,3], [10,8,6,4], 11, 11) with no smoothing.
  CHECK(bleu_from_stats({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11, none).score / 100 ==
        doctest::Approx(0.8375922397).epsilon(1e-8));
}

TEST_CASE("BLEU: sacreBLEU test_sentence_bleu.py cases (UTF-8, smoothing methods)") {
  // Example of sacreBLEU issue #98, effective_order on; expected scores to 1e-3.
  const std::string ref =
      "produc\xC5\xA3ia de zah\xC4\x83r brut se exprim\xC4\x83 \xC3\xAEn "
      "zah\xC4\x83r alb;";
  const std::string sys =
      "Produc\xC8\x9Bia de zah\xC4\x83r prim\xC4\x83 va fi exprimat\xC4\x83 "
      "\xC3\xAEn ceea ce prive\xC8\x99te zah\xC4\x83rul alb;";
  struct Case {
    Smooth smooth;
    std::optional<double> value;
    bool tokenize;
    double expected;
  };
  const Case cases[] = {
      {Smooth::Exp, {}, true, 8.493},      {Smooth::None, {}, true, 0.0},     {Smooth::Floor, {}, true, 4.51688},
      {Smooth::Floor, 0.1, true, 4.51688}, {Smooth::Floor, 0.5, true, 10.10}, {Smooth::AddK, {}, true, 14.882},
      {Smooth::AddK, 1.0, true, 14.882},   {Smooth::AddK, 2.0, true, 21.389}, {Smooth::Exp, {}, false, 7.347}};
  for (const Case& c : cases) {
    BleuOptions o;
    o.smooth = c.smooth;
    o.smooth_value = c.value;
    o.tokenize = c.tokenize;
    o.effective_order = true;
    CHECK(std::abs(bleu1(sys, ref, o).score - c.expected) < 1e-3);
  }
  // Example of issue #141: nothing matches, every smoothing gives exactly 0.
  for (Smooth m : {Smooth::Exp, Smooth::None, Smooth::Floor, Smooth::AddK}) {
    BleuOptions o;
    o.smooth = m;
    o.effective_order = true;
    CHECK(bleu1("this is a cat", "okay thanks", o).score == 0.0);
  }
}

TEST_CASE("chrF: hand-computed values with the defaults (order 6, beta 2)") {
  // "ab" vs "ab": orders 1-2 precision = recall = 1, orders 3-6 have no n-grams and are
  // left out of the average -> 100.
  CHECK(chrf1("ab", "ab") == doctest::Approx(100.0));
  // "aa" vs "ab": order 1: hyp {a:2}, ref {a,b}, 1 match -> P = R = 1/2; order 2: "aa" vs
  // "ab" -> P = R = 0. Averages P = R = 1/4 -> F = 1/4 for any beta -> 25.
  CHECK(chrf1("aa", "ab") == doctest::Approx(25.0));
  // "abc" vs "abcd": P = 1 on orders 1-3 (3 orders with both sides non-empty); R = 3/4,
  // 2/3, 1/2 -> mean R = 23/36. F2 = 5 P R / (4 P + R) = 5 (23/36) / (4 + 23/36) = 115/167.
  CHECK(chrf1("abc", "abcd") == doctest::Approx(100.0 * 115 / 167).epsilon(1e-12));
  // Whitespace is removed before counting: "a b c" equals "abc".
  CHECK(chrf1("a b c", "abc") == doctest::Approx(100.0));
  CHECK(chrf1("", "abc") == 0.0);
  CHECK(corpus_chrf_single(Strings{}, Strings{}).score == 0.0);
  CHECK(corpus_chrf_single(Strings{"ab"}, Strings{"ab"}).to_string() == "chrF2 = 100.00");
}

TEST_CASE("chrF: statistics are summed over the corpus before averaging") {
  // seg 1 "ab"/"ab": order 1 {2,2,2}, order 2 {1,1,1}. seg 2 "cd"/"ce": {2,2,1}, {1,1,0}.
  // Summed: order 1 {4,4,3} -> P = R = 3/4, order 2 {2,2,1} -> 1/2. Mean 5/8 -> 62.5.
  ChrfScore c = corpus_chrf_single(Strings{"ab", "cd"}, Strings{"ab", "ce"});
  CHECK(c.stats[0] == std::array<int64_t, 3>{4, 4, 3});
  CHECK(c.stats[1] == std::array<int64_t, 3>{2, 2, 1});
  CHECK(c.stats[2] == std::array<int64_t, 3>{0, 0, 0});
  CHECK(c.score == doctest::Approx(62.5));

  // A reference without n-grams of an order makes sacreBLEU drop the hypothesis' n-grams of
  // that order too. "ab"/"a": order 1 {2,1,1}, order 2 {0,0,0} (not {1,0,0}). With "cd"/"cd"
  // ({2,2,2}, {1,1,1}) the sums are {4,3,3} (P 3/4, R 1) and {1,1,1} (P = R = 1):
  // mean P 7/8, R 1 -> F2 = 5 (7/8) / (4 (7/8) + 1) = 35/36. Counting the 2-gram "ab"
  // would give {2,1,1} on order 2 and F2 = 25/28.
  ChrfScore d = corpus_chrf_single(Strings{"ab", "cd"}, Strings{"a", "cd"});
  CHECK(d.stats[1] == std::array<int64_t, 3>{1, 1, 1});
  CHECK(d.score == doctest::Approx(100.0 * 35 / 36).epsilon(1e-12));
}

TEST_CASE("chrF: counts code points, not bytes") {
  // "é" is 2 bytes, "日本" 6: as characters "éa" vs "éb" is 1/2 on order 1 and 0 on order 2
  // -> P = R = 1/4 -> 25, as "aa" vs "ab". Counted in bytes it would differ.
  CHECK(chrf1("\xC3\xA9"
              "a",
              "\xC3\xA9"
              "b") == doctest::Approx(25.0));
  ChrfScore j = corpus_chrf_single(Strings{"\xE6\x97\xA5\xE6\x9C\xAC"}, Strings{"\xE6\x97\xA5\xE6\x9C\xAC"});
  CHECK(j.stats[0] == std::array<int64_t, 3>{2, 2, 2});
  CHECK(j.stats[1] == std::array<int64_t, 3>{1, 1, 1});
  CHECK(j.stats[2] == std::array<int64_t, 3>{0, 0, 0});
  // U+3000 (ideographic space) is whitespace to Python and is removed.
  CHECK(chrf1("\xE6\x97\xA5\xE3\x80\x80\xE6\x9C\xAC", "\xE6\x97\xA5\xE6\x9C\xAC") == doctest::Approx(100.0));
}

TEST_CASE("chrF: sacreBLEU test_chrf.py cases") {
  ChrfOptions b3;  // test_chrf_eff_order: beta 3, the default averaging
  b3.beta = 3;
  CHECK(chrf1("a", "a", b3) == doctest::Approx(100.0));
  CHECK(chrf1("", "reference", b3) == 0.0);
  CHECK(chrf1("a b c", "a b c", b3) == doctest::Approx(100.0));
  CHECK(chrf1("a b c", "abc", b3) == doctest::Approx(100.0));
  CHECK(chrf1("", "c", b3) == 0.0);
  CHECK(corpus_chrf_single(Strings{"a", "b"}, Strings{"a", "c"}, b3).score == doctest::Approx(50.0));
  CHECK(chrf1("aa", "ab", b3) == doctest::Approx(25.0));

  const std::string risk_h =
      "risk assessment must be made of those who are qualified and expertise in the sector - "
      "these are the scientists .";
  const std::string risk_r =
      "risk assessment has to be undertaken by those who are qualified and expert in that area "
      "- that is the scientists .";
  const std::string die_h = "Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.";
  const std::string das_r = "Das Verh\xC3\xA4ltnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.";
  ChrfOptions eps = b3;  // test_chrf: eps_smoothing on; expected to 1e-4
  eps.eps_smoothing = true;
  CHECK(std::abs(chrf1(" " + risk_h, risk_r, eps) - 63.361730) < 1e-4);
  CHECK(std::abs(chrf1(" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  "
                       "freundlich. ",
                       das_r, eps) -
                 64.1302698) < 1e-4);
  CHECK(chrf1("aa", "ab", eps) == doctest::Approx(8.3333).epsilon(1e-4));
  CHECK(chrf1("a", "a", eps) == doctest::Approx(16.6667).epsilon(1e-4));
  CHECK(chrf1("a b c", "abc", eps) == doctest::Approx(50.0));
  CHECK(chrf1("abcdefg", "hijklmnop", eps) == doctest::Approx(0.0).epsilon(1e-12));
  ChrfOptions ws = b3;  // test_chrf_keep_whitespace
  ws.whitespace = true;
  CHECK(std::abs(chrf1(die_h, das_r, ws) - 67.3481606) < 1e-4);
  CHECK(std::abs(chrf1(risk_h, risk_r, ws) - 65.2414427) < 1e-4);

  // test_chrf_sentence_level (Czech, beta 2, eps_smoothing).
  ChrfOptions cz;
  cz.eps_smoothing = true;
  CHECK(std::abs(chrf1("Lapali po dechu, jejich \xC5\xBEivoty skon\xC4\x8Dily d\xC5\x99\xC3\xADv, "
                       "ne\xC5\xBE skute\xC4\x8Dn\xC4\x9B za\xC4\x8D"
                       "aly.",
                       "Lapali po dechu a pak jejich \xC5\xBEivot skon\xC4\x8Dil - d\xC5\x99\xC3\xADv, "
                       "ne\xC5\xBE skute\xC4\x8Dn\xC4\x9B mohl za\xC4\x8D\xC3\xADt, "
                       "p\xC5\x99ipomn\xC4\x9Bli.",
                       cz) -
                 57.15704367) < 1e-4);
}

TEST_CASE("chrF: several references keep the best segment") {
  // "ab" against "xy" and "ab": the second reference gives 100.
  Streams refs{{"xy"}, {"ab"}};
  CHECK(corpus_chrf(Strings{"ab"}, refs).score == doctest::Approx(100.0));
  CHECK_THROWS_AS(corpus_chrf_single(Strings{"a"}, Strings{""}), ag::ValueError);
  CHECK_THROWS_AS(corpus_chrf_single(Strings{"a"}, Strings{"a", "b"}), ag::ValueError);
}
