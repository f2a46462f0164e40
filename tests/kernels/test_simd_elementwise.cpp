// The dispatched elementwise rows (elementwise_rows.h, gelu_rows.h, convert_rows.h, gemv.h;
// one StubCheck per registered stub, simd_checks.h) at every level this CPU has, against
// IEEE's scalar answers and PyTorch's GELU. The ops on them: test_simd_elementwise/ops.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "gelu_reference.h"
#include "kernels/convert_rows.h"
#include "kernels/elementwise_rows.h"
#include "kernels/gelu_rows.h"
#include "kernels/gemv.h"
#include "simd_checks.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace simd_checks;
using namespace gelu_reference;

namespace {

template <class T>
T apply(int op, T a, T b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
  }
}

template <class T>
void check_arith_row() {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto arith = kernels::arith_row.of<T>().get(level);
    for (int op = 0; op < 4; ++op)
      for (int layout = 0; layout < 3; ++layout)
        for (int64_t n : kLengths) {
          CAPTURE(op);
          CAPTURE(layout);
          CAPTURE(n);
          const std::vector<T> a = values<T>(n + 1, 3 + uint64_t(n)), b = values<T>(n + 1, 50 + uint64_t(n));
          std::vector<T> out(static_cast<std::size_t>(n + 1), T(7));
          arith(op, layout, out.data(), a.data(), b.data(), n);
          int bad = 0;
          for (int64_t i = 0; i < n; ++i) {
            const T x = layout == 2 ? a[0] : a[size_t(i)], y = layout == 1 ? b[0] : b[size_t(i)];
            bad += !same_bits(out[size_t(i)], apply(op, x, y));
          }
          CHECK(bad == 0);
          CHECK(out[size_t(n)] == T(7));  // nothing written past n
        }
  }
}

// c ? a : b with a and b rows or single values: the chosen bits, NaN and -0 included.
template <class T>
void check_where_row() {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto where = kernels::where_row.of<T>().get(level);
    for (int64_t n : kLengths)
      for (bool a_row : {false, true})
        for (bool b_row : {false, true}) {
          CAPTURE(n);
          CAPTURE(a_row);
          CAPTURE(b_row);
          const std::vector<T> a = values<T>(n + 1, 5 + uint64_t(n)), b = values<T>(n + 1, 60 + uint64_t(n));
          std::unique_ptr<bool[]> c(new bool[size_t(n + 1)]);
          Generator gen(static_cast<uint64_t>(n));
          for (int64_t i = 0; i <= n; ++i) c[size_t(i)] = gen.uniform() < 0.5;
          std::vector<T> out(static_cast<std::size_t>(n + 1), T(7));
          where(out.data(), c.get(), a.data(), b.data(), n, a_row, b_row);
          int bad = 0;
          for (int64_t i = 0; i < n; ++i)
            bad += !same_bits(out[size_t(i)], c[size_t(i)] ? a[a_row ? size_t(i) : 0] : b[b_row ? size_t(i) : 0]);
          CHECK(bad == 0);
          CHECK(out[size_t(n)] == T(7));  // nothing written past n
        }
  }
}

void check_gelu_row() {
  for (K level : kernels::available_simd_levels())
    for (bool tanh_form : {false, true})
      for (int64_t n : kLengths) {
        CAPTURE(kernels::to_string(level));
        CAPTURE(tanh_form);
        CAPTURE(n);
        const std::vector<float> x = values<float>(n, 11 + uint64_t(n));
        std::vector<float> y(x.size() + 1, 7.0f);
        kernels::gelu_row.get(level)(y.data(), x.data(), n, tanh_form);
        CHECK(y.back() == 7.0f);  // nothing written past n
        y.pop_back();
        CHECK(gelu_mismatches(x, y, tanh_form) == 0);
      }
}

void check_gelu_backward_row() {
  for (K level : kernels::available_simd_levels())
    for (bool tanh_form : {false, true})
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{255}, int64_t{256}, int64_t{1000}}) {
        CAPTURE(kernels::to_string(level));
        CAPTURE(tanh_form);
        CAPTURE(n);
        const std::vector<float> x = values<float>(n, 5, false), g = values<float>(n, 6);
        std::vector<float> dx(x.size() + 1, 7.0f);
        kernels::gelu_backward_row.get(level)(dx.data(), g.data(), x.data(), n, tanh_form);
        CHECK(dx.back() == 7.0f);
        dx.pop_back();
        CHECK(gelu_backward_worst_ulps(g, x, dx, tanh_form) <= 1);
      }
}

// f32 <-> bf16 / f16 rows (convert_rows.h): bit for bit the scalar ag::BFloat16 / ag::Half
// at every level, on every f32 class (random bits: NaNs with payloads, subnormals, ties)
// and on every one of the 65536 16-bit patterns; nothing written past n.
std::vector<float> conversion_inputs(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<std::size_t>(n));
  uint32_t s = seed * 2654435761u + 1;
  const uint32_t special[] = {0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC12345, 0x7F800000, 0xFF800000,
                              0x80000000, 0x3F808000, 0x3F818000, 0x477FF000, 0x477FEFFF, 0x33000000,
                              0x33C00000, 0x387FE000, 0x00000001, 0x7F7FFFFF};
  for (std::size_t i = 0; i < x.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = std::bit_cast<float>(i % 3 == 0 ? special[(s >> 8) % 16] : s);
  }
  return x;
}

