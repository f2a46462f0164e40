#pragma once
// Internal to nn/: the wiring shared by the Transformer layers (transformer.cpp) and
// their tensor-parallel versions (tensor_parallel_transformer.cpp).
// Post-norm (default): x = norm(x + block(x)); pre-norm (norm_first): x = x + block(norm(x)).
#include "attograd/nn/transformer.h"

namespace ag::nn::detail {

inline Tensor activate(const Tensor& x, Activation a) { return a == Activation::GELU ? gelu(x) : relu(x); }

template <class Block>
Tensor residual(const Tensor& x, const LayerNorm& norm, bool norm_first, Block&& block) {
  return norm_first ? x + block(norm(x)) : norm(x + block(x));
}

// A decoder layer's masks as the arguments of its self- and cross-attention.
struct DecoderAttentionArgs {
  AttentionArgs self, cross;
};
inline DecoderAttentionArgs decoder_attention_args(const TransformerMasks& m, bool need_weights) {
  DecoderAttentionArgs a;
  a.self.attn_mask = m.tgt_mask;
  a.self.padding_mask = m.tgt_padding_mask;
  a.self.causal = m.tgt_causal;
  a.cross.attn_mask = m.memory_mask;
  a.cross.padding_mask = m.memory_padding_mask;
  a.cross.need_weights = need_weights;
  return a;
}

}  // namespace ag::nn::detail
