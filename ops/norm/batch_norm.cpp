// Normalization over channels: batch_norm (a fused primitive, kernels/batch_norm.cpp,
// with the composite formula as its create_graph backward), group_norm (layer_norm over
// each sample's groups, then the per-channel affine) and instance_norm (batch_norm over
// (1, N * C, *), as PyTorch's).
//
// N batch, C channels, * the spatial dims (S their product), G groups.
#include <cstdint>
#include <utility>
#include <vector>

#include "../op_util.h"
#include "attograd/autocast.h"
#include "attograd/detail/error_context.h"
#include "attograd/ops/norm.h"
#include "kernels/batch_norm.h"
#include "kernels/half.h"

namespace ag {
// Named, inside the anonymous namespace: a unity build compiles this file with other ops
// sources as one, whose anonymous helpers would otherwise meet these.
namespace {
namespace bn {

// (1, C, 1, ...): a per-channel (C) tensor's shape to broadcast against x (N, C, *).
Shape channel_shape(const Tensor& x) {
  Shape s = Shape::filled(x.dim(), 1);
  s[1] = x.size(1);
  return s;
}

// Every dim but the channel dim 1.
std::vector<int64_t> non_channel_dims(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// y = (x - mean) * invstd * weight + bias, mean and invstd (C) given (eval), or the batch
// statistics (biased variance) when undefined (training): the fused kernel's definition,
// differentiated under create_graph. in = {x, weight, bias} (weight, bias may be undefined).
Tensor batch_norm_composite(const std::vector<Tensor>& in, const Tensor& mean, const Tensor& invstd, double eps) {
  const Tensor& x = in[0];
  const Shape cs = channel_shape(x);
  Tensor y;
  if (mean.defined()) {
    y = (x - reshape(mean.to(x.dtype()), cs)) * reshape(invstd.to(x.dtype()), cs);
  } else {
    const std::vector<int64_t> dims = non_channel_dims(x.dim());
    Tensor xc = x - ag::mean(x, dims, true);
    y = xc * rsqrt(ag::mean(square(xc), dims, true) + eps);
  }
  if (in[1].defined()) y = y * reshape(in[1], cs);
  return in[2].defined() ? y + reshape(in[2], cs) : y;
}

// A per-channel tensor: C elements (any shape, as PyTorch checks numel), x's dtype, or f32
// beside a bf16 / f16 input (PyTorch's mixed-precision batch norm).
void check_channel_tensor(const Tensor& t, const char* what, const Tensor& x, bool allow_f32_for_half) {
  if (!t.defined()) return;
  AG_CHECK(t.numel() == x.size(1), ShapeError, "batch_norm: ", what, " should contain ", x.size(1), " elements not ",
           t.numel(), " (", what, " shape ", t.shape(), ", input shape ", x.shape(), ")");
  const bool mixed = allow_f32_for_half && K::is_half(x) && t.dtype() == DType::f32;
  AG_CHECK(t.dtype() == x.dtype() || mixed, DTypeError, "batch_norm: ", what, " dtype ", t.dtype(),
           " differs from input dtype ", x.dtype(), " (input shape ", x.shape(), ")");
}

// running = (1 - momentum) * running + momentum * stat, in double (PyTorch's accumulate
// type), written in place outside the graph; stat (C) is the batch's.
void update_running(const Tensor& running, const Tensor& stat, double momentum) {
  if (!running.defined()) return;
  NoGradGuard no_grad;
  Tensor r = running;  // a handle on the caller's tensor
  r.copy_(reshape(stat.to(DType::f64) * momentum + running.to(DType::f64) * (1.0 - momentum), running.shape()));
}

}  // namespace bn
}  // namespace

// ---- batch_norm -------------------------------------------------------------------
// y = (x - mean) * invstd * w + b per channel; training: mean, invstd of the batch.
//   db = sum g;  dw = sum g xhat;  dx = invstd w (g - db / M - xhat dw / M)  (training)
//                                  dx = invstd w g                           (eval)
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight_in,
                  const Tensor& bias_in, bool training, double momentum, double eps) try {
  const Tensor x = detail::autocast_f32(input), weight = detail::autocast_f32(weight_in),
               bias = detail::autocast_f32(bias_in);
  check_float(x, "batch_norm");
  AG_CHECK(x.dim() >= 2, ShapeError, "batch_norm: expected an input of at least 2 dims (N, C, *), got shape ",
           x.shape());
  bn::check_channel_tensor(weight, "weight", x, true);
  bn::check_channel_tensor(bias, "bias", x, true);
  bn::check_channel_tensor(running_mean, "running_mean", x, true);
  bn::check_channel_tensor(running_var, "running_var", x, true);
  if (training) {
    int64_t per_channel = x.size(0);  // N * S
    for (int64_t d = 2; d < x.dim(); ++d) per_channel *= x.size(d);
    AG_CHECK(per_channel != 1, ValueError,
             "batch_norm: Expected more than 1 value per channel when training, got input size ", x.shape());
  } else {
    AG_CHECK(running_mean.defined() && running_var.defined(), ValueError,
             "batch_norm: running_mean and running_var must be defined in evaluation mode (training false); input "
             "shape ",
             x.shape());
  }
  if (x.numel() == 0) {  // as PyTorch: no statistics to take, the running ones untouched
    const Shape cs = bn::channel_shape(x);
    Tensor y = weight.defined() ? x * reshape(weight, cs) : clone(x);
    return bias.defined() ? y + reshape(bias, cs) : y;
  }
  K::BatchNormForward f = K::batch_norm_forward(x, weight, bias, running_mean, running_var, training, eps);
  if (training) {
    bn::update_running(running_mean, f.mean, momentum);
    bn::update_running(running_var, f.unbiased_var, momentum);
  }
  const bool need = wants_grad(x) || wants_grad(weight) || wants_grad(bias);
  return record(
      "batch_norm", f.y, {x, weight, bias},
      [sx = save_if(need, x), sm = save_if(need, f.mean), si = save_if(need, f.invstd), sw = save_if(need, weight),
       wshape = weight.defined() ? weight.shape() : Shape{}, bshape = bias.defined() ? bias.shape() : Shape{},
       training](const Tensor& g, NeedsGrad needs) {
        K::BatchNormGrads gr =
            K::batch_norm_backward(sx.get(), g, sm.get(), si.get(), sw.get(), training, needs[0], needs[1], needs[2]);
        // weight and bias hold C elements in any shape (PyTorch checks numel only)
        return Grads{gr.dx, gr.dw.defined() ? reshape(gr.dw, wshape) : Tensor{},
                     gr.db.defined() ? reshape(gr.db, bshape) : Tensor{}};
      },
      [&] {
        // eval: the mean and 1/std of this call (fresh tensors: the running stats may
        // change in place before backward); training: the batch's, recomputed.
        Tensor mean = training ? Tensor{} : f.mean, invstd = training ? Tensor{} : f.invstd;
        return Composite{[mean, invstd, eps](const std::vector<Tensor>& in) {
                           return bn::batch_norm_composite(in, mean, invstd, eps);
                         },
                         {Saved(x), Saved(weight), Saved(bias)}};
      });
} catch (const Error& e) { detail::rethrow_in_op("batch_norm", e); }

// ---- group_norm -------------------------------------------------------------------
// Each sample's G groups of C / G channels: x (N, C, *) -> (N, G, C / G * S), layer_norm
// over the last dim (fused, differentiable twice), back to x's shape, then w and b per
// channel.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight_in, const Tensor& bias_in,
                  double eps) try {
  const Tensor x = detail::autocast_f32(input), weight = detail::autocast_f32(weight_in),
               bias = detail::autocast_f32(bias_in);
  check_float(x, "group_norm");
  AG_CHECK(x.dim() >= 2, ShapeError, "group_norm: expected an input of at least 2 dims (N, C, *), got shape ",
           x.shape());
  const int64_t n = x.size(0), c = x.size(1);
  AG_CHECK(num_groups > 0, ValueError, "group_norm: num_groups must be positive, got ", num_groups);
  AG_CHECK(c % num_groups == 0, ShapeError,
           "group_norm: Expected number of channels in input to be divisible by num_groups, but got input of shape ",
           x.shape(), " and num_groups=", num_groups);
  for (const Tensor* t : {&weight, &bias}) {
    if (!t->defined()) continue;
    const char* what = t == &weight ? "weight" : "bias";
    AG_CHECK(t->dim() == 1 && t->numel() == c, ShapeError, "group_norm: Expected ", what,
             " to be a vector of size equal to the number of channels in input, but got ", what, " of shape ",
             t->shape(), " and input of shape ", x.shape());
    AG_CHECK(t->dtype() == x.dtype(), DTypeError, "group_norm: ", what, " dtype ", t->dtype(),
             " differs from input dtype ", x.dtype(), " (input shape ", x.shape(), ")");
  }
  const int64_t per_group = n * num_groups > 0 ? x.numel() / (n * num_groups) : 0;  // C / G * S
  Tensor y = reshape(layer_norm(reshape(x, {n, num_groups, per_group}), {per_group}, {}, {}, eps), x.shape());
  const Shape cs = bn::channel_shape(x);
  if (weight.defined()) y = y * reshape(weight, cs);
  return bias.defined() ? y + reshape(bias, cs) : y;
} catch (const Error& e) { detail::rethrow_in_op("group_norm", e); }

