// The dispatched elementwise rows (elementwise_rows.h, gelu_rows.h, gemv.h; one StubCheck per
// registered stub, simd_checks.h) at every level this CPU has, and the ops on them:
// arithmetic and where must equal IEEE's scalar answer bit for bit (body and tail,
// broadcast rows, special values); the fused GELU forward and backward must equal the
// formulas they replace (PyTorch's float arithmetic around a correctly rounded erf /
// tanh for float, libm's float64 formulas for double); softmax rows run one vector
// exp; the f32 <-> bf16 / f16 rows equal the scalar conversions bit for bit. Layer norm,
// Adam and sums: test_simd_norm_optim.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <vector>

#include "kernels/convert_rows.h"
#include "kernels/elementwise_rows.h"
#include "kernels/gelu_rows.h"
#include "kernels/gemv.h"
#include "simd_checks.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace simd_checks;

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

// PyTorch's float GELU: float arithmetic, erf / tanh correctly rounded (libm's erff).
float gelu_ref(float x, bool tanh_form) {
  const float alpha = static_cast<float>(std::numbers::sqrt2 / 2);
  const float k = static_cast<float>(std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5), c = 0.044715f;
  if (tanh_form) {
    const float x3 = static_cast<float>(std::pow(static_cast<double>(x), 3.0));
    return (x * 0.5f) * (1.0f + static_cast<float>(std::tanh(static_cast<double>((x + x3 * c) * k))));
  }
  return (x * 0.5f) * (1.0f + static_cast<float>(std::erf(static_cast<double>(x * alpha))));
}

// gelu'(x) in float64 (the derivation in ops/activation.cpp).
double dgelu_ref(double x, bool tanh_form) {
  const double k = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, c = 0.044715;
  if (tanh_form) {
    const double t = std::tanh((x + c * x * x * x) * k);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
  }
  return 0.5 * std::erfc(-x / std::numbers::sqrt2) +
         x * std::exp(-0.5 * x * x) * std::numbers::inv_sqrtpi / std::numbers::sqrt2;
}

// Elements of y = gelu(x) further than the erf / tanh rounding allows from PyTorch's
// float answer: exact but for an erf / tanh that rounds the other way (xsimd's double
// is a few double ulps off libm's): one float ulp of erf, times x / 2.
int gelu_mismatches(const std::vector<float>& x, const std::vector<float>& y, bool tanh_form) {
  int bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = gelu_ref(x[i], tanh_form), got = y[i];
    const bool ok = same_bits(got, want) || std::abs(got - want) <= std::abs(x[i]) * 0.5f * 6e-8f + 1e-37f;
    if (!ok) INFO("x = ", x[i], ": got ", got, ", want ", want);
    bad += !ok;
  }
  return bad;
}

