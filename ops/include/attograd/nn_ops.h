#pragma once
/// \file
/// Network ops: softmax, masks, attention, normalization, dropout, losses.
/// Shape legend: B batch, L target (query) length, S source (key) length, d head dim,
/// h heads, E embed dim, C classes, V vocabulary.
#include <optional>
#include <string>
#include <utility>

#include "attograd/ops.h"

namespace ag {

// ---- softmax family (ops/softmax.cpp) ----
/// Stable (row max subtracted). A row that is all -inf gives zeros, and zero gradient.
Tensor softmax(const Tensor& x, int64_t dim);
/// A row that is all -inf gives -inf, and zero gradient.
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- masks (ops/attention.cpp); bool masks are true where attention is allowed ----
/// Where the causal diagonal sits when L != S (torch.nn.attention.bias.CausalVariant):
///   upper_left:  query i sees keys j <= i (the diagonal starts at the top-left corner);
///                PyTorch's `is_causal` and the default here.
///   lower_right: query i sees keys j <= i + S - L (the diagonal ends at the bottom-right
///                corner): the L queries are the last L positions of the S keys, as in a
///                cached decoding step (L = 1, S = n: the new query sees every key). With
///                L > S the first L - S query rows see no key (their output is zero).
/// The two agree when L == S.
enum class CausalVariant { upper_left, lower_right };
Tensor causal_mask(int64_t L, int64_t S);  ///< (L, S) bool, true where j <= i (upper_left)
Tensor causal_mask(int64_t L, int64_t S, CausalVariant variant);  ///< (L, S) bool
/// lengths (B) i64 -> (B, S) bool, true where position < length (a real token).
Tensor padding_mask(const Tensor& lengths, int64_t S);
/// Bool mask -> float mask (0 where allowed, -inf where not), in `dtype`.
Tensor additive_mask(const Tensor& bool_mask, DType dtype = DType::f32);

/// The masks and flags of scaled_dot_product_attention (see nn/MASKS.md).
struct SdpaOptions {
  Tensor attn_mask = {};  ///< bool (true = may attend) or float (added), broadcastable to (..., L, S)
  bool causal = false;   ///< also apply causal_mask(L, S, causal_variant)
  /// For is_causal: which diagonal the causal mask keeps when L != S.
  CausalVariant causal_variant = CausalVariant::upper_left;
  double dropout_p = 0;  ///< on the weights, when > 0
  std::optional<double> scale = {};  ///< default 1/sqrt(d)
  /// Also return the (B, h, L, S) attention weights (forces the unfused path).
  bool need_weights = false;
  Generator* generator = nullptr;  ///< for dropout
  /// Use the fused kernel (tiles of keys, online softmax, no (L, S) matrix) when it
  /// applies: no weights requested, q, k, v with the same batch dims, a mask that needs
  /// no gradient, and no dropout unless S >= 32. Its dropout mask comes from a hash of
  /// one generator draw, so it differs from the composite path's. false forces the
  /// composite path. Double backward (create_graph): the fused kernel's backward then
  /// differentiates the composite path (same values, recorded); with dropout it throws
  /// AutogradError (its mask lives inside the kernel), so pass fused = false there.
  bool fused = true;
  /// Grouped-query attention (PyTorch 2.5's enable_gqa): q (..., h, L, d) with k
  /// (..., g, S, d) and v (..., g, S, dv), h % g == 0; query heads i*h/g ... (i+1)*h/g - 1
  /// share key/value head i (g == 1 is multi-query attention). Neither path copies K/V
  /// per query head: the composite views q as (..., g, h/g, L, d) against k, v as
  /// (..., g, 1, S, d), the fused kernel indexes the shared head. Without it the head
  /// dims must match (or broadcast from 1), else a ShapeError.
  bool enable_gqa = false;
};
/// q (..., L, d), k (..., S, d), v (..., S, dv) -> (output (..., L, dv), weights
/// (..., L, S) or undefined). A query row with every key masked gives zeros. With
/// enable_gqa the head dim (-3) of k and v may divide q's (see SdpaOptions).
std::pair<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k,
                                                       const Tensor& v,
                                                       const SdpaOptions& opt = {});

// ---- normalization and regularization (ops/nn_ops.cpp) ----
/// Normalizes over the trailing dims given by normalized_shape; weight and bias (that
/// shape) are optional. A fused primitive; under create_graph its backward differentiates
/// the composite (x - mean) * rsqrt(var + eps) * weight + bias, so second derivatives work.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
/// Zeroes each element with probability p and scales the rest by 1/(1-p) when training.
/// Its backward (g * saved mask) is differentiable, so double backward works as is.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

// ---- losses (ops/losses.cpp); more in attograd/ops/loss.h ----
/// How a loss combines its per-element values: none, mean or sum.
enum class Reduction { none, mean, sum };
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
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& opt = {});
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
Tensor nll_loss(const Tensor& log_probs, const Tensor& targets, const NLLOptions& opt);  ///< with an options struct (adds class weights)
/// (input - target)^2; input and target broadcast (PyTorch warns; we allow it silently).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);

}  // namespace ag

namespace ag {

// ---- RMS normalization (ops/rms_norm.cpp) ----
/// PyTorch 2.4's torch.nn.functional.rms_norm: over the trailing dims given by
/// normalized_shape,  y = x * rsqrt(mean(x^2) + eps) * weight  (weight of that shape,
/// optional; no mean is subtracted and there is no bias). eps defaults to the machine
/// epsilon of x's dtype (torch.finfo(x.dtype).eps: 2^-23 for f32, 2^-52 for f64).
/// A fused primitive (one pass per row forward and backward); under create_graph its
/// backward differentiates the composite formula above, so second derivatives work.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);

}  // namespace ag
