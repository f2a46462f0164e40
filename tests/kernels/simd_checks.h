#pragma once
// Shared by the tests of the dispatched kernels (test_simd.cpp,
// test_simd_elementwise.cpp, test_simd_norm_optim.cpp, test_simd_quant.cpp,
// test_simd_rnn.cpp): the registry of per-stub equivalence checks, the level guard and
// value generators.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dispatch.h"

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
  const T sp[] = {T(0),
                  -T(0),
                  std::numeric_limits<T>::infinity(),
                  -std::numeric_limits<T>::infinity(),
                  std::numeric_limits<T>::quiet_NaN(),
                  std::numeric_limits<T>::denorm_min(),
                  T(-20),
                  T(1e30),
                  T(-2.5)};
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

// ---- one check per dispatch stub ------------------------------------------------
// A check of one stub of kernels::dispatch_registry() at every level this CPU has (it
// loops over available_simd_levels() itself): bit for bit against the baseline or the
// scalar formula, or within a stated tolerance where xsimd's exp / erf differ by width.
struct StubCheck {
  const char* stub;
  void (*run)();
};

// The test program that checks the stubs each kernel header declares. A stub added to
// ops/kernels/dispatch_table.cpp fails every test_simd* program until its header has a
// line here, and then fails that program until it has a StubCheck.
inline const std::map<std::string_view, std::string_view> kHeaderChecks{
    {"adam", "test_simd_norm_optim"},
    {"attention_rows", "test_simd"},
    {"convert_rows", "test_simd_elementwise"},
    {"dropout_rows", "test_simd"},
    {"elementwise_rows", "test_simd_elementwise"},
    {"gelu_rows", "test_simd_elementwise"},
    {"gemv", "test_simd_elementwise"},
    {"layer_norm_rows", "test_simd_norm_optim"},
    {"quant_rows", "test_simd_quant"},
    {"rnn_gates", "test_simd_rnn"},
    {"s8_gemm", "test_simd_quant"},
    {"sum_rows", "test_simd_norm_optim"},
};

// Requires exactly one check in `checks` for each registered stub that `program` owns
// (and no check of a stub it does not own), then runs them all.
inline void run_stub_checks(std::string_view program, const std::vector<StubCheck>& checks) {
  std::set<std::string> owned;
  for (const ag::kernels::DispatchEntry& e : ag::kernels::dispatch_registry()) {
    const std::string name = e.name, header = e.header;
    const auto owner = kHeaderChecks.find(header);
    if (owner == kHeaderChecks.end()) {
      FAIL_CHECK("stub " << name << ": its header " << header
                         << " needs a line in kHeaderChecks (tests/simd_checks.h)");
      continue;
    }
    if (owner->second != program) continue;
    owned.insert(name);
    const auto n = std::count_if(checks.begin(), checks.end(), [&](const StubCheck& c) { return c.stub == name; });
    if (n != 1) FAIL_CHECK("stub " << name << " needs one StubCheck in tests/" << program << ".cpp, has " << n);
  }
  for (const StubCheck& c : checks)
    if (!owned.count(c.stub))
      FAIL_CHECK("StubCheck " << std::string(c.stub) << ": no such stub among " << program << "'s headers");
  for (const StubCheck& c : checks) {
    const std::string stub = c.stub;
    CAPTURE(stub);
    c.run();
  }
}

}  // namespace simd_checks
