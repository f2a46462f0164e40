// The translate example's held-out split (split.h): the source normalizer, character
// 3-gram similarity with its prefix-filtered and inverted-index searches (checked against
// brute force), the clusters (plural pairs, directive and case variants, near-duplicates),
// and a synthetic catalog of templated siblings split with no test source near train.
#include <doctest/doctest.h>

#include <attograd/error.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "translate/split.h"

using namespace translate;

TEST_CASE("normalize_source: case, punctuation, directives, digits, quoted names") {
  CHECK(normalize_source("Cannot open '%s'.") == "cannot open 0");
  CHECK(normalize_source("cannot open %s") == "cannot open 0");
  CHECK(normalize_source("(roughly %d steps)") == "roughly 0 steps");
  CHECK(normalize_source("(roughly %s steps)") == normalize_source("(roughly %d steps)"));
  CHECK(normalize_source("(Roughly 12 steps)!") == "roughly 0 steps");
  // printf directives of every shape are one slot; "%%" is a percent sign, not a slot.
  CHECK(normalize_source("%1$s: %2$lu bytes") == "0 0 bytes");
  CHECK(normalize_source("%-10s|%zu|%.*f|%lld|%5.2f") == "0 0 0 0 0");
  CHECK(normalize_source("100%% done") == "0 done");
  CHECK(normalize_source("at 50%") == "at 0");
  // Quoted names, in the quotes catalogs use; an apostrophe inside a word is no quote.
  CHECK(normalize_source("unknown option \"--foo\"") == "unknown option 0");
  CHECK(normalize_source("unknown option `--foo'") == "unknown option 0");
  CHECK(normalize_source("unknown option \xe2\x80\x98--foo\xe2\x80\x99") == "unknown option 0");
  CHECK(normalize_source("unknown option \xe2\x80\x9c--foo\xe2\x80\x9d") == "unknown option 0");
  CHECK(normalize_source("unknown option \xc2\xab--foo\xc2\xbb") == "unknown option 0");
  CHECK(normalize_source("can't open, won't close") == "can t open won t close");
  CHECK(normalize_source("it's 'x' and 'y'") == "it s 0 and 0");
  // Whitespace and punctuation runs collapse; other UTF-8 passes; the ellipsis is punctuation.
  CHECK(normalize_source("  Saving\xe2\x80\xa6  Caf\xc3\xa9 -- OK?  ") == "saving caf\xc3\xa9 ok");
  CHECK(normalize_source("_Open") == "open");
  CHECK(normalize_source("").empty());
  CHECK(normalize_source("...").empty());
}

TEST_CASE("char_similarity: 3-gram Jaccard of code points") {
  CHECK(char_similarity("abc", "abc") == 1.0);
  // " ab", "abc", "bc " against " ab", "abd", "bd ": 1 shared of 5.
  CHECK(char_similarity("abc", "abd") == doctest::Approx(1.0 / 5.0));
  CHECK(char_similarity("abc", "xyz") == 0.0);
  // Code points, not bytes: "é" is one character.
  CHECK(char_similarity("caf\xc3\xa9", "cafe") == doctest::Approx(2.0 / 6.0));
  CHECK(char_similarity("", "") == 1.0);
}

