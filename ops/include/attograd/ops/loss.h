#pragma once
/// \file
/// Losses and distances (ops/loss.cpp). PyTorch 1.13's formulas, defaults and gradients.
/// Shape legend: N batch, C classes.
#include <cstdint>

#include "attograd/tensor.h"

namespace ag {

/// How a loss combines its per-element values: none, mean or sum.
enum class Reduction { none, mean, sum };

// ---- classification over C classes ----
/// Class weights (C) scale each target's term; mean then divides by the summed weights of
/// the targets not ignored (as PyTorch). `weight` sits last so that designated
/// initializers written before it still compile.
struct CrossEntropyOptions {
  /// Targets equal to this class add no loss and are left out of the mean.
  int64_t ignore_index = -100;
  /// In [0, 1]: the share of the target mass spread evenly over the classes.
  double label_smoothing = 0.0;
  /// How the per-element losses combine: none (input's shape), mean or sum.
  Reduction reduction = Reduction::mean;
  Tensor weight = {};  ///< (C) or undefined
};
/// PyTorch's layout: logits (N, C) or (N, C, d1, ...) or (C); targets i64 (N) or
/// (N, d1, ...) or () class indices, or float probabilities of logits' shape (soft
/// labels: mean divides by N * d1 * ..., ignore_index must stay negative). label_smoothing
/// mixes the targets with the uniform distribution over C.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& opt = {});
/// nll_loss's options, as CrossEntropyOptions without label smoothing.
struct NLLOptions {
  Tensor weight = {};  ///< (C) or undefined
  /// Targets equal to this class add no loss and are left out of the mean.
  int64_t ignore_index = -100;
  /// How the per-element losses combine: none (input's shape), mean or sum.
  Reduction reduction = Reduction::mean;
};
/// log_probs laid out as cross_entropy's logits; loss_i = -weight[t_i] * log_probs[i, t_i].
Tensor nll_loss(const Tensor& log_probs, const Tensor& targets, int64_t ignore_index = -100,
                Reduction reduction = Reduction::mean);
Tensor nll_loss(const Tensor& log_probs, const Tensor& targets,
                const NLLOptions& opt);  ///< with an options struct (adds class weights)

// ---- binary classification ----
/// -w (t log(x) + (1 - t) log(1 - x)) with each log clamped at -100, as PyTorch. input,
/// target the same shape; input in [0, 1] (ValueError otherwise); weight broadcasts to it.
/// d/dx = w (x - t) / max(x (1 - x), 1e-12); d/dt = -w logit(x).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::mean);
/// Stable sigmoid + BCE on logits x: w ((1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x))).
/// input, target the same shape; weight and pos_weight broadcast to it (pos_weight (C)
/// thus applies along the last dim).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = Reduction::mean);

// ---- regression (input and target broadcast, as PyTorch does with a warning) ----
/// (input - target)^2; input and target broadcast (PyTorch warns; we allow it silently).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);  ///< |input - target|
/// |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta with d = input - target; beta = 0 is l1_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                      double beta = 1.0);
/// |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta); delta > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean, double delta = 1.0);

// ---- distributions ----
/// kl_div's reductions: batchmean (sum / input.size(0)) is the true KL divergence; mean
/// (PyTorch's default, which warns) averages over every element.
enum class KLDivReduction { none, batchmean, sum, mean };
/// input holds log-probabilities; target probabilities, or log-probabilities when
/// log_target. Pointwise: target (log(target) - input) (0 where target == 0, NaN where
/// target < 0), or exp(target) (target - input). input and target broadcast.
Tensor kl_div(const Tensor& input, const Tensor& target, KLDivReduction reduction = KLDivReduction::mean,
              bool log_target = false);
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction,
              bool log_target = false);  ///< with none / mean / sum

// ---- distances ----
/// Cosine of the angle along dim of x1, x2 (broadcast together; dim wraps on the broadcast
/// shape, which loses it): sum((x1 / n1) * (x2 / n2), dim), n = sqrt(max(sum(x^2), eps^2)).
/// As in PyTorch 1.13 the clamp is invisible to the gradient (n's derivative is taken as
/// if unclamped, at the clamped value), so a zero x1 gets gradient x2 / (eps |x2|).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

}  // namespace ag
