#pragma once
/// \file
/// Normalization over trailing dims or along a dim (ops/norm.cpp): layer_norm, rms_norm,
/// normalize. layer_norm and rms_norm are fused primitives whose create_graph backward
/// differentiates the composite formula, so second derivatives work.
#include <cstdint>
#include <optional>

#include "attograd/tensor.h"

namespace ag {

/// Normalizes over the trailing dims given by normalized_shape; weight and bias (that
/// shape) are optional. A fused primitive; under create_graph its backward differentiates
/// the composite (x - mean) * rsqrt(var + eps) * weight + bias, so second derivatives work.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// PyTorch 2.4's torch.nn.functional.rms_norm: over the trailing dims given by
/// normalized_shape,  y = x * rsqrt(mean(x^2) + eps) * weight  (weight of that shape,
/// optional; no mean is subtracted and there is no bias). eps defaults to the machine
/// epsilon of x's dtype (torch.finfo(x.dtype).eps: 2^-23 for f32, 2^-52 for f64).
/// A fused primitive (one pass per row forward and backward); under create_graph its
/// backward differentiates the composite formula above, so second derivatives work.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
/// x / max(||x||_p, eps) along dim (keeps the shape), torch's F.normalize for any order:
/// p = 0 counts the non-zeros, p < 0 is (sum |x|^p)^(1/p) (0 when an entry is 0), +-inf
/// max / min |x|. A zero row stays zero, with gradient g / eps.
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

}  // namespace ag
