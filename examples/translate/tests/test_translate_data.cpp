// The translate example's corpus from gettext catalogs: the split's hash fixed by
// hand-checked values, the loader reading .mo files and skipping damaged ones, each
// cleaning rule, and dedup. The .mo reader itself: test_translate_data/read_mo.cpp.
#include <attograd/error.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "mo_test_util.h"
#include "translate/catalog.h"

using namespace translate;
using namespace mo_test_util;
namespace fs = std::filesystem;

TEST_CASE("fnv1a64: hand-checked values; the split bucket of given strings is fixed") {
  // FNV-1a 64 of "" is the offset basis; of "a": (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3
  // mod 2^64; of "foobar": the FNV reference test vector.
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  // Buckets (hash % 10000) computed with a Python FNV-1a: "message 35" 88 and
  // "message 66" 152 (< 200: test), "message 97" 216 and "message 101" 380 (< 400:
  // validation), "a" 1996 and "%s: cannot open" 9000 (train).
  CHECK(fnv1a64("message 35") % 10000 == 88);
  CHECK(split_of("message 35") == Split::test);
  CHECK(split_of("message 66") == Split::test);
  CHECK(split_of("message 97") == Split::validation);
  CHECK(split_of("message 101") == Split::validation);
  CHECK(split_of("a") == Split::train);
  CHECK(split_of("%s: cannot open") == Split::train);
  // Other fractions move the boundaries: with test 0.25, bucket 1996 of "a" is test.
  CHECK(split_of("a", SplitOptions{0.25, 0.0}) == Split::test);
  CHECK_THROWS_AS(split_of("a", SplitOptions{0.7, 0.5}), ag::ValueError);

  // split_pairs keeps order within each part, and 100,000 strings land near 2/2/96%
  // (Python count: 2070 / 1972 / 95958).
  std::vector<Pair> pairs;
  for (int i = 0; i < 100000; ++i) pairs.push_back({"x" + std::to_string(i), "y", "p"});
  Splits s = split_pairs(pairs);
  CHECK(s.test.size() == 2070);
  CHECK(s.validation.size() == 1972);
  CHECK(s.train.size() == 95958);
  CHECK(std::is_sorted(s.test.begin(), s.test.end(), [](const Pair& a, const Pair& b) {
    return std::stoi(a.source.substr(1)) < std::stoi(b.source.substr(1));
  }));
}

TEST_CASE("load_pairs: reads the packages in order, skips missing and damaged catalogs, converts Latin-1") {
  const fs::path root = fs::path(AG_TMP_DIR) / "translate" / "locale";
  fs::remove_all(root);
  const fs::path dir = root / "xx" / "LC_MESSAGES";
  write_file(dir / "one.mo", write_mo(sample_messages(), false));
  write_file(dir / "broken.mo", write_mo(sample_messages(), true).substr(0, 50));
  // Latin-1: "é" is the single byte 0xe9.
  write_file(dir / "latin.mo", write_mo({{"", "Content-Type: text/plain; charset=iso-8859-1\n"},
                                         {"Error", "Erreur"},
                                         {"Write",
                                          "\xe9"
                                          "crire"}},
                                        true));
  write_file(dir / "koi.mo", write_mo({{"", "Content-Type: text/plain; charset=KOI8-R\n"}, {"Yes", "Da"}}, false));
  const Catalogs c = load_pairs("xx", {"one", "missing", "broken", "latin", "koi"}, root.string());
  REQUIRE(c.packages.size() == 5);
  CHECK(c.packages[0].status == "ok");
  CHECK(c.packages[0].entries == 4);
  CHECK(c.packages[0].pairs == 6);  // 4 messages, 2 of them with a plural pair
  CHECK(c.packages[1].status == "missing");
  CHECK(c.packages[2].status.rfind("damaged: ", 0) == 0);
  CHECK(c.packages[2].status.find("broken.mo") != std::string::npos);
  CHECK(c.packages[3].status == "ok");
  CHECK(c.packages[3].pairs == 2);
  CHECK(c.packages[4].status == "charset koi8-r not supported");
  REQUIRE(c.pairs.size() == 8);
  CHECK(c.pairs[0].source == "%d file");
  CHECK(c.pairs[0].target == "%d fichier");
  CHECK(!c.pairs[0].plural);
  CHECK(c.pairs[1].source == "%d files");
  CHECK(c.pairs[1].target == "%d fichiers");
  CHECK(c.pairs[1].plural);
  CHECK(c.pairs[3].source == "Open");  // the context is not part of the pair
  CHECK(c.pairs[7].package == "latin");
  CHECK(c.pairs[7].target ==
        "\xc3\xa9"
        "crire");  // é in UTF-8
  CHECK_THROWS_AS(load_pairs("../etc", {"one"}, root.string()), ag::ValueError);
}

