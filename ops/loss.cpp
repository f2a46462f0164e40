// Losses and distances. The class-index losses (cross_entropy, nll_loss) are composites
// of log_softmax, gather and reductions, laid out as PyTorch: classes on dim 1 of
// (N, C, d1, ...), or dim 0 of an unbatched (C). The others are composites of
// differentiable ops too, except binary_cross_entropy, whose clamped logs and
// clamped-denominator gradient are PyTorch's numerics rather than a composite's.
// Shape legend: N batch, C classes, T the targets' shape ((N, d1, ...) or ()).
#include "attograd/ops/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {
namespace {

int64_t class_dim(const Tensor& x) { return x.dim() == 1 ? 0 : 1; }

void check_targets(const Tensor& input, const Tensor& targets, const char* op) {
  AG_CHECK(input.dim() >= 1, ShapeError, op, ": input must have a class dim, got shape ", input.shape());
  AG_CHECK(targets.dtype() == DType::i64, DTypeError, op, ": targets must be i64 class indices, got ", targets.dtype(),
           " with shape ", targets.shape());
  Shape expect = input.shape();
  expect.erase(class_dim(input));
  AG_CHECK(targets.shape() == expect, ShapeError, op, ": input shape ", input.shape(), " expects targets of shape ",
           expect, ", got ", targets.shape());
}

void check_weight(const Tensor& weight, const Tensor& input, int64_t C, const char* op) {
  if (!weight.defined()) return;
  AG_CHECK(weight.dim() == 1 && weight.numel() == C, ShapeError, op, ": weight should be defined for all ", C,
           " classes or no classes, got weight of shape ", weight.shape(), " for input shape ", input.shape());
  AG_CHECK(weight.dtype() == input.dtype(), DTypeError, op, ": weight dtype ", weight.dtype(),
           " differs from input dtype ", input.dtype());
}

// weight (C) viewed as (1, C, 1, ...) to broadcast against an input of `ndim` dims.
Tensor class_view(const Tensor& weight, int64_t ndim) {
  Shape s = Shape::filled(ndim, 1);
  s[ndim == 1 ? 0 : 1] = weight.numel();
  return reshape(weight, s);
}

Tensor reduce(const Tensor& per_item, const Tensor& total_weight, Reduction r) {
  switch (r) {
    case Reduction::none: return per_item;
    case Reduction::sum: return sum(per_item);
    case Reduction::mean: return sum(per_item) / total_weight;
  }
  return per_item;
}

// Each target's weight (T): weight[t] (1 without class weights), 0 where ignored.
// Also checks that every target not ignored is a class.
Tensor target_weights(const Tensor& input, const Tensor& targets, const Tensor& weight, int64_t ignore_index,
                      const char* op) {
  const int64_t C = input.shape()[class_dim(input)];
  for (int64_t t : targets.to_vector<int64_t>())
    AG_CHECK(t == ignore_index || (t >= 0 && t < C), IndexError, op, ": target ", t, " is out of range for ", C,
             " classes (input shape ", input.shape(), ")");
  Tensor valid = ne(targets, static_cast<double>(ignore_index));
  Tensor valid_f = K::convert(valid, input.dtype());
  if (!weight.defined()) return valid_f;
  Tensor safe = K::where(valid, targets, zeros(Shape{}, DType::i64));
  Tensor w = reshape(index_select(weight, 0, reshape(safe, {-1})), targets.shape());
  return w * valid_f;
}

// -log_probs[i, t_i] (T); 0 where ignored.
Tensor picked_nll(const Tensor& logp, const Tensor& targets, int64_t ignore_index) {
  const int64_t cd = class_dim(logp);
  Tensor valid = ne(targets, static_cast<double>(ignore_index));
  Tensor safe = K::where(valid, targets, zeros(Shape{}, DType::i64));
  Tensor picked = squeeze(gather(logp, cd, unsqueeze(safe, cd)), cd);
  return neg(picked) * K::convert(valid, logp.dtype());
}

// Soft labels (PyTorch's cross_entropy_loss_prob_target): -sum_c w_c q_c logp_c per item,
// with q smoothed towards uniform; mean divides by the item count, not by the weights.
Tensor cross_entropy_probs(const Tensor& logits, const Tensor& probs, const CrossEntropyOptions& opt) {
  AG_CHECK(probs.is_floating_point(), DTypeError,
           "cross_entropy: targets of the logits' shape are class probabilities and must be floating, got ",
           probs.dtype(), " with shape ", probs.shape());
  AG_CHECK(probs.dtype() == logits.dtype(), DTypeError, "cross_entropy: probability targets dtype ", probs.dtype(),
           " differs from logits dtype ", logits.dtype());
  AG_CHECK(opt.ignore_index < 0, ValueError,
           "cross_entropy: ignore_index is not supported for probability targets, got ", opt.ignore_index);
  const int64_t cd = class_dim(logits), C = logits.shape()[cd];
  Tensor logp = log_softmax(logits, cd);
  Tensor q = opt.label_smoothing > 0
                 ? probs * (1.0 - opt.label_smoothing) + opt.label_smoothing / static_cast<double>(C)
                 : probs;
  Tensor prod = logp * q;  // logits' shape
  if (opt.weight.defined()) prod = prod * class_view(opt.weight, logits.dim());
  switch (opt.reduction) {
    case Reduction::none: return neg(sum(prod, {cd}));
    case Reduction::sum: return neg(sum(prod));
    case Reduction::mean:  // 0/0 = NaN for empty input, as PyTorch
      return neg(sum(prod)) / static_cast<double>(logits.numel() / std::max<int64_t>(C, 1));
  }
  return prod;
}

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::none: return loss;
    case Reduction::sum: return sum(loss);
    case Reduction::mean: return mean(loss);  // NaN for an empty loss, as PyTorch
  }
  return loss;
}

