// The float GELU rows of gelu_rows.h for one level (isa.h: compiled once per level,
// Arch its xsimd arch).
#include "isa.h"

#include <algorithm>
#include <cstdint>
#include <numbers>

#include "kernels/gelu_rows.h"

namespace ag::kernels {
namespace {

// float rows through double lanes, in chunks of kChunk.
template <class A>
struct Gelu {
  using D = xsimd::batch<double, A>;
  static constexpr int64_t WD = static_cast<int64_t>(D::size);
  static constexpr int64_t kChunk = 256;  // doubles per staging buffer (a multiple of WD)
  static constexpr double kAlpha = std::numbers::sqrt2 / 2;
  static constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi * kAlpha;  // 1 / sqrt(2 pi)
  // PyTorch's tanh-form constants (as ops/elementwise.cpp rounds them).
  static constexpr double kK = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, kC = 0.044715;

  // 1 + erf(x / sqrt 2) as erfc(-x / sqrt 2): no cancellation for negative x. The
  // argument is clamped to +-30 (erfc is 0 or 2 there in double) because xsimd's erfc
  // is not defined for huge arguments; NaN x stays NaN through the product with x.
  static D one_plus_erf(const D& x) { return xsimd::erfc(xsimd::min(xsimd::max(-x * D(kAlpha), D(-30.0)), D(30.0))); }

  static D tanh_u(const D& x) {
    return xsimd::tanh(xsimd::min(xsimd::max((x + x * x * x * D(kC)) * D(kK), D(-30.0)), D(30.0)));
  }

  // d gelu / dx (ops/elementwise.cpp derives both).
  template <bool Tanh>
  static D dgelu_v(const D& x) {
    if constexpr (Tanh) {
      const D t = tanh_u(x), x_sq = x * x;
      const D right = x * D(0.5) * (D(1.0) - t * t) * ((D(1.0) + x_sq * D(3.0 * kC)) * D(kK));
      return (D(1.0) + t) * D(0.5) + right;
    } else {
      return one_plus_erf(x) * D(0.5) + x * (exp_guarded(x * x * D(-0.5)) * D(kInvSqrt2Pi));
    }
  }

  // float GELU with PyTorch's float arithmetic (its f32 kernel computes in float, and
  // tests/pointwise_specials.h holds its answers: near erf = -1 the cancellation in
  // 1 + erf is part of the answer), erf / tanh computed in double lanes and rounded once
  // (libm's erff / tanhf). The tail is zero-padded so every element takes the same
  // vector path. The loops in float are plain C++ that the compiler vectorizes at this
  // level's width (-ffp-contract=off: no fused multiply-adds).
  static void gelu(float* out, const float* x, int64_t n, bool tanh) {
    alignas(64) double b[kChunk];
    const float alpha = static_cast<float>(kAlpha), k = static_cast<float>(kK), c = static_cast<float>(kC);
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = std::min(kChunk, n - s), padded = (m + WD - 1) / WD * WD;
      const float* xs = x + s;
      if (tanh) {
        for (int64_t i = 0; i < m; ++i) {
          const float v = xs[i], v3 = static_cast<float>(static_cast<double>(v) * v * v);  // pow(v, 3)
          b[i] = static_cast<double>((v + v3 * c) * k);
        }
      } else {
        for (int64_t i = 0; i < m; ++i) b[i] = static_cast<double>(xs[i] * alpha);
      }
      for (int64_t i = m; i < padded; ++i) b[i] = 0.0;
      for (int64_t i = 0; i < padded; i += WD) {
        const D a = xsimd::min(xsimd::max(D::load_aligned(b + i), D(-30.0)), D(30.0));  // erf, tanh = +-1 there
        (tanh ? xsimd::tanh(a) : xsimd::erf(a)).store_aligned(b + i);
      }
      for (int64_t i = 0; i < m; ++i) out[s + i] = (xs[i] * 0.5f) * (1.0f + static_cast<float>(b[i]));
    }
  }

  // g * gelu'(x) in double lanes, rounded once: within an ulp of the float64 gradient
  // (PyTorch's f32 backward is further off; test_parity_semantics accepts either).
  static void gelu_backward(float* out, const float* g, const float* x, int64_t n, bool tanh) {
    alignas(64) double bx[kChunk], bg[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = std::min(kChunk, n - s), padded = (m + WD - 1) / WD * WD;
      for (int64_t i = 0; i < m; ++i) bx[i] = x[s + i], bg[i] = g[s + i];
      for (int64_t i = m; i < padded; ++i) bx[i] = bg[i] = 0.0;
      for (int64_t i = 0; i < padded; i += WD) {
        const D v = D::load_aligned(bx + i);
        ((tanh ? dgelu_v<true>(v) : dgelu_v<false>(v)) * D::load_aligned(bg + i)).store_aligned(bx + i);
      }
      for (int64_t i = 0; i < m; ++i) out[s + i] = static_cast<float>(bx[i]);
    }
  }
};

}  // namespace

AG_ISA_KERNEL(gelu_row, &Gelu<Arch>::gelu);
AG_ISA_KERNEL(gelu_backward_row, &Gelu<Arch>::gelu_backward);

}  // namespace ag::kernels
