#pragma once
// Shared by the tests of the dispatched kernels (test_simd_elementwise.cpp,
// test_simd_norm_optim.cpp): the vector-width guard and value generators.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/simd.h"

namespace simd_checks {

using K = ag::kernels::SimdLevel;

// Restores the vector width in use when a test case ends.
struct LevelGuard {
  K saved = ag::kernels::simd_level();
  ~LevelGuard() { ag::kernels::set_simd_level(saved); }
};

inline const std::vector<int64_t> kLengths{0, 1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 100, 257, 600};

// Random values with the special ones sprinkled through body and tail.
template <class T>
inline std::vector<T> values(int64_t n, uint64_t seed, bool specials = true) {
  ag::Generator g(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(g.normal() * 3);
  const T sp[] = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                  std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(), T(-20), T(1e30), T(-2.5)};
  if (specials)
    for (std::size_t i = 0; i < x.size(); i += 5) x[i] = sp[(i / 5) % std::size(sp)];
  return x;
}

template <class T>
inline bool same_bits(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

inline int ulps_apart(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1 << 30;
  if (a == b) return 0;
  auto ord = [](float v) {
    int32_t i;
    std::memcpy(&i, &v, 4);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return static_cast<int>(std::min<int64_t>(std::abs(ord(a) - ord(b)), 1 << 30));
}

}  // namespace simd_checks
