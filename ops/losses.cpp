// Losses as composites of log_softmax, gather and reductions.
// Layout as PyTorch: classes on dim 1 of (N, C, d1, ...), or dim 0 of an unbatched (C).
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

Tensor reduce(const Tensor& per_item, const Tensor& count, Reduction r) {
  switch (r) {
    case Reduction::none: return per_item;
    case Reduction::sum: return sum(per_item);
    case Reduction::mean: return sum(per_item) / count;
  }
  return per_item;
}

}  // namespace

Tensor nll_loss(const Tensor& logp, const Tensor& targets, int64_t ignore_index, Reduction reduction) {
  check_float(logp, "nll_loss");
  check_targets(logp, targets, "nll_loss");
  const int64_t cd = class_dim(logp), C = logp.shape()[cd];
  Tensor valid = ne(targets, static_cast<double>(ignore_index));
  for (int64_t t : targets.to_vector<int64_t>())
    AG_CHECK(t == ignore_index || (t >= 0 && t < C), IndexError, "nll_loss: target ", t,
             " is out of range for ", C, " classes (input shape ", logp.shape(), ")");
  Tensor safe = K::where(valid, targets, zeros(Shape{}, DType::i64));
  Tensor picked = squeeze(gather(logp, cd, unsqueeze(safe, cd)), cd);  // targets' shape
  Tensor w = K::convert(valid, logp.dtype());
  Tensor count = sum(w);
  return reduce(neg(picked) * w, count, reduction);
}

// (1 - eps) * nll + eps / C * (-sum_c logp_c), both over the targets not ignored.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& opt) {
  check_float(logits, "cross_entropy");
  check_targets(logits, targets, "cross_entropy");
  AG_CHECK(opt.label_smoothing >= 0 && opt.label_smoothing <= 1, ValueError,
           "cross_entropy: label_smoothing must be in [0, 1], got ", opt.label_smoothing);
  const int64_t cd = class_dim(logits), C = logits.shape()[cd];
  Tensor logp = log_softmax(logits, cd);
  Tensor nll = nll_loss(logp, targets, opt.ignore_index, opt.reduction);
  if (opt.label_smoothing == 0) return nll;
  Tensor w = K::convert(ne(targets, static_cast<double>(opt.ignore_index)), logits.dtype());
  Tensor smooth = neg(sum(logp, {cd})) * w;  // targets' shape
  Tensor smooth_red = reduce(smooth, sum(w), opt.reduction);
  return nll * (1.0 - opt.label_smoothing) + smooth_red * (opt.label_smoothing / static_cast<double>(C));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_float(input, "mse_loss");
  AG_CHECK(input.shape() == target.shape(), ShapeError, "mse_loss: input shape ", input.shape(),
           " and target shape ", target.shape(), " differ");
  Tensor d = square(input - target);
  switch (reduction) {
    case Reduction::none: return d;
    case Reduction::sum: return sum(d);
    case Reduction::mean: return mean(d);
  }
  return d;
}

}  // namespace ag