// The largest distance in float ulps of dx = g gelu'(x) from the float64 gradient.
int gelu_backward_worst_ulps(const std::vector<float>& g, const std::vector<float>& x, const std::vector<float>& dx,
                             bool tanh_form) {
  int worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(double(g[i]) * dgelu_ref(x[i], tanh_form));
    worst = std::max(worst, std::abs(want) < 1e-30f ? 0 : ulps_apart(dx[i], want));
  }
  return worst;
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
    for (int64_t m : {1, 2, 3, 5, 8}) {
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

TEST_CASE("simd elementwise: tensor arithmetic (bias rows, scalars, strided) is the same at every width") {
  LevelGuard guard;
  const std::vector<float> av = values<float>(6 * 37, 1), bv = values<float>(37, 2);
  Tensor a = Tensor::from_vector(av).reshape({6, 37}), bias = Tensor::from_vector(bv);
  Tensor at = Tensor::from_vector(av).reshape({37, 6}).t();  // strided rows: the scalar path
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    kernels::set_simd_level(level);
    const std::vector<float> sum = (a + bias).to_vector<float>(), q = (bias / a).to_vector<float>(),
                             s = (a * 0.5).to_vector<float>(), d = (at - a).to_vector<float>();
    int bad = 0;
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 37; ++j) {
        const std::size_t ij = size_t(i * 37 + j);
        const float x = av[ij], y = bv[size_t(j)], xt = av[size_t(j * 6 + i)];
        bad += !same_bits(sum[ij], x + y) + !same_bits(q[ij], y / x) + !same_bits(s[ij], x * 0.5f) +
               !same_bits(d[ij], xt - x);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("simd elementwise: float GELU is PyTorch's float arithmetic around a correctly rounded erf / tanh") {
  LevelGuard guard;
  for (bool tanh_form : {false, true}) {
    CAPTURE(tanh_form);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      for (int64_t n : kLengths) {
        const std::vector<float> xv = values<float>(n, 11 + uint64_t(n));
        const std::vector<float> y =
            gelu(Tensor::from_vector(xv), tanh_form ? GeluApprox::tanh : GeluApprox::none).to_vector<float>();
        CHECK(gelu_mismatches(xv, y, tanh_form) == 0);
      }
    }
  }
}

TEST_CASE("simd elementwise: float GELU backward is the float64 gradient rounded, at every width") {
  LevelGuard guard;
  for (bool tanh_form : {false, true}) {
    CAPTURE(tanh_form);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const int64_t n = 1000;
      const std::vector<float> xv = values<float>(n, 5, false), gv = values<float>(n, 6);
      const std::vector<float> dx = gelu_backward(Tensor::from_vector(gv), Tensor::from_vector(xv),
                                                  tanh_form ? GeluApprox::tanh : GeluApprox::none)
                                        .to_vector<float>();
      CHECK(gelu_backward_worst_ulps(gv, xv, dx, tanh_form) <= 1);
    }
  }
  // Special values: NaN and infinities where the float64 formula has them.
  const std::vector<float> xs{0.0f, -0.0f, INFINITY, -INFINITY, NAN, -20.0f, 1e30f};
  const std::vector<float> dx =
      gelu_backward(Tensor::from_vector(std::vector<float>(xs.size(), 1.0f)), Tensor::from_vector(xs))
          .to_vector<float>();
  CHECK(dx[0] == 0.5f);
  CHECK(dx[1] == 0.5f);
  CHECK(std::isnan(dx[2]));  // inf * pdf(inf) = inf * 0, as the composite formula
  CHECK(std::isnan(dx[3]));
  CHECK(std::isnan(dx[4]));
  CHECK(dx[5] == 0.0f);
  CHECK(dx[6] == 1.0f);
}

TEST_CASE("gelu float64: the fused pass equals the composite formula; strided input; errors") {
  const double alpha = std::numbers::sqrt2 / 2;
  const std::vector<double> xv = values<double>(301, 9);
  Tensor x = Tensor::from_vector(xv);
  // Forward: bit for bit the ops it replaced (same libm calls, same order).
  CHECK(tc::diff(gelu(x), x * 0.5 * (1.0 + erf(x * alpha))) == "");
  // A transposed (non-contiguous) input gives the contiguous answer.
  Tensor m = Tensor::from_vector(values<double>(12 * 7, 4)).reshape({12, 7});
  CHECK(tc::diff(gelu(m.t()), gelu(m.t().contiguous())) == "");
  CHECK(tc::diff(gelu_backward(m.t(), m.t(), GeluApprox::tanh),
                 gelu_backward(m.t().contiguous(), m.t().contiguous(), GeluApprox::tanh)) == "");
  // Backward against gelu'(x) written out: a few ulps (exp and erf round on their own).
  const std::vector<double> dx = gelu_backward(ones({301}, DType::f64), x).to_vector<double>();
  int bad = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double want = dgelu_ref(xv[i], false);
    if (std::isnan(want))
      bad += !std::isnan(dx[i]);
    else
      bad += !(std::abs(dx[i] - want) <= 1e-14 * std::max(1.0, std::abs(want)));
  }
  CHECK(bad == 0);
  CHECK_THROWS_MSG(gelu_backward(ones({2, 3}), ones({3, 2})), ShapeError,
                   "gelu_backward: grad_output [2, 3] f32 must match input [3, 2] f32");
  CHECK_THROWS_AS(gelu_backward(ones({2}, DType::f64), ones({2})), ShapeError);
}

