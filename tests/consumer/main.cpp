// Uses the installed attograd the way an outside project would. AG_EXPECTED_VERSION is
// the version the build system found (the CMake package's, or `pkg-config --modversion`).
#include <attograd/attograd.h>

#include <cstdio>
#include <string_view>

int main() {
  int failures = 0;
  ag::Tensor t = ag::ones({2, 3});
  ag::Tensor s = t.sum();
  const float got = s.item<float>();
  std::printf("attograd consumer: ones({2, 3}).sum() = %g (expected 6)\n", static_cast<double>(got));
  failures += got != 6.0f;

  const std::string_view expected = AG_EXPECTED_VERSION;
  std::printf("attograd consumer: ag::version %.*s, the package says %.*s\n", static_cast<int>(ag::version.size()),
              ag::version.data(), static_cast<int>(expected.size()), expected.data());
  failures += ag::version != expected;
  static_assert(ATTOGRAD_VERSION_MAJOR == 0 && ATTOGRAD_VERSION_MINOR == 2, "the consumer asks for attograd 0.2");

  std::printf("attograd consumer: %s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}