void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  AG_CHECK(target.shape() == input.shape(), ShapeError, op, ": target shape ", target.shape(),
           " must be the same as input shape ", input.shape());
}

void check_same_dtype(const Tensor& input, const Tensor& other, const char* what, const char* op) {
  if (!other.defined()) return;
  AG_CHECK(other.dtype() == input.dtype(), DTypeError, op, ": ", what, " dtype ", other.dtype(), " (shape ",
           other.shape(), ") differs from input dtype ", input.dtype(), " (shape ", input.shape(), ")");
}

// weight / pos_weight must broadcast to the input's shape (the loss keeps that shape).
void check_broadcasts_to(const Tensor& w, const Tensor& input, const char* what, const char* op) {
  if (!w.defined()) return;
  const Shape &ws = w.shape(), &xs = input.shape();
  bool ok = ws.size() <= xs.size();
  for (int64_t i = 1; ok && i <= ws.size(); ++i) ok = ws[ws.size() - i] == 1 || ws[ws.size() - i] == xs[xs.size() - i];
  AG_CHECK(ok, ShapeError, op, ": ", what, " shape ", ws, " cannot be broadcast to input shape ", xs);
}

// PyTorch 1.13 (x, t) -> (t - 1) max(log(1 - x), -100) - t max(log(x), -100), in x's dtype
// (log(1 - x), not log1p(-x): a float 1e-10 with target 0 gives 0, as PyTorch).
template <class T>
Tensor bce_values(const Tensor& x, const Tensor& t) {
  std::vector<T> xs = x.to_vector<T>(), ts = t.to_vector<T>(), out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const T xv = xs[i], tv = ts[i];
    AG_CHECK(xv >= T(0) && xv <= T(1), ValueError,
             "binary_cross_entropy: all elements of input should be between 0 and 1, got ", xv, " (input shape ",
             x.shape(), ")");
    out[i] = (tv - T(1)) * std::max(T(std::log(T(1) - xv)), T(-100)) - tv * std::max(T(std::log(xv)), T(-100));
  }
  return Tensor::from_vector(out, x.shape());
}