template <bool BF>
void check_to_half_row() {
  const auto& stub = BF ? kernels::f32_to_bf16_row : kernels::f32_to_f16_row;
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<float> x = conversion_inputs(n, 7);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<uint16_t> out(static_cast<std::size_t>(n + 1), 0xABCD);
      stub.get(level)(out.data(), x.data(), n);
      int bad = 0;
      for (std::size_t i = 0; i < std::size_t(n); ++i) bad += out[i] != (BF ? BFloat16(x[i]).x : Half(x[i]).x);
      CHECK(bad == 0);
      CHECK(out.back() == 0xABCD);
    }
  }
}

template <bool BF>
void check_from_half_row() {
  const auto& stub = BF ? kernels::bf16_to_f32_row : kernels::f16_to_f32_row;
  std::vector<uint16_t> all(65536 + 5);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 40503u);  // every pattern
  for (int64_t n : kLengths) {
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const int64_t m = n == 600 ? int64_t(all.size()) : n;
      std::vector<float> out(static_cast<std::size_t>(m + 1), 42.f);
      stub.get(level)(out.data(), all.data(), m);
      int bad = 0;
      for (std::size_t i = 0; i < std::size_t(m); ++i) {
        const float want = BF ? float(BFloat16::from_bits(all[i])) : float(Half::from_bits(all[i]));
        bad += std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(want);
      }
      CHECK(bad == 0);
      CHECK(out.back() == 42.f);
    }
  }
}

// half_gemv_rows / f32_gemv_rows: m rows (1..8) by a window [n0, n1) of the weight rows
// (W: 1 bf16, 2 f16, 0 f32), against the documented order (16 fused partial sums by
// k mod 16, then pairwise), bit for bit at every level; conversion_inputs' specials give
// inf and NaN products too.
template <int W>
void check_gemv_rows() {
  for (int64_t k : {1, 7, 16, 17, 33, 100}) {
    const int64_t rows = 8, n = 13, ldx = k + 3, ldy = n + 2;
    std::vector<float> x(static_cast<std::size_t>(rows * ldx));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 37 % 17) - 8) / 4.0f;
    const std::vector<float> wf = conversion_inputs(n * k, 11);
    std::vector<uint16_t> w16(wf.size());
    std::vector<float> w32(wf.size());
    for (std::size_t i = 0; i < wf.size(); ++i) {
      w16[i] = W == 1 ? BFloat16(wf[i] / 1e30f).x : Half(wf[i] / 1e30f).x;
      w32[i] = wf[i] / 1e30f;
    }
    auto weight = [&](std::size_t i) {
      return W == 0 ? w32[i] : W == 1 ? float(BFloat16::from_bits(w16[i])) : float(Half::from_bits(w16[i]));
    };
    for (int64_t m = 1; m <= 8; ++m) {  // each row count is its own register block
      CAPTURE(k);
      CAPTURE(m);
      std::vector<float> want(static_cast<std::size_t>(rows * ldy), -7.f);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 1; c < 12; ++c) {  // 11 columns: the 8-, 4- and 2-row blocks and a single
          float p[16] = {};
          for (int64_t j = 0; j < k; ++j)
            p[j % 16] = std::fma(x[size_t(i * ldx + j)], weight(size_t(c * k + j)), p[j % 16]);
          for (int step = 8; step >= 1; step /= 2)
            for (int j = 0; j < step; ++j) p[j] = p[j] + p[j + step];
          want[size_t(i * ldy + c)] = p[0];
        }
      for (K level : kernels::available_simd_levels()) {
        CAPTURE(kernels::to_string(level));
        std::vector<float> out(want.size(), -7.f);  // untouched outside rows < m, cols 1..11
        if constexpr (W == 0)
          kernels::f32_gemv_rows.get(level)(out.data(), ldy, x.data(), ldx, w32.data(), k, m, 1, 12);
        else
          kernels::half_gemv_rows.get(level)(out.data(), ldy, x.data(), ldx, w16.data(), k, m, 1, 12, W == 1);
        int bad = 0;
        for (std::size_t i = 0; i < out.size(); ++i)
          bad += !(std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(want[i]) ||
                   (std::isnan(out[i]) && std::isnan(want[i])));
        CHECK(bad == 0);
      }
    }
  }
}

const std::vector<StubCheck> kChecks{
    {"arith_row_f32", check_arith_row<float>},
    {"arith_row_f64", check_arith_row<double>},
    {"where_row_f32", check_where_row<float>},
    {"where_row_f64", check_where_row<double>},
    {"gelu_row", check_gelu_row},
    {"gelu_backward_row", check_gelu_backward_row},
    {"f32_to_bf16_row", check_to_half_row<true>},
    {"f32_to_f16_row", check_to_half_row<false>},
    {"bf16_to_f32_row", check_from_half_row<true>},
    {"f16_to_f32_row", check_from_half_row<false>},
    {"half_gemv_rows", [] { check_gemv_rows<1>(), check_gemv_rows<2>(); }},
    {"f32_gemv_rows", check_gemv_rows<0>},
};

}  // namespace

TEST_CASE("simd elementwise: every elementwise and GELU stub has a check, and each level passes it") {
  run_stub_checks("test_simd_elementwise", kChecks);
}
