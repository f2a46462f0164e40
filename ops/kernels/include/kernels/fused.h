#pragma once
// Fused layer norm and dropout kernels (fused.cpp). Internal header.
#include "kernels/kernels.h"

namespace ag {
class Generator;
}

namespace ag::kernels {

struct LayerNormForward {
  Tensor y;     // x's shape
  Tensor mean;  // (rows): per normalized row
  Tensor rstd;  // (rows): 1 / sqrt(var + eps)
};
struct LayerNormGrads {
  Tensor dx, dw, db;
};
// Normalizes rows of the trailing n elements; weight and bias (n elements) optional.
LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t n, double eps);
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                   const Tensor& g, const Shape& normalized_shape, bool need_x, bool need_w,
                                   bool need_b);

// x * mask, mask 0 or 1/(1-p) elementwise, drawn from Philox under `key` by the element's
// index in x's row-major order: the same key gives the same mask at any thread count, so
// dropout's backward draws it again (g * mask) instead of saving it. 16-bit x: widened,
// times the f32 mask, rounded once (the f32 path's bits); with rounded_mask, times the
// mask rounded to x's dtype and widened (the bits of the 16-bit mask backward used to
// save). Contiguous result.
Tensor dropout_apply(const Tensor& x, double p, uint64_t key, bool rounded_mask = false);

}  // namespace ag::kernels
