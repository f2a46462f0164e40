// Normalization and regularization: fused primitives (kernels/fused.cpp).
#include "attograd/nn_ops.h"
#include "kernels/fused.h"
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
  // Fused primitive (kernels/fused.cpp); it equals the composite
  //   xc = x - mean(x);  y = xc * rsqrt(mean(xc^2) + eps) * weight + bias
  // (tests/test_fused.cpp checks both values and gradients against it).
  const int64_t len = numel(normalized_shape);
  K::LayerNormForward f = K::layer_norm_forward(x, weight, bias, len, eps);
  bool need = wants_grad(x) || wants_grad(weight) || wants_grad(bias);
  return record("layer_norm", f.y, {x, weight, bias},
                [sx = save_if(need, x), sm = save_if(need, f.mean), sr = save_if(need, f.rstd),
                 sw = save_if(need, weight), sb = save_if(need, bias), normalized_shape,
                 eps](const Tensor& g, NeedsGrad needs) {
                  if (grad_enabled()) {  // create_graph: differentiate the composite
                    auto composite = [&normalized_shape, eps](const std::vector<Tensor>& in) {
                      std::vector<int64_t> dims;
                      for (int64_t i = 0; i < normalized_shape.size(); ++i) dims.push_back(-1 - i);
                      Tensor xc = in[0] - mean(in[0], dims, true);
                      Tensor y = xc * rsqrt(mean(square(xc), dims, true) + eps);
                      if (in[1].defined()) y = y * in[1];
                      return in[2].defined() ? y + in[2] : y;
                    };
                    return composite_backward(composite, {sx.get(), sw.get(), sb.get()}, g, needs);
                  }
                  K::LayerNormGrads gr = K::layer_norm_backward(sx.get(), sm.get(), sr.get(), sw.get(), g,
                                                                normalized_shape, needs[0], needs[1], needs[2]);
                  return Grads{gr.dx, gr.dw, gr.db};
                });
}

// Inverted dropout: kept elements are scaled by 1/(1-p) so the expectation is x.
// out = x * mask with mask drawn in the same pass.   dx = g * mask
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  AG_CHECK(p >= 0 && p <= 1, ValueError, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  check_float(x, "dropout");
  if (p == 1) return x * 0.0;
  Generator& rng = gen ? *gen : default_generator();
  K::DropoutForward f = [&] {
    auto hold = rng.lock();  // the whole mask from one run of the default sequence
    return K::dropout_forward(x, p, rng);
  }();
  return record("dropout", f.y, {x}, [sm = save_if(wants_grad(x), f.mask)](const Tensor& g, NeedsGrad) {
    return Grads{g * sm.get()};
  });
}

}  // namespace ag