namespace {

std::vector<std::string> random_texts(int n, uint32_t seed) {
  const std::vector<std::string> words = {"file",   "open",    "cannot",   "read",      "write", "the",
                                          "of",     "%s",      "%d",       "directory", "error", "invalid",
                                          "option", "missing", "argument", "to"};
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < len; ++k) s += (k ? " " : "") + words[rng() % words.size()];
    if (rng() % 3 == 0) s += rng() % 2 ? "." : "s";
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("similar_pairs (prefix filter) and nearest_neighbours (inverted index) equal brute force") {
  const auto texts = random_texts(400, 7);
  for (double t : {0.5, 0.8, 0.9, 1.0}) {
    std::vector<std::pair<int64_t, int64_t>> brute;
    for (int64_t i = 0; i < 400; ++i)
      for (int64_t j = i + 1; j < 400; ++j)
        if (char_similarity(texts[size_t(i)], texts[size_t(j)]) >= t - 1e-12) brute.emplace_back(i, j);
    const auto fast = similar_pairs(texts, t);
    CHECK(fast.size() == brute.size());
    CHECK(fast == brute);
  }
  CHECK_THROWS_AS(similar_pairs(texts, 0.0), ag::ValueError);

  const std::vector<std::string> queries(texts.begin(), texts.begin() + 50), pool(texts.begin() + 50, texts.end());
  const auto nn = nearest_neighbours(queries, pool);
  REQUIRE(nn.size() == queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q) {
    double best = 0;
    int64_t at = -1;
    for (std::size_t j = 0; j < pool.size(); ++j)
      if (const double s = char_similarity(queries[q], pool[j]); s > best) best = s, at = static_cast<int64_t>(j);
    CHECK(nn[q].index == at);
    CHECK(nn[q].similarity == doctest::Approx(best));
  }
  // A query sharing no 3-gram with the pool has no neighbour.
  CHECK(nearest_neighbours({"qqqq"}, {"file", "open"})[0].index == -1);
}

TEST_CASE("cluster_pairs: plural pairs, directive, case and punctuation variants together") {
  const std::vector<Pair> pairs = {
      {"(roughly %d step)", "(environ %d étape)", "p", false, "(roughly %d step)"},
      {"(roughly %d steps)", "(environ %d étapes)", "p", true, "(roughly %d step)"},
      {"Deleted %zu file", "%zu fichier supprimé", "p", false, "Deleted %zu file"},
      {"Deleted %zu files in the given directory tree", "%zu fichiers supprimés dans l'arborescence", "p", true,
       "Deleted %zu file"},                                // plural far from its singular: joined by the entry
      {"%d steps remaining", "%d étapes restantes", "q"},  // vs "%s steps remaining"
      {"%s steps remaining", "%s étapes restantes", "q"},
      {"Cannot open file", "Impossible d'ouvrir le fichier", "q"},
      {"cannot open file.", "impossible d'ouvrir le fichier.", "q"},
      {"CANNOT OPEN FILE!", "IMPOSSIBLE D'OUVRIR LE FICHIER !", "q"},
      {"unknown option '--foo'", "option « --foo » inconnue", "q"},
      {"unknown option \"--bar\"", "option « --bar » inconnue", "q"},
      // Near-duplicates (3-gram Jaccard 0.93 once normalized):
      {"Print the version number of the program and exit without reading any input", "Affiche la version", "q"},
      {"Print the version number of the programs and exit without reading any input", "Affiche les versions", "q"},
      {"Out of memory", "Mémoire épuisée", "q"},
      {"Permission denied", "Permission refusée", "q"},
  };
  const auto c = cluster_pairs(pairs, 0.9);
  REQUIRE(c.size() == pairs.size());
  CHECK(c[0] == c[1]);
  CHECK(c[2] == c[3]);
  CHECK(c[4] == c[5]);
  CHECK(c[6] == c[7]);
  CHECK(c[6] == c[8]);
  CHECK(c[9] == c[10]);
  CHECK(c[11] == c[12]);
  CHECK(char_similarity(normalize_source(pairs[11].source), normalize_source(pairs[12].source)) < 1.0);
  const std::set<int64_t> distinct(c.begin(), c.end());
  CHECK(distinct.size() == 8);
  CHECK(c[13] != c[14]);
  CHECK(c[0] == 0);  // ids in order of first appearance
}

TEST_CASE("split_by_cluster: a templated catalog, no test source near a training source") {
  // Messages and their siblings: a case / punctuation variant, a directive variant, a
  // number variant and a plural of one entry; the split must keep each family together.
  const auto bases = random_texts(1500, 11);
  std::vector<Pair> pairs;
  std::set<std::string> seen;
  auto add = [&](const std::string& s, bool plural, const std::string& entry) {
    if (seen.insert(s).second) pairs.emplace_back(s, "fr " + s, "p", plural, entry);
  };
  for (std::size_t i = 0; i < bases.size(); ++i) {
    const std::string& b = bases[i];
    add(b, false, b);
    if (i % 3 == 0) add(b + " (" + std::to_string(i % 7) + ")", false, "");
    if (i % 4 == 0) add("Error: " + b + "!", false, "");
    if (i % 5 == 0) add(b + " in %d items", false, b + " in %d item");
    if (i % 5 == 0) add(b + " in %d item", true, b + " in %d item");
  }
  SplitStats st;
  const SplitOptions fractions{0.15, 0.1};
  const Splits s = split_by_cluster(pairs, fractions, 0.9, &st);
  CHECK(s.train.size() + s.validation.size() + s.test.size() == pairs.size());
  CHECK(st.messages[0] == static_cast<int64_t>(s.train.size()));
  CHECK(st.messages[2] == static_cast<int64_t>(s.test.size()));
  CHECK(s.test.size() > 100);
  CHECK(st.clusters[2] <= st.messages[2]);
  // By brute force: no test source has a training source at 0.9 or more, in either form.
  GramTable table;
  auto grams = [&](const std::vector<Pair>& part, bool normalized) {
    std::vector<std::vector<uint32_t>> g;
    for (const Pair& p : part) g.push_back(table.grams(normalized ? normalize_source(p.source) : p.source));
    return g;
  };
  const auto test_raw = grams(s.test, false), train_raw = grams(s.train, false);
  const auto test_norm = grams(s.test, true), train_norm = grams(s.train, true);
  double worst = 0, worst_normalized = 0;
  for (std::size_t i = 0; i < s.test.size(); ++i)
    for (std::size_t j = 0; j < s.train.size(); ++j) {
      worst = std::max(worst, jaccard(test_raw[i], train_raw[j]));
      worst_normalized = std::max(worst_normalized, jaccard(test_norm[i], train_norm[j]));
    }
  CHECK(worst < 0.9);
  CHECK(worst_normalized < 0.9);
  // Nor one word from a training source (normalized, the shorter of two words or more), and
  // every cluster held out has at most max_held_out_cluster messages.
  int64_t one_word = 0;
  for (const Pair& t : s.test)
    for (const Pair& r : s.train) {
      const std::string a = normalize_source(t.source), b = normalize_source(r.source);
      const auto words = [](const std::string& x) { return std::count(x.begin(), x.end(), ' ') + (x.empty() ? 0 : 1); };
      one_word += word_distance(a, b) == 1 && std::min(words(a), words(b)) >= 2;
    }
  CHECK(one_word == 0);
  CHECK(st.test_nearest_words[0] == 0);
  CHECK(st.test_nearest_words[1] == 0);
  CHECK(st.kept_in_train_for_size > 0);  // 16 words make long one-word chains
  CHECK(st.max_held_out_cluster == SplitOptions{}.max_held_out_cluster);
  const auto cluster = cluster_pairs(pairs, 0.9);
  std::map<int64_t, int64_t> cluster_size, test_cluster;
  for (int64_t c : cluster) ++cluster_size[c];
  std::map<std::string, int64_t> index;
  for (std::size_t i = 0; i < pairs.size(); ++i) index[pairs[i].source] = static_cast<int64_t>(i);
  for (const Pair& t : s.test) CHECK(cluster_size[cluster[static_cast<std::size_t>(index[t.source])]] <= 50);
  CHECK(st.max_test_train_similarity == doctest::Approx(worst));
  CHECK(st.test_near_train == 0);
  CHECK(st.test_with_train_normalized_twin == 0);
  int64_t in_histogram = 0;
  for (int64_t k : st.test_nearest_histogram) in_histogram += k;
  CHECK(in_histogram == st.messages[2]);
  CHECK(st.test_nearest_histogram[9] == 0);
  // A plural's singular is on its side.
  std::set<std::string> test_sources;
  for (const Pair& t : s.test) test_sources.insert(t.source);
  for (const Pair& t : s.test)
    if (t.plural) CHECK(test_sources.count(t.entry) == 1);
  // The exact-message split of before leaks: the same catalog split by split_pairs has
  // test sources whose normalized twin is in train.
  const Splits old = split_pairs(pairs, fractions);
  std::set<std::string> train_keys;
  for (const Pair& r : old.train) train_keys.insert(normalize_source(r.source));
  int64_t leaked = 0;
  for (const Pair& t : old.test) leaked += static_cast<int64_t>(train_keys.count(normalize_source(t.source)));
  CHECK(leaked > 0);
  // Deterministic: the same split again.
  const Splits again = split_by_cluster(pairs, fractions, 0.9);
  REQUIRE(again.test.size() == s.test.size());
  for (std::size_t i = 0; i < s.test.size(); ++i) CHECK(again.test[i].source == s.test[i].source);
}

TEST_CASE("word_distance and word_neighbour_pairs: one word replaced, inserted or removed") {
  CHECK(word_distance("cannot open 0", "cannot open 0") == 0);
  CHECK(word_distance("restart 0", "start 0") == 1);
  CHECK(word_distance("unary operator expected", "binary operator expected") == 1);
  CHECK(word_distance("cannot open 0", "cannot open the 0") == 1);
  CHECK(word_distance("a b c", "b a c") == 2);
  CHECK(word_distance("", "a  b") == 2);  // runs of spaces are one separator
  const std::vector<std::string> texts = {"restart 0",     "start 0",       "open",        "close",
                                          "cannot open 0", "cannot read 0", "cannot open", "a b c",
                                          "b a c",         "restart 0",     "x y z w",     "x z w"};
  const auto pairs = word_neighbour_pairs(texts);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 1}, {1, 9}, {4, 5}, {4, 6}, {10, 11}};
  CHECK(pairs == expected);  // not "open" / "close" (one word each), "a b c" / "b a c", or equal texts
  CHECK(word_neighbour_pairs(texts, 1).size() == expected.size() + 2);  // "open" / "close", "open" / "cannot open"
  CHECK_THROWS_WITH_AS(word_neighbour_pairs(texts, 0), doctest::Contains("min_words 0"), ag::ValueError);

  // Against brute force on random texts of 16 words.
  const auto random = random_texts(300, 5);
  std::vector<std::string> normalized;
  for (const auto& t : random) normalized.push_back(normalize_source(t));
  auto word_count = [](const std::string& x) {
    int64_t n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) n += x[i] != ' ' && (i == 0 || x[i - 1] == ' ');
    return n;
  };
  std::vector<std::pair<int64_t, int64_t>> brute;
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t j = i + 1; j < 300; ++j) {
      const auto &a = normalized[size_t(i)], &b = normalized[size_t(j)];
      if (word_distance(a, b) == 1 && std::min(word_count(a), word_count(b)) >= 2) brute.emplace_back(i, j);
    }
  CHECK(brute.size() > 20);
  CHECK(word_neighbour_pairs(normalized) == brute);

  // nearest_word_distances: the smallest d with both texts over d words, capped.
  const std::vector<std::string> queries(normalized.begin(), normalized.begin() + 40),
      pool(normalized.begin() + 40, normalized.end());
  for (int64_t cap : {1, 3, 4}) {
    const auto fast = nearest_word_distances(queries, pool, cap);
    REQUIRE(fast.size() == queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q) {
      int64_t best = cap;
      for (const auto& p : pool) {
        const int64_t d = word_distance(queries[q], p);
        if (d < best && std::min(word_count(queries[q]), word_count(p)) > d) best = d;
      }
      CHECK(fast[q] == best);
    }
  }
  CHECK(nearest_word_distances({"a b c"}, {"a b d", "a b c"}, 4)[0] == 0);
  CHECK(nearest_word_distances({"open"}, {"close"}, 4)[0] == 4);  // one word each: not near
  CHECK_THROWS_WITH_AS(nearest_word_distances({"a"}, {"b"}, 0), doctest::Contains("cap 0"), ag::ValueError);
}

