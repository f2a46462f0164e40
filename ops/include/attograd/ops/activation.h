#pragma once
/// \file
/// Activation functions (ops/activation.cpp): x's shape out. PyTorch 1.13's formulas,
/// values at 0, -0, +-inf and NaN, and gradients (at kinks too: leaky_relu's slope at 0,
/// hardtanh's zero at its bounds). Inputs are f32 or f64.
#include <string>

#include "attograd/tensor.h"

namespace ag {

// ---- rectifiers and sigmoids ----
Tensor relu(const Tensor& x);     ///< same shape: max(x, 0); gradient 0 at 0
Tensor sigmoid(const Tensor& x);  ///< same shape: 1 / (1 + e^-x), computed without overflow
Tensor silu(const Tensor& x);     ///< x * sigmoid(x)
/// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);  ///< slope's gradient at 0
Tensor elu(const Tensor& x, double alpha = 1);                     ///< x > 0 ? x : alpha (exp(x) - 1)
Tensor celu(const Tensor& x, double alpha = 1);                    ///< x > 0 ? x : alpha (exp(x / alpha) - 1)
Tensor selu(const Tensor& x);                                      ///< scale * elu(x, alpha), PyTorch's constants
Tensor hardtanh(const Tensor& x, double min_val = -1, double max_val = 1);  ///< zero grad at bounds
Tensor relu6(const Tensor& x);                                              ///< hardtanh(x, 0, 6)
Tensor hardsigmoid(const Tensor& x);                                        ///< clamp(x + 3, 0, 6) / 6
Tensor hardswish(const Tensor& x);                                          ///< x * hardsigmoid(x)
Tensor mish(const Tensor& x);                                               ///< x * tanh(softplus(x))
Tensor logsigmoid(const Tensor& x);                                         ///< -softplus(-x), stable
Tensor softsign(const Tensor& x);                                           ///< x / (1 + |x|)

// ---- GELU ----
/// GELU's form: none = exact x * Phi(x) with erf; tanh = the tanh approximation.
enum class GeluApprox { none, tanh };
Tensor gelu(const Tensor& x, GeluApprox approximate = GeluApprox::none);  ///< same shape
/// gelu with PyTorch's string option: "none" or "tanh" (ValueError otherwise).
Tensor gelu(const Tensor& x, const std::string& approximate);
/// grad_output * gelu'(x) (LibTorch's torch::gelu_backward): gelu's gradient as an op of
/// its own, so that it is differentiable again. grad_output has x's shape and dtype.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& x, GeluApprox approximate = GeluApprox::none);

}  // namespace ag