// Unweighted pointwise BCE with PyTorch's gradients (its EPSILON is the float 1e-12f):
//   dx = g (x - t) / max(x (1 - x), 1e-12)    dt = -g logit(x) = -g log(x / (1 - x))
Tensor bce_pointwise(const Tensor& x, const Tensor& t) {
  Tensor out = x.dtype() == DType::f64 ? bce_values<double>(x, t) : bce_values<float>(x, t);
  if (out.dtype() != x.dtype()) out = K::convert(out, x.dtype());  // bf16 / f16: computed in f32, rounded once
  bool need = wants_grad(x) || wants_grad(t);
  return record("binary_cross_entropy", out, {x, t},
                [sx = save_if(need, x), st = save_if(need, t)](const Tensor& g, NeedsGrad needs) {
                  const Tensor &x = sx.get(), &t = st.get();
                  const double eps = static_cast<double>(1e-12f);
                  Tensor gx, gt;
                  if (needs[0]) gx = g * (x - t) / maximum(x * rsub(1.0, x), full(Shape{}, eps, x.dtype()));
                  if (needs[1]) gt = neg(g * log(x / rsub(1.0, x)));
                  return Grads{gx, gt};
                });
}

// x * log(y), 0 where x == 0 unless y is NaN (PyTorch's xlogy). Gradients as PyTorch's:
// dx = g log(y) (0 where x == 0), dy = g x / y (so 0 / 0 = NaN at x == y == 0).
Tensor xlogy(const Tensor& x, const Tensor& y) {
  Tensor out;
  {
    NoGradGuard ng;
    Tensor zero = logical_and(eq(x, 0.0), eq(y, y));
    out = where(zero, 0.0, x * log(y));
  }
  bool need = wants_grad(x) || wants_grad(y);
  return record(
      "xlogy", out, {x, y},
      [sx = save_if(need, x), sy = save_if(need, y), xs = x.shape(), ys = y.shape()](const Tensor& g, NeedsGrad needs) {
        const Tensor &x = sx.get(), &y = sy.get();
        Tensor gx, gy;
        if (needs[0]) gx = sum_to(where(ne(x, 0.0), g * log(y), 0.0), xs);
        if (needs[1]) gy = sum_to(g * x / y, ys);
        return Grads{gx, gy};
      });
}