TEST_CASE("cluster_pairs joins messages one word apart; split_by_cluster keeps large clusters in train") {
  const std::vector<Pair> pairs = {
      {"Restart %s", "Redémarrer %s", "p"},
      {"start %s", "démarrer %s", "p"},
      {"unary operator expected", "opérateur unaire attendu", "p"},
      {"binary operator expected", "opérateur binaire attendu", "p"},
      {"License GPLv3+: GNU GPL version 3 or later", "Licence GPLv3+ : GNU GPL version 3 ou ultérieure", "p"},
      {"License LGPLv3+: GNU LGPL version 3 or later", "Licence LGPLv3+ : GNU LGPL version 3 ou ultérieure", "p"},
      {"Open", "Ouvrir", "p"},
      {"Close", "Fermer", "p"},
  };
  const auto c = cluster_pairs(pairs, 0.9);
  CHECK(c[0] == c[1]);
  CHECK(c[2] == c[3]);
  CHECK(c[4] != c[5]);  // two words apart: "gplv3" / "lgplv3" and "gpl" / "lgpl"
  CHECK(c[6] != c[7]);
  CHECK(c[0] != c[2]);

  // A chain of 60 messages, each one word from the next: one cluster, over the limit of
  // 50, so it stays in train even where its key's hash says test.
  std::vector<Pair> chain;
  for (int i = 0; i < 60; ++i)
    chain.push_back(
        {"step " + std::string(1, char('a' + i % 26)) + std::string(1, char('a' + i / 26)) + " done", "fr", "p"});
  // and 60 messages two words apart from each other: clusters of one.
  for (int i = 0; i < 60; ++i) {
    const std::string w = std::string(1, char('a' + i % 26)) + std::string(1, char('a' + i / 26));
    chain.push_back({w + "x " + w + "y gamma delta", "fr", "p"});
  }
  const auto cc = cluster_pairs(chain, 0.9);
  CHECK(std::set<int64_t>(cc.begin(), cc.begin() + 60).size() == 1);
  CHECK(std::set<int64_t>(cc.begin() + 60, cc.end()).size() == 60);
  SplitStats st;
  const SplitOptions all_test{1.0, 0.0};  // every cluster of 50 or fewer goes to test
  const Splits s = split_by_cluster(chain, all_test, 0.9, &st);
  CHECK(s.train.size() == 60);
  for (const Pair& p : s.train) CHECK(p.source.rfind("step ", 0) == 0);
  CHECK(st.kept_in_train_for_size == 60);
  CHECK(st.largest_cluster == 60);
  SplitOptions looser = all_test;
  looser.max_held_out_cluster = 60;
  CHECK(split_by_cluster(chain, looser, 0.9).train.empty());
}

TEST_CASE("translation_memory: the French of the most similar training source") {
  const std::vector<Pair> train = {{"Cannot open file %s", "Impossible d'ouvrir le fichier %s", "p"},
                                   {"Out of memory", "Mémoire épuisée", "p"}};
  const auto tm = translation_memory(train, {"cannot open the file %s", "out of memory!", "zzz"});
  REQUIRE(tm.size() == 3);
  CHECK(tm[0] == "Impossible d'ouvrir le fichier %s");
  CHECK(tm[1] == "Mémoire épuisée");
  CHECK(tm[2].empty());
}