TEST_CASE("clean_pairs: each rule") {
  CHECK(normalize_whitespace("  usage:\t%s [OPTION]...\n\n  list  files\n") == "usage: %s [OPTION]... list files");
  // U+00A0 and U+202F before ':' become plain spaces.
  CHECK(normalize_whitespace("%s\xc2\xa0: %s\xe2\x80\xaf!") == "%s : %s !");
  CHECK(normalize_whitespace(" \n\t ").empty());
  CHECK(strip_accelerator("_Open") == "Open");
  CHECK(strip_accelerator("Save _As") == "Save As");
  CHECK(strip_accelerator("_\xc3\x89"
                          "dition") ==
        "\xc3\x89"
        "dition");
  CHECK(strip_accelerator("GIT_DIR is set") == "GIT_DIR is set");                // not at a word start
  CHECK(strip_accelerator("_GLOBAL_OFFSET_TABLE_") == "_GLOBAL_OFFSET_TABLE_");  // several underscores
  CHECK(strip_accelerator("_1 item") == "_1 item");                              // no letter follows
  CHECK(utf8_length("\xc3\xa9"
                    "crire") == 6);
  CHECK(valid_utf8("\xc3\xa9"));
  CHECK(
      !valid_utf8("\xe9"
                  "crire"));           // a Latin-1 byte
  CHECK(!valid_utf8("\xc0\xaf"));      // overlong '/'
  CHECK(!valid_utf8("\xed\xa0\x80"));  // a surrogate
  CHECK(!valid_utf8("\xe2\x82"));      // cut sequence

  const std::string s200(200, 'a'), s201(201, 'b');
  std::vector<Pair> in = {
      {"Cannot open %1$s: %2$s\n", "Impossible d'ouvrir %1$s : %2$s\n", "p"},  // kept, directives intact
      {"%zu files", "%zu fichiers", "p", true},                                // plural: kept by default
      {"Unused", "", "p"},                                                     // empty
      {"  \n", "x", "p"},                                                      // empty after normalizing
      {"GNU", "GNU", "p"},                                                     // identical
      {"_Open", "Open", "p"},                                                  // identical once stripped
      {s200, s200 + "x", "p"},                                                 // target over 200
      {s200, std::string(199, 'c'), "p"},                                      // 200: kept
      {s201, "b", "p"},                                                        // too long (checked first)
      {"Short one here!!", "x", "p"},                                          // 16 vs 1: ratio
      {"Fifteen chars!!", "x", "p"},                                           // 15: under the ratio rule's 16
      {"bad \xe9", "bad", "p"},                                                // invalid UTF-8
      {"%-10s %lld", "%-10s %lld ", "p"},                                      // identical after trim
  };
  CleanStats st;
  std::vector<Pair> out = clean_pairs(in, CleanOptions{}, &st);
  REQUIRE(out.size() == 4);
  CHECK(out[0].source == "Cannot open %1$s: %2$s");
  CHECK(out[0].target == "Impossible d'ouvrir %1$s : %2$s");
  CHECK(out[1].plural);
  CHECK(out[2].source == s200);
  CHECK(out[3].source == "Fifteen chars!!");
  CHECK(st.input == 13);
  CHECK(st.kept == 4);
  CHECK(st.plural == 0);
  CHECK(st.empty == 2);
  CHECK(st.identical == 3);
  CHECK(st.too_long == 2);
  CHECK(st.ratio == 1);
  CHECK(st.invalid_utf8 == 1);

  CleanOptions o;
  o.plural_pairs = false, o.drop_identical = false, o.strip_accelerators = false, o.max_chars = 300;
  o.max_length_ratio = 1000;  // s201 -> "b" is 201:1
  out = clean_pairs(in, o, &st);
  CHECK(st.plural == 1);
  CHECK(st.identical == 0);
  CHECK(st.too_long == 0);
  CHECK(st.ratio == 0);
  CHECK(out.size() == 9);
  CHECK(out[2].source == "_Open");
  CHECK_THROWS_AS(clean_pairs(in, CleanOptions{.max_chars = 0}), ag::ValueError);
}

TEST_CASE("dedup_by_source keeps the first translation of each English text") {
  std::vector<Pair> in = {{"File", "Fichier", "coreutils"},
                          {"Edit", "Modifier", "gtk"},
                          {"File", "Dossier", "gtk"},
                          {"file", "fichier", "gtk"}};
  std::vector<Pair> out = dedup_by_source(in);
  REQUIRE(out.size() == 3);
  CHECK(out[0].target == "Fichier");
  CHECK(out[0].package == "coreutils");
  CHECK(out[1].source == "Edit");
  CHECK(out[2].source == "file");  // case matters
}

TEST_CASE("the machine's French catalogs give more than 10,000 pairs") {
  if (!fs::exists("/usr/share/locale/fr/LC_MESSAGES")) {
    MESSAGE("skipped: /usr/share/locale/fr/LC_MESSAGES is absent");
    return;
  }
  for (const auto& name : default_packages()) CHECK(name.rfind("iso_", 0) != 0);
  const Corpus c = build_corpus();
  CHECK(c.unique > 10000);
  CHECK(c.splits.train.size() + c.splits.validation.size() + c.splits.test.size() == static_cast<size_t>(c.unique));
  // Each part near its fraction (2%, 2%, 96%): within a quarter of it.
  CHECK(std::abs(static_cast<double>(c.splits.test.size()) / static_cast<double>(c.unique) - 0.02) < 0.005);
  CHECK(std::abs(static_cast<double>(c.splits.validation.size()) / static_cast<double>(c.unique) - 0.02) < 0.005);
  // Clustered: no test source has a training source within the grouping threshold, nor
  // one with the same normalized text (split_by_cluster measures both).
  CHECK(c.split.test_near_train == 0);
  CHECK(c.split.max_test_train_similarity < c.split.threshold);
  CHECK(c.split.test_with_train_normalized_twin == 0);
  CHECK(c.split.messages[2] == static_cast<int64_t>(c.splits.test.size()));
  MESSAGE("pairs: raw ", c.raw, ", cleaned ", c.cleaned, ", unique ", c.unique, "; train ", c.splits.train.size(),
          ", validation ", c.splits.validation.size(), ", test ", c.splits.test.size());
}