// ---- instance_norm ----------------------------------------------------------------
// batch_norm over x viewed as (1, N * C, *), the per-channel tensors repeated N times;
// the running stats then take the mean over N of their repeated copies (PyTorch's rule,
// also in eval, where the copies are unchanged).
Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) try {
  check_float(input, "instance_norm");
  AG_CHECK(input.dim() >= 2, ShapeError, "instance_norm: expected an input of at least 2 dims (N, C, *), got shape ",
           input.shape());
  const int64_t n = input.size(0), c = input.size(1);
  if (use_input_stats) {
    int64_t spatial = 1;
    for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
    AG_CHECK(spatial != 1, ValueError,
             "instance_norm: Expected more than 1 spatial element when training, got input size ", input.shape());
  } else {
    AG_CHECK(running_mean.defined() && running_var.defined(), ValueError,
             "instance_norm: running_mean and running_var must be defined when use_input_stats is false; input "
             "shape ",
             input.shape());
  }
  for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
    AG_CHECK(!t->defined() || t->numel() == c, ShapeError, "instance_norm: a per-channel tensor of shape ", t->shape(),
             " should contain ", c, " elements (input shape ", input.shape(), ")");
  auto repeated = [n](const Tensor& t) { return t.defined() ? repeat(reshape(t, {-1}), {n}) : Tensor{}; };
  Tensor rm, rv;  // (N * C) copies, updated by batch_norm
  {
    NoGradGuard no_grad;
    rm = repeated(running_mean);
    rv = repeated(running_var);
  }
  Shape folded = input.shape();
  folded[0] = 1;
  folded[1] = n * c;
  Tensor y =
      batch_norm(reshape(input, folded), rm, rv, repeated(weight), repeated(bias), use_input_stats, momentum, eps);
  for (auto [running, copies] : {std::pair{running_mean, rm}, std::pair{running_var, rv}}) {
    if (!running.defined()) continue;
    NoGradGuard no_grad;  // outside the graph, as batch_norm's own update
    Tensor r = running;
    r.copy_(reshape(mean(reshape(copies, {n, c}), {0}), running.shape()));
  }
  return reshape(y, input.shape());
} catch (const Error& e) { detail::rethrow_in_op("instance_norm", e); }

}  // namespace ag
