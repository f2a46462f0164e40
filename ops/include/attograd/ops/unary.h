#pragma once
/// \file
/// Elementwise math of one tensor (ops/unary.cpp): x's shape out. PyTorch 1.13's formulas,
/// values at 0, -0, +-inf and NaN, and gradients (at kinks too). Inputs are f32 or f64.
#include <cstdint>
#include <optional>

#include "attograd/tensor.h"

namespace ag {

// ---- arithmetic ----
Tensor neg(const Tensor& x);     ///< same shape: -x
Tensor abs(const Tensor& x);     ///< same shape: |x|; gradient sign(x), 0 at 0
Tensor sign(const Tensor& x);    ///< no gradient (zero)
Tensor square(const Tensor& x);  ///< same shape: x * x
Tensor sqrt(const Tensor& x);    ///< same shape: NaN below 0
Tensor rsqrt(const Tensor& x);   ///< same shape: 1 / sqrt(x)

// ---- exponentials and logarithms ----
Tensor exp(const Tensor& x);    ///< same shape: e^x
Tensor exp2(const Tensor& x);   ///< 2^x
Tensor expm1(const Tensor& x);  ///< exp(x) - 1, exact near 0
Tensor log(const Tensor& x);    ///< same shape: natural log; -inf at 0, NaN below
Tensor log2(const Tensor& x);   ///< -inf at 0, NaN below
Tensor log10(const Tensor& x);  ///< -inf at 0, NaN below
Tensor log1p(const Tensor& x);  ///< log(1 + x), exact near 0

// ---- trigonometric and hyperbolic ----
Tensor sin(const Tensor& x);    ///< same shape: sine
Tensor cos(const Tensor& x);    ///< same shape: cosine
Tensor tan(const Tensor& x);    ///< inf near odd multiples of pi/2
Tensor asin(const Tensor& x);   ///< NaN outside [-1, 1]
Tensor acos(const Tensor& x);   ///< NaN outside [-1, 1]
Tensor atan(const Tensor& x);   ///< in (-pi/2, pi/2)
Tensor sinh(const Tensor& x);   ///< overflows to +-inf past ~89 (f32)
Tensor cosh(const Tensor& x);   ///< overflows to inf past ~89 (f32)
Tensor tanh(const Tensor& x);   ///< same shape: gradient 1 - tanh^2
Tensor asinh(const Tensor& x);  ///< defined everywhere
Tensor acosh(const Tensor& x);  ///< NaN below 1
Tensor atanh(const Tensor& x);  ///< +-inf at +-1, NaN outside

// ---- special functions ----
Tensor erf(const Tensor& x);  ///< same shape: the Gauss error function

// ---- rounding: zero gradient (recorded, so a graph passes through them) ----
Tensor floor(const Tensor& x);                    ///< toward -inf
Tensor ceil(const Tensor& x);                     ///< toward +inf
Tensor round(const Tensor& x);                    ///< half to even, like torch.round
Tensor round(const Tensor& x, int64_t decimals);  ///< x * 10^d rounded half to even, / 10^d
Tensor trunc(const Tensor& x);                    ///< toward 0
Tensor frac(const Tensor& x);                     ///< x - trunc(x) (sign of x); gradient g

// ---- clamp ----
/// Same shape, limited to [min, max] (either may be absent); no gradient outside.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
/// Tensor bounds (broadcast with x; at least one given). NaN anywhere gives NaN; with
/// min > max the result is max. Gradients as PyTorch's clamp_backward_min_max.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

}  // namespace ag
