#pragma once
// PyTorch's GELU as references for the dispatched GELU rows and the gelu ops
// (test_simd_elementwise.cpp, test_simd_elementwise/ops.cpp): forward, gradient, how far off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

#include "simd_checks.h"

namespace gelu_reference {

// PyTorch's float GELU: float arithmetic, erf / tanh correctly rounded (libm's erff).
inline float gelu_ref(float x, bool tanh_form) {
  const float alpha = static_cast<float>(std::numbers::sqrt2 / 2);
  const float k = static_cast<float>(std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5), c = 0.044715f;
  if (tanh_form) {
    const float x3 = static_cast<float>(std::pow(static_cast<double>(x), 3.0));
    return (x * 0.5f) * (1.0f + static_cast<float>(std::tanh(static_cast<double>((x + x3 * c) * k))));
  }
  return (x * 0.5f) * (1.0f + static_cast<float>(std::erf(static_cast<double>(x * alpha))));
}

// gelu'(x) in float64 (the derivation in ops/activation.cpp).
inline double dgelu_ref(double x, bool tanh_form) {
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
inline int gelu_mismatches(const std::vector<float>& x, const std::vector<float>& y, bool tanh_form) {
  int bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = gelu_ref(x[i], tanh_form), got = y[i];
    const bool ok = simd_checks::same_bits(got, want) || std::abs(got - want) <= std::abs(x[i]) * 0.5f * 6e-8f + 1e-37f;
    if (!ok) INFO("x = ", x[i], ": got ", got, ", want ", want);
    bad += !ok;
  }
  return bad;
}

// The largest distance in float ulps of dx = g gelu'(x) from the float64 gradient.
inline int gelu_backward_worst_ulps(const std::vector<float>& g, const std::vector<float>& x,
                                    const std::vector<float>& dx, bool tanh_form) {
  int worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(double(g[i]) * dgelu_ref(x[i], tanh_form));
    worst = std::max(worst, std::abs(want) < 1e-30f ? 0 : simd_checks::ulps_apart(dx[i], want));
  }
  return worst;
}

}  // namespace gelu_reference
