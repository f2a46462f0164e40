// RMS normalization (LLaMA's norm): a fused primitive (kernels/rms_norm.cpp) with the
// composite formula as its create_graph backward.
#include <limits>

#include "attograd/nn_ops.h"
#include "kernels/rms_norm.h"
#include "op_util.h"

namespace ag {

namespace {

// y = x * rsqrt(mean(x^2 over the last n dims) + eps) [* w], from primitives: the fused
// kernel's definition, differentiated under create_graph.
Tensor rms_norm_composite(const Tensor& x, const Tensor& w, int64_t n, double eps) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(-1 - i);
  Tensor y = x * rsqrt(mean(square(x), dims, true) + eps);
  return w.defined() ? y * w : y;
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps_in) {
  check_float(x, "rms_norm");
  const int64_t n = normalized_shape.size();
  bool ok = n >= 1 && x.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i) ok = x.shape()[x.dim() - n + i] == normalized_shape[i];
  AG_CHECK(ok, ShapeError, "rms_norm: input shape ", x.shape(), " does not end with normalized_shape ",
           normalized_shape);
  if (weight.defined()) {
    AG_CHECK(weight.shape() == normalized_shape, ShapeError, "rms_norm: weight shape ", weight.shape(),
             " differs from normalized_shape ", normalized_shape);
    AG_CHECK(weight.dtype() == x.dtype(), DTypeError, "rms_norm: weight dtype ", weight.dtype(),
             " differs from input dtype ", x.dtype(), " (input shape ", x.shape(), ")");
  }
  const double eps = eps_in ? *eps_in
                            : (x.dtype() == DType::f64 ? std::numeric_limits<double>::epsilon()
                                                       : static_cast<double>(std::numeric_limits<float>::epsilon()));
  AG_CHECK(eps >= 0, ValueError, "rms_norm: eps must be >= 0, got ", eps);
  const int64_t len = numel(normalized_shape);
  K::RmsNormForward f = K::rms_norm_forward(x, weight, len, eps);
  bool need = wants_grad(x) || wants_grad(weight);
  const int64_t nd = normalized_shape.size();
  auto composite = [nd, eps](const std::vector<Tensor>& in) { return rms_norm_composite(in[0], in[1], nd, eps); };
  return record(
      "rms_norm", f.y, {x, weight},
      [sx = save_if(need, x), sr = save_if(need, f.rstd), sw = save_if(need, weight), normalized_shape](
          const Tensor& g, NeedsGrad needs) {
        K::RmsNormGrads gr = K::rms_norm_backward(sx.get(), sr.get(), sw.get(), g, normalized_shape, needs[0], needs[1]);
        return Grads{gr.dx, gr.dw};
      },
      Composite{composite, {save_if(need, x), save_if(need, weight)}});
}

}  // namespace ag
