#pragma once
// Fused RMS norm kernels (rms_norm.cpp). Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

struct RmsNormForward {
  Tensor y;     // x's shape
  Tensor rstd;  // (rows): 1 / sqrt(mean(x^2) + eps) per normalized row
};
struct RmsNormGrads {
  Tensor dx, dw;
};
// Normalizes rows of the trailing n elements of x; weight (n elements) optional.
RmsNormForward rms_norm_forward(const Tensor& x, const Tensor& weight, int64_t n, double eps);
// g has x's shape; rstd comes from the forward. dw has normalized_shape.
RmsNormGrads rms_norm_backward(const Tensor& x, const Tensor& rstd, const Tensor& weight, const Tensor& g,
                               const Shape& normalized_shape, bool need_x, bool need_w);

}  // namespace ag::kernels
