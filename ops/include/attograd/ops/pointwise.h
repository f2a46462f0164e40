#pragma once
/// \file
/// Elementwise math and activation functions beyond ops.h's core set
/// (ops/math.cpp, ops/activation.cpp). PyTorch 1.13's formulas, values at 0, -0, +-inf
/// and NaN, and gradients (at kinks too). Inputs are f32 or f64; binary ops broadcast
/// and need both operands in one dtype (DTypeError otherwise).
#include <optional>
#include <string>

#include "attograd/nn_ops.h"
#include "attograd/ops.h"

namespace ag {

// ---- unary math (ops/math.cpp); same shape out ----
Tensor tan(const Tensor& x);  ///< inf near odd multiples of pi/2
Tensor asin(const Tensor& x);   ///< NaN outside [-1, 1]
Tensor acos(const Tensor& x);  ///< NaN outside [-1, 1]
Tensor atan(const Tensor& x);  ///< in (-pi/2, pi/2)
Tensor sinh(const Tensor& x);  ///< overflows to +-inf past ~89 (f32)
Tensor cosh(const Tensor& x);  ///< overflows to inf past ~89 (f32)
Tensor asinh(const Tensor& x);  ///< defined everywhere
Tensor acosh(const Tensor& x);  ///< NaN below 1
Tensor atanh(const Tensor& x);  ///< +-inf at +-1, NaN outside
Tensor log2(const Tensor& x);  ///< -inf at 0, NaN below
Tensor log10(const Tensor& x);  ///< -inf at 0, NaN below
Tensor log1p(const Tensor& x);  ///< log(1 + x), exact near 0
Tensor expm1(const Tensor& x);  ///< exp(x) - 1, exact near 0
Tensor exp2(const Tensor& x);  ///< 2^x
/// Rounding: zero gradient (recorded, so a graph passes through them).
Tensor floor(const Tensor& x);  ///< toward -inf
Tensor ceil(const Tensor& x);  ///< toward +inf
Tensor round(const Tensor& x);  ///< half to even, like torch.round
Tensor round(const Tensor& x, int64_t decimals);  ///< x * 10^d rounded half to even, / 10^d
Tensor trunc(const Tensor& x);  ///< toward 0
Tensor frac(const Tensor& x);   ///< x - trunc(x) (sign of x); gradient g
/// Predicates: bool, no gradient; integer inputs give all false.
Tensor isinf(const Tensor& x);
Tensor isnan(const Tensor& x);  ///< bool: true where x != x

// ---- binary math (ops/math.cpp); broadcast ----
Tensor atan2(const Tensor& self, const Tensor& other);  ///< angle of (other, self)
/// |self| with other's sign bit (-0 counts as negative). No gradient to other.
Tensor copysign(const Tensor& self, const Tensor& other);
Tensor logaddexp(const Tensor& a, const Tensor& b);  ///< log(exp(a) + exp(b)), stable
/// start + weight * (end - start); gradients to all three.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& start, const Tensor& end, double weight);  ///< a fixed weight: gradients to start and end
Tensor fmod(const Tensor& self, const Tensor& other);       ///< sign of self (C's fmod)
Tensor fmod(const Tensor& self, double other);  ///< sign of self (C's fmod)
Tensor remainder(const Tensor& self, const Tensor& other);  ///< sign of other (Python's %)
Tensor remainder(const Tensor& self, double other);  ///< sign of other (Python's %)
/// Tensor bounds (broadcast with x; at least one given). NaN anywhere gives NaN; with
/// min > max the result is max. Gradients as PyTorch's clamp_backward_min_max.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
/// Bool: a == b, or |a - b| <= atol + |rtol * b| (finite); NaNs equal when equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);

// ---- activations (ops/activation.cpp); same shape out ----
Tensor silu(const Tensor& x);  ///< x * sigmoid(x)
/// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);  ///< slope's gradient at 0
Tensor elu(const Tensor& x, double alpha = 1);   ///< x > 0 ? x : alpha (exp(x) - 1)
Tensor celu(const Tensor& x, double alpha = 1);  ///< x > 0 ? x : alpha (exp(x / alpha) - 1)
Tensor selu(const Tensor& x);                    ///< scale * elu(x, alpha), PyTorch's constants
Tensor hardtanh(const Tensor& x, double min_val = -1, double max_val = 1);  ///< zero grad at bounds
Tensor relu6(const Tensor& x);                   ///< hardtanh(x, 0, 6)
Tensor hardsigmoid(const Tensor& x);             ///< clamp(x + 3, 0, 6) / 6
Tensor hardswish(const Tensor& x);               ///< x * hardsigmoid(x)
Tensor mish(const Tensor& x);                    ///< x * tanh(softplus(x))
Tensor logsigmoid(const Tensor& x);              ///< -softplus(-x), stable
Tensor softsign(const Tensor& x);                ///< x / (1 + |x|)
Tensor softmin(const Tensor& x, int64_t dim);    ///< softmax(-x, dim)
/// gelu with PyTorch's string option: "none" or "tanh" (ValueError otherwise).
Tensor gelu(const Tensor& x, const std::string& approximate);

}  // namespace ag
