#pragma once
/// \file
/// Scaled dot-product attention and its mask builders (ops/attention.cpp).
/// Shape legend: B batch, L target (query) length, S source (key) length, d head dim,
/// h heads, E embed dim.
#include <cstdint>
#include <optional>
#include <utility>

#include "attograd/generator.h"
#include "attograd/tensor.h"

namespace ag {

// ---- masks; the bool masks built here are KEEP masks: true where attention is allowed,
// as scaled_dot_product_attention (and torch.nn.functional's, 2.x) reads them. This is the
// opposite of nn::MultiheadAttention / nn::Transformer*'s attn_mask and *_key_padding_mask
// (PyTorch's nn modules: true = NOT allowed): pass logical_not(keep) there (nn/MASKS.md). ----
/// Where the causal diagonal sits when L != S (torch.nn.attention.bias.CausalVariant):
///   upper_left:  query i sees keys j <= i (the diagonal starts at the top-left corner);
///                PyTorch's `is_causal` and the default here.
///   lower_right: query i sees keys j <= i + S - L (the diagonal ends at the bottom-right
///                corner): the L queries are the last L positions of the S keys, as in a
///                cached decoding step (L = 1, S = n: the new query sees every key). With
///                L > S the first L - S query rows see no key (their output is zero).
/// The two agree when L == S.
enum class CausalVariant { upper_left, lower_right };
Tensor causal_mask(int64_t L, int64_t S);  ///< (L, S) bool keep mask, true where j <= i (upper_left)
Tensor causal_mask(int64_t L, int64_t S, CausalVariant variant);  ///< (L, S) bool keep mask
/// lengths (B) i64 -> (B, S) bool KEEP mask, true where position < length (a real token);
/// logical_not of it is PyTorch's key_padding_mask (true = pad). A length
/// outside [0, S] throws ValueError naming it and S.
Tensor keep_mask_from_lengths(const Tensor& lengths, int64_t S);
/// Bool keep mask -> float mask (0 where true = allowed, -inf where false), in `dtype`.
Tensor additive_mask(const Tensor& bool_mask, DType dtype = DType::f32);

// ---- attention ----
/// The masks and flags of scaled_dot_product_attention (see nn/MASKS.md).
struct SdpaOptions {
  Tensor attn_mask = {};  ///< bool (true = takes part, as torch.nn.functional.scaled_dot_product_attention)
                          ///< or float (added), broadcastable to (..., L, S)
  bool causal = false;    ///< apply causal_mask(L, S, causal_variant); with attn_mask: ValueError
  /// For is_causal: which diagonal the causal mask keeps when L != S.
  CausalVariant causal_variant = CausalVariant::upper_left;
  double dropout_p = 0;              ///< on the weights, when > 0
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
std::pair<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                       const SdpaOptions& opt = {});

}  // namespace ag
