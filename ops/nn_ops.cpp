// Normalization and regularization, composed from primitives.
#include "attograd/nn_ops.h"
#include "op_util.h"

namespace ag {

// y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized dims
// (biased variance, as PyTorch).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  check_float(x, "layer_norm");
  const int64_t n = normalized_shape.size();
  bool ok = n >= 1 && x.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i) ok = x.shape()[x.dim() - n + i] == normalized_shape[i];
  AG_CHECK(ok, ShapeError, "layer_norm: input shape ", x.shape(), " does not end with normalized_shape ",
           normalized_shape);
  if (weight.defined())
    AG_CHECK(weight.shape() == normalized_shape, ShapeError, "layer_norm: weight shape ", weight.shape(),
             " differs from normalized_shape ", normalized_shape);
  if (bias.defined())
    AG_CHECK(bias.shape() == normalized_shape, ShapeError, "layer_norm: bias shape ", bias.shape(),
             " differs from normalized_shape ", normalized_shape);
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - n; i < x.dim(); ++i) dims.push_back(i);
  Tensor mu = mean(x, dims, true);
  Tensor xc = x - mu;
  Tensor y = xc * rsqrt(mean(square(xc), dims, true) + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

// Inverted dropout: kept elements are scaled by 1/(1-p) so the expectation is x.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  AG_CHECK(p >= 0 && p <= 1, ValueError, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  check_float(x, "dropout");
  if (p == 1) return x * 0.0;
  Tensor keep = bernoulli(x.shape(), 1.0 - p, x.dtype(), gen);
  return x * (keep * (1.0 / (1.0 - p)));
}

}  // namespace ag