// max(x, lo) whose gradient passes through unchanged (PyTorch 1.13's cosine_similarity
// clamps its squared norms in place under no_grad).
Tensor clamp_min_passthrough(const Tensor& x, double lo) {
  Tensor out = K::clamp(x, lo, std::nullopt);
  return record("clamp_min_passthrough", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

// nll_loss, its checks naming `op` (cross_entropy calls it on the log-probabilities).
Tensor nll_loss_as(const Tensor& logp_in, const Tensor& targets, const NLLOptions& opt, const char* op) try {
  const Tensor logp = detail::autocast_f32(logp_in);
  check_float(logp, op);
  check_targets(logp, targets, op);
  check_weight(opt.weight, logp, logp.shape()[class_dim(logp)], op);
  Tensor w = target_weights(logp, targets, opt.weight, opt.ignore_index, op);  // (T)
  Tensor nll = picked_nll(logp, targets, opt.ignore_index);
  if (opt.weight.defined()) nll = nll * w;
  return reduce(nll, sum(w), opt.reduction);
} catch (const Error& e) { detail::rethrow_in_op(op, e); }

}  // namespace

// ---- classification over C classes -------------------------------------------------
Tensor nll_loss(const Tensor& logp, const Tensor& targets, const NLLOptions& opt) {
  return nll_loss_as(logp, targets, opt, "nll_loss");
}

Tensor nll_loss(const Tensor& logp, const Tensor& targets, int64_t ignore_index, Reduction reduction) {
  return nll_loss(logp, targets, NLLOptions{.ignore_index = ignore_index, .reduction = reduction});
}

// Class targets: (1 - eps) * nll + eps / C * smooth, where smooth_i = -sum_c w_c logp_ic
// (0 where ignored) and, for mean, both terms divide by the summed weights of the targets
// not ignored (PyTorch 1.13's cross_entropy_loss_label_smoothing).
Tensor cross_entropy(const Tensor& logits_in, const Tensor& targets_in, const CrossEntropyOptions& opt) try {
  const Tensor logits = detail::autocast_f32(logits_in), targets = detail::autocast_f32(targets_in);
  check_float(logits, "cross_entropy");
  AG_CHECK(logits.dim() >= 1, ShapeError, "cross_entropy: input must have a class dim, got shape ", logits.shape());
  AG_CHECK(opt.label_smoothing >= 0 && opt.label_smoothing <= 1, ValueError,
           "cross_entropy: label_smoothing must be in [0, 1], got ", opt.label_smoothing);
  const int64_t cd = class_dim(logits), C = logits.shape()[cd];
  check_weight(opt.weight, logits, C, "cross_entropy");
  if (targets.shape() == logits.shape()) return cross_entropy_probs(logits, targets, opt);
  check_targets(logits, targets, "cross_entropy");
  Tensor logp = log_softmax(logits, cd);
  Tensor nll = nll_loss_as(logp, targets, NLLOptions{opt.weight, opt.ignore_index, opt.reduction}, "cross_entropy");
  if (opt.label_smoothing == 0) return nll;
  Tensor w = target_weights(logits, targets, opt.weight, opt.ignore_index, "cross_entropy");  // (T)
  Tensor wlogp = opt.weight.defined() ? logp * class_view(opt.weight, logits.dim()) : logp;
  Tensor valid = K::convert(ne(targets, static_cast<double>(opt.ignore_index)), logits.dtype());
  Tensor smooth = neg(sum(wlogp, {cd})) * valid;  // (T)
  Tensor smooth_red = reduce(smooth, sum(w), opt.reduction);
  return nll * (1.0 - opt.label_smoothing) + smooth_red * (opt.label_smoothing / static_cast<double>(C));
} catch (const Error& e) { detail::rethrow_in_op("cross_entropy", e); }

// ---- binary classification ----------------------------------------------------
Tensor binary_cross_entropy(const Tensor& input_in, const Tensor& target_in, const Tensor& weight_in,
                            Reduction reduction) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in),
               weight = detail::autocast_f32(weight_in);
  check_float(input, "binary_cross_entropy");
  check_same_shape(input, target, "binary_cross_entropy");
  check_same_dtype(input, target, "target", "binary_cross_entropy");
  check_same_dtype(input, weight, "weight", "binary_cross_entropy");
  Tensor loss = bce_pointwise(input, target);
  check_broadcasts_to(weight, input, "weight", "binary_cross_entropy");
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
} catch (const Error& e) { detail::rethrow_in_op("binary_cross_entropy", e); }

// PyTorch 1.13's forward, term for term: m = max(-x, 0);
// (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), lw = (pw - 1) t + 1.
Tensor binary_cross_entropy_with_logits(const Tensor& input_in, const Tensor& target_in, const Tensor& weight_in,
                                        const Tensor& pos_weight_in, Reduction reduction) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in),
               weight = detail::autocast_f32(weight_in), pos_weight = detail::autocast_f32(pos_weight_in);
  const char* op = "binary_cross_entropy_with_logits";
  check_float(input, op);
  check_same_shape(input, target, op);
  check_same_dtype(input, target, "target", op);
  check_same_dtype(input, weight, "weight", op);
  check_same_dtype(input, pos_weight, "pos_weight", op);
  check_broadcasts_to(weight, input, "weight", op);
  check_broadcasts_to(pos_weight, input, "pos_weight", op);
  Tensor m = relu(neg(input));
  Tensor log_sum = log(exp(neg(m)) + exp(neg(input) - m));  // log(1 + exp(-x)) - m
  Tensor loss;  // summed in PyTorch's order, so that values agree to the last bit
  if (pos_weight.defined()) {
    Tensor lw = (pos_weight - 1.0) * target + 1.0;
    loss = rsub(1.0, target) * input + lw * (log_sum + m);
  } else {
    loss = rsub(1.0, target) * input + m + log_sum;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
} catch (const Error& e) { detail::rethrow_in_op("binary_cross_entropy_with_logits", e); }

