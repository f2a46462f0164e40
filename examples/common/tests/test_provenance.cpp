// examples/common/provenance.h: the block every example's metrics.json carries, so a
// figure names the commit, command, machine and date it came from (issue 43).
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "common/provenance.h"

TEST_CASE("provenance names the commit, the command, the machine, the date and the engines") {
  const nlohmann::json p = examples::provenance("build/examples/lm --steps 3");
  CHECK(p.at("command") == "build/examples/lm --steps 3");
  const std::string commit = p.at("attograd_commit");
  // A checkout gives a short hash (maybe "+dirty"); a tarball says so instead of guessing.
  CHECK(
      (std::regex_match(commit, std::regex("[0-9a-f]{7,40}(\\+dirty)?")) || commit == "unknown (not a git checkout)"));
  CHECK(p.at("attograd_version") == std::string(ag::version));
  CHECK(std::regex_match(p.at("date").get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK_FALSE(p.at("cpu").get<std::string>().empty());
  CHECK(p.at("cores").get<unsigned>() >= 1);
  CHECK(p.at("config").get<std::string>().find("f32 products: ") != std::string::npos);
}

TEST_CASE("first_line_of returns a command's first line, or nothing when it fails") {
  CHECK(examples::first_line_of("printf 'a\\nb\\n'") == "a");
  CHECK(examples::first_line_of("exit 3").empty());
}
