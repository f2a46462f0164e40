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

struct DropoutForward {
  Tensor y;     // x * mask
  Tensor mask;  // 0 or 1/(1-p), in x's dtype
};
DropoutForward dropout_forward(const Tensor& x, double p, Generator& gen);

}  // namespace ag::kernels