TEST_CASE("softmax and log_softmax rows (vector exp, short rows and tails) at every width") {
  LevelGuard guard;
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 3, 10, 16, 17, 65}) {
    CAPTURE(n);
    // Row 0 random, row 1 with masked (-inf) entries, row 2 all masked, row 3 with a NaN.
    std::vector<float> x = values<float>(4 * n, 81 + uint64_t(n), false);
    for (int64_t j = 1; j < n; j += 2) x[size_t(n + j)] = ninf;
    for (int64_t j = 0; j < n; ++j) x[size_t(2 * n + j)] = ninf;
    x[size_t(3 * n + n / 2)] = NAN;
    Tensor t = Tensor::from_vector(x).reshape({4, n});
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const std::vector<float> y = softmax(t, -1).to_vector<float>(), ly = log_softmax(t, -1).to_vector<float>();
      int bad = 0;
      for (int64_t r = 0; r < 2; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < n; ++j) m = std::max(m, double(x[size_t(r * n + j)]));
        for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[size_t(r * n + j)]) - m);
        for (int64_t j = 0; j < n; ++j) {
          const double want = std::exp(double(x[size_t(r * n + j)]) - m) / s;
          const std::size_t i = size_t(r * n + j);
          bad += !(std::abs(y[i] - want) <= 1e-6 * want + 1e-37);
          bad += !(std::isinf(x[i]) ? ly[i] == ninf
                                    : std::abs(ly[i] - std::log(want)) <= 2e-6 * (1 + std::abs(std::log(want))));
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        bad += y[size_t(2 * n + j)] != 0.0f || ly[size_t(2 * n + j)] != ninf;  // every key masked
        bad += !std::isnan(y[size_t(3 * n + j)]) || !std::isnan(ly[size_t(3 * n + j)]);
      }
      CHECK(bad == 0);
      // log_softmax backward: g - softmax * sum(g), against the forward's softmax.
      Tensor xr = t.slice(0, 0, 2).detach().requires_grad_();
      Tensor g = Tensor::from_vector(values<float>(2 * n, 90, false)).reshape({2, n});
      (log_softmax(xr, -1) * g).sum().backward();
      const std::vector<float> dx = xr.grad().to_vector<float>(), gv = g.to_vector<float>();
      for (int64_t r = 0; r < 2; ++r) {
        double sg = 0;
        for (int64_t j = 0; j < n; ++j) sg += gv[size_t(r * n + j)];
        for (int64_t j = 0; j < n; ++j) {
          const std::size_t i = size_t(r * n + j);
          const double want = gv[i] - double(y[i]) * sg;
          bad += !(std::abs(dx[i] - want) <= 1e-5 * (1 + std::abs(want)));
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("where / masked_fill rows (values, scalars, broadcast masks) at every width copy the chosen bits") {
  LevelGuard guard;
  for (int64_t n : {1, 5, 16, 17, 40, 100}) {
    CAPTURE(n);
    const std::vector<float> av = values<float>(3 * n, 91), bv = values<float>(3 * n, 92);
    std::vector<uint8_t> cv(static_cast<std::size_t>(3 * n));
    Generator gen(93);
    for (auto& e : cv) e = gen.uniform() < 0.5;
    std::vector<bool> cb(cv.begin(), cv.end());
    Tensor c = Tensor::from_vector(std::vector<float>(cv.begin(), cv.end())).reshape({3, n}).to(DType::b8);
    Tensor a = Tensor::from_vector(av).reshape({3, n}), b = Tensor::from_vector(bv).reshape({3, n});
    Tensor row_mask = c.slice(0, 0, 1);  // (1, n): broadcast over rows
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const std::vector<float> w = where(c, a, b).to_vector<float>(), f = masked_fill(b, c, -7.5).to_vector<float>(),
                               wb = where(row_mask, a, b).to_vector<float>(),
                               ws = where(c, a, b.t().t()).to_vector<float>();
      int bad = 0;
      for (int64_t i = 0; i < 3 * n; ++i) {
        const std::size_t k = size_t(i), kb = size_t(i % n);
        bad += !same_bits(w[k], cb[k] ? av[k] : bv[k]) + !same_bits(f[k], cb[k] ? -7.5f : bv[k]) +
               !same_bits(wb[k], cb[kb] ? av[k] : bv[k]) + !same_bits(ws[k], w[k]);
      }
      CHECK(bad == 0);
    }
  }
}