// ---- regression -----------------------------------------------------------------
Tensor mse_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in);
  check_float(input, "mse_loss");
  broadcast_shapes(input.shape(), target.shape(), "mse_loss");
  Tensor d = square(input - target);
  switch (reduction) {
    case Reduction::none: return d;
    case Reduction::sum: return sum(d);
    case Reduction::mean: return mean(d);
  }
  return d;
} catch (const Error& e) { detail::rethrow_in_op("mse_loss", e); }

Tensor l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in);
  check_float(input, "l1_loss");
  broadcast_shapes(input.shape(), target.shape(), "l1_loss");
  return reduce(abs(input - target), reduction);
} catch (const Error& e) { detail::rethrow_in_op("l1_loss", e); }

// The quadratic branch squares clamp(d, -beta, beta), so an infinite d sends no 0 * inf
// into the gradient through the branch that where() leaves out.
Tensor smooth_l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction, double beta) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in);
  check_float(input, "smooth_l1_loss");
  AG_CHECK(beta >= 0, ValueError, "smooth_l1_loss: beta must not be negative, got ", beta);
  broadcast_shapes(input.shape(), target.shape(), "smooth_l1_loss");
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = input - target, ad = abs(d);
  Tensor quad = square(clamp(d, -beta, beta)) * 0.5 / beta;
  return reduce(where(lt(ad, beta), quad, ad - 0.5 * beta), reduction);
} catch (const Error& e) { detail::rethrow_in_op("smooth_l1_loss", e); }

Tensor huber_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction, double delta) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in);
  check_float(input, "huber_loss");
  AG_CHECK(delta > 0, ValueError, "huber_loss: delta must be positive, got ", delta);
  broadcast_shapes(input.shape(), target.shape(), "huber_loss");
  Tensor d = input - target, ad = abs(d);
  Tensor quad = square(clamp(d, -delta, delta)) * 0.5;
  return reduce(where(lt(ad, delta), quad, (ad - 0.5 * delta) * delta), reduction);
} catch (const Error& e) { detail::rethrow_in_op("huber_loss", e); }

// ---- distributions --------------------------------------------------------------
Tensor kl_div(const Tensor& input_in, const Tensor& target_in, KLDivReduction reduction, bool log_target) try {
  const Tensor input = detail::autocast_f32(input_in), target = detail::autocast_f32(target_in);
  check_float(input, "kl_div");
  check_same_dtype(input, target, "target", "kl_div");
  broadcast_shapes(input.shape(), target.shape(), "kl_div");
  Tensor loss = log_target ? exp(target) * (target - input) : xlogy(target, target) - target * input;
  switch (reduction) {
    case KLDivReduction::none: return loss;
    case KLDivReduction::sum: return sum(loss);
    case KLDivReduction::mean: return mean(loss);
    case KLDivReduction::batchmean:
      return input.dim() == 0 ? sum(loss) : sum(loss) / static_cast<double>(input.shape()[0]);
  }
  return loss;
} catch (const Error& e) { detail::rethrow_in_op("kl_div", e); }

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  const KLDivReduction r = reduction == Reduction::none  ? KLDivReduction::none
                           : reduction == Reduction::sum ? KLDivReduction::sum
                                                         : KLDivReduction::mean;
  return kl_div(input, target, r, log_target);
}

// ---- distances ------------------------------------------------------------------
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) try {
  check_float(x1, "cosine_similarity");
  check_same_dtype(x1, x2, "x2", "cosine_similarity");
  Shape s = broadcast_shapes(x1.shape(), x2.shape(), "cosine_similarity");
  const int64_t d = wrap_dim(dim, s.size(), "cosine_similarity");
  Tensor a = expand(x1, s), b = expand(x2, s);
  Tensor n1 = sqrt(clamp_min_passthrough(sum(a * a, {d}, true), eps * eps));  // s with dim d = 1
  Tensor n2 = sqrt(clamp_min_passthrough(sum(b * b, {d}, true), eps * eps));
  return sum((a / n1) * (b / n2), {d});
} catch (const Error& e) { detail::rethrow_in_op("cosine_similarity", e); }

}  // namespace ag
