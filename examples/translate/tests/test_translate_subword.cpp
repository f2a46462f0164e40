// The translate example's subword vocabulary (examples/translate/subword.h): SentencePiece
// trained from memory, cached, format directives kept whole, special ids reserved.
#include <doctest/doctest.h>

#include <attograd/error.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "translate/subword.h"

using namespace translate;

namespace {

// English and French lines of a toy catalog, repeated with numbers so that SentencePiece
// sees enough text for a 120-piece vocabulary.
std::vector<std::string> corpus() {
  const char* lines[] = {"cannot open file %s",
                         "impossible d'ouvrir le fichier %s",
                         "%d files removed",
                         "%d fichiers supprimés",
                         "invalid option -- '%c'",
                         "option invalide -- '%c'",
                         "Try '%s --help' for more information.",
                         "Saisissez « %s --help » pour plus d'informations.",
                         "write error",
                         "erreur d'écriture"};
  std::vector<std::string> out;
  for (int k = 0; k < 30; ++k)
    for (const char* l : lines) out.push_back(std::string(l) + (k % 3 == 0 ? "" : " " + std::to_string(k)));
  return out;
}

std::string tmp(const std::string& name) { return std::string(AG_TMP_DIR) + "/" + name; }

}  // namespace

TEST_CASE("subword: trained from memory, round-trips, keeps format directives whole") {
  const std::string path = tmp("subword_a.model");
  std::filesystem::remove(path), std::filesystem::remove(path + ".key");
  SubwordOptions o;
  o.vocab_size = 120;
  Subword sw = Subword::train_or_load(corpus(), o, path);
  CHECK(sw.vocab_size() <= 120);
  CHECK(sw.vocab_size() > 40);
  for (const std::string s : {"cannot open file %s", "erreur d'écriture 7", "%d fichiers supprimés"}) {
    std::vector<int64_t> ids = sw.encode(s);
    CHECK_FALSE(ids.empty());
    for (int64_t i : ids) CHECK(i > Subword::kEos);  // pad, unk, bos, eos never come out of encode
    CHECK(sw.decode(ids) == s);
  }
  auto p = sw.pieces("cannot open file %s");
  CHECK(std::find(p.begin(), p.end(), "%s") != p.end());
  auto q = sw.pieces("%1$s et %lu");
  CHECK(std::find(q.begin(), q.end(), "%1$s") != q.end());
  CHECK(std::find(q.begin(), q.end(), "%lu") != q.end());
  // decode skips the special ids
  std::vector<int64_t> ids = sw.encode("write error");
  ids.insert(ids.begin(), Subword::kBos);
  ids.push_back(Subword::kEos);
  ids.push_back(Subword::kPad);
  CHECK(sw.decode(ids) == "write error");
}

TEST_CASE("subword: the cache is reused for the same sentences and options, retrained otherwise") {
  const std::string path = tmp("subword_b.model");
  std::filesystem::remove(path), std::filesystem::remove(path + ".key");
  SubwordOptions o;
  o.vocab_size = 100;
  Subword a = Subword::train_or_load(corpus(), o, path);
  REQUIRE(std::filesystem::exists(path));
  const auto written = std::filesystem::last_write_time(path);
  Subword b = Subword::train_or_load(corpus(), o, path);
  CHECK(std::filesystem::last_write_time(path) == written);  // loaded, not retrained
  CHECK(b.encode("invalid option -- 'x'") == a.encode("invalid option -- 'x'"));
  CHECK(Subword::load(path).encode("write error 12") == a.encode("write error 12"));
  o.vocab_size = 90;
  Subword c = Subword::train_or_load(corpus(), o, path);  // other options: a new model
  CHECK(c.vocab_size() <= 90);
  CHECK(Subword::load(path).vocab_size() == c.vocab_size());
}

TEST_CASE("subword: errors") {
  SubwordOptions o;
  CHECK_THROWS_WITH_AS(Subword::train_or_load({}, o, ""), doctest::Contains("subword: no training sentences"),
                       ag::ValueError);
  o.vocab_size = 10;
  CHECK_THROWS_WITH_AS(Subword::train_or_load(corpus(), o, ""),
                       doctest::Contains("subword: vocab_size 10 is too small"), ag::ValueError);
  o.vocab_size = 100, o.model_type = "wordpiece";
  CHECK_THROWS_WITH_AS(Subword::train_or_load(corpus(), o, ""),
                       doctest::Contains("subword: model_type 'wordpiece' must be unigram or bpe"), ag::ValueError);
  CHECK_THROWS_WITH_AS(Subword::load(tmp("no_such.model")), doctest::Contains("subword: cannot read"), ag::IOError);
}
