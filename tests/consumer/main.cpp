// Uses the installed attograd the way an outside project would.
#include <attograd/attograd.h>

#include <cstdio>

int main() {
  ag::Tensor t = ag::ones({2, 3});
  ag::Tensor s = t.sum();
  const float got = s.item<float>();
  if (got == 6.0f) {
    std::printf("attograd consumer: ones({2, 3}).sum() = %g, OK\n", static_cast<double>(got));
    return 0;
  }
  std::printf("attograd consumer: ones({2, 3}).sum() = %g, expected 6\n", static_cast<double>(got));
  return 1;
}
