// <attograd/version.h>: ag::version and the ATTOGRAD_VERSION_* macros agree.
// (That they match the CMake package and attograd.pc is checked by install_consumer.)
#include <attograd/version.h>

#include <doctest/doctest.h>

#include <string>

TEST_CASE("version: the string is major.minor.patch from the macros") {
  // Built independently of ATTOGRAD_VERSION_STRING, from the three numbers.
  const std::string expected = std::to_string(ATTOGRAD_VERSION_MAJOR) + "." + std::to_string(ATTOGRAD_VERSION_MINOR) +
                               "." + std::to_string(ATTOGRAD_VERSION_PATCH);
  CHECK(std::string(ag::version) == expected);
  CHECK(std::string(ATTOGRAD_VERSION_STRING) == expected);
}

TEST_CASE("version: the single number orders releases") {
  CHECK(ATTOGRAD_VERSION == ATTOGRAD_VERSION_MAJOR * 10000 + ATTOGRAD_VERSION_MINOR * 100 + ATTOGRAD_VERSION_PATCH);
  // This release (CHANGELOG.md) is 0.2.x: later than 0.1.0, earlier than 0.3.0.
  CHECK(ATTOGRAD_VERSION > 100);
  CHECK(ATTOGRAD_VERSION < 300);
  static_assert(ATTOGRAD_VERSION_MINOR < 100 && ATTOGRAD_VERSION_PATCH < 100,
                "ATTOGRAD_VERSION packs minor and patch in two digits each");
}
