// Class-index losses as composites of log_softmax, gather and reductions.
// Layout as PyTorch: classes on dim 1 of (N, C, d1, ...), or dim 0 of an unbatched (C).
// Shape legend: N batch, C classes, T the targets' shape ((N, d1, ...) or ()).
#include <algorithm>

#include "attograd/nn_ops.h"
#include "op_util.h"

namespace ag {
namespace {

int64_t class_dim(const Tensor& x) { return x.dim() == 1 ? 0 : 1; }

void check_targets(const Tensor& input, const Tensor& targets, const char* op) {
  AG_CHECK(input.dim() >= 1, ShapeError, op, ": input must have a class dim, got shape ", input.shape());
  AG_CHECK(targets.dtype() == DType::i64, DTypeError, op, ": targets must be i64 class indices, got ",
           targets.dtype(), " with shape ", targets.shape());
  Shape expect = input.shape();
  expect.erase(class_dim(input));
  AG_CHECK(targets.shape() == expect, ShapeError, op, ": input shape ", input.shape(),
           " expects targets of shape ", expect, ", got ", targets.shape());
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
    AG_CHECK(t == ignore_index || (t >= 0 && t < C), IndexError, op, ": target ", t, " is out of range for ",
             C, " classes (input shape ", input.shape(), ")");
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
  AG_CHECK(probs.dtype() == logits.dtype(), DTypeError, "cross_entropy: probability targets dtype ",
           probs.dtype(), " differs from logits dtype ", logits.dtype());
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

}  // namespace

Tensor nll_loss(const Tensor& logp, const Tensor& targets, const NLLOptions& opt) {
  check_float(logp, "nll_loss");
  check_targets(logp, targets, "nll_loss");
  check_weight(opt.weight, logp, logp.shape()[class_dim(logp)], "nll_loss");
  Tensor w = target_weights(logp, targets, opt.weight, opt.ignore_index, "nll_loss");  // (T)
  Tensor nll = picked_nll(logp, targets, opt.ignore_index);
  if (opt.weight.defined()) nll = nll * w;
  return reduce(nll, sum(w), opt.reduction);
}

Tensor nll_loss(const Tensor& logp, const Tensor& targets, int64_t ignore_index, Reduction reduction) {
  return nll_loss(logp, targets, NLLOptions{.ignore_index = ignore_index, .reduction = reduction});
}

// Class targets: (1 - eps) * nll + eps / C * smooth, where smooth_i = -sum_c w_c logp_ic
// (0 where ignored) and, for mean, both terms divide by the summed weights of the targets
// not ignored (PyTorch 1.13's cross_entropy_loss_label_smoothing).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& opt) {
  check_float(logits, "cross_entropy");
  AG_CHECK(logits.dim() >= 1, ShapeError, "cross_entropy: input must have a class dim, got shape ",
           logits.shape());
  AG_CHECK(opt.label_smoothing >= 0 && opt.label_smoothing <= 1, ValueError,
           "cross_entropy: label_smoothing must be in [0, 1], got ", opt.label_smoothing);
  const int64_t cd = class_dim(logits), C = logits.shape()[cd];
  check_weight(opt.weight, logits, C, "cross_entropy");
  if (targets.shape() == logits.shape()) return cross_entropy_probs(logits, targets, opt);
  check_targets(logits, targets, "cross_entropy");
  Tensor logp = log_softmax(logits, cd);
  Tensor nll = nll_loss(logp, targets, NLLOptions{opt.weight, opt.ignore_index, opt.reduction});
  if (opt.label_smoothing == 0) return nll;
  Tensor w = target_weights(logits, targets, opt.weight, opt.ignore_index, "cross_entropy");  // (T)
  Tensor wlogp = opt.weight.defined() ? logp * class_view(opt.weight, logits.dim()) : logp;
  Tensor valid = K::convert(ne(targets, static_cast<double>(opt.ignore_index)), logits.dtype());
  Tensor smooth = neg(sum(wlogp, {cd})) * valid;  // (T)
  Tensor smooth_red = reduce(smooth, sum(w), opt.reduction);
  return nll * (1.0 - opt.label_smoothing) + smooth_red * (opt.label_smoothing / static_cast<double>(C));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_float(input, "mse_loss");
  broadcast_shapes(input.shape(), target.shape(), "mse_loss");
  Tensor d = square(input - target);
  switch (reduction) {
    case Reduction::none: return d;
    case Reduction::sum: return sum(d);
    case Reduction::mean: return mean(d);
  }
  return d;
}

}  // namespace ag
