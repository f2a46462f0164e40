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
  a.self.key_padding_mask = m.tgt_key_padding_mask;
  a.self.key_keep_mask = m.tgt_keep_mask;
  a.self.causal = m.tgt_causal;
  a.cross.attn_mask = m.memory_mask;
  a.cross.key_padding_mask = m.memory_key_padding_mask;
  a.cross.key_keep_mask = m.memory_keep_mask;
  a.cross.need_weights = need_weights;
  return a;
}

// The encoder's key padding mask (torch's: true = padding) from TransformerMasks'
// src_key_padding_mask or src_keep_mask (true = real token), not both.
inline Tensor src_key_padding(const char* op, const TransformerMasks& m) {
  AG_CHECK(!(m.src_key_padding_mask.defined() && m.src_keep_mask.defined()), ValueError, op,
           ": give src_key_padding_mask (true = padding) or src_keep_mask (true = real token), not both");
  return m.src_keep_mask.defined() ? logical_not(m.src_keep_mask) : m.src_key_padding_mask;
}

// An encoder layer's two residual blocks (self-attention, then `ff`, the feed-forward
// with its dropout), for TransformerEncoderLayer and its tensor-parallel version.
// Sequence-first layers (batch_first false) run on the (B, len, E) view of their (len, B, E)
// input and return the (len, B, E) view of the result: the attention modules inside are
// batch-first, and the transposes of consecutive layers cancel (no copy between layers).
inline Tensor batch_major(const Tensor& x, bool batch_first) { return batch_first ? x : x.transpose(0, 1); }

// src and tgt of a Transformer's forward: (B, S, E) and (B, T, E), or (S, B, E) and
// (T, B, E) sequence-first.
inline void check_transformer_inputs(const char* op, const Tensor& src, const Tensor& tgt, int64_t E,
                                     bool batch_first) {
  const int64_t b = batch_first ? 0 : 1;
  AG_CHECK(src.dim() == 3 && tgt.dim() == 3 && src.size(b) == tgt.size(b) && src.size(2) == E && tgt.size(2) == E,
           ShapeError, op, ": src ", src.shape(), " and tgt ", tgt.shape(), " must be ",
           batch_first ? "(B, S, " : "(S, B, ", E, ") and ", batch_first ? "(B, T, " : "(T, B, ", E, ")");
}

template <class Layer, class FeedForward>
Tensor encoder_layer_forward(Layer& l, const Tensor& src_in, const Tensor& src_mask, const Tensor& src_key_padding_mask,
                             FeedForward&& ff) {
  AttentionArgs args;
  args.attn_mask = src_mask;
  args.key_padding_mask = src_key_padding_mask;
  const bool nf = l.options.norm_first(), bf = l.options.batch_first();
  const Tensor src = batch_major(src_in, bf);  // (B, S, E)
  Tensor x = residual(src, l.norm1, nf, [&](const Tensor& h) { return l.dropout1(l.self_attn(h, h, h, args).first); });
  return batch_major(residual(x, l.norm2, nf, ff), bf);
}

// A decoder layer's three residual blocks (self-attention, cross-attention, then `ff`, the
// feed-forward with its dropout), for TransformerDecoderLayer and its tensor-parallel
// version, whose members have the same names -> (output, cross-attention weights
// (B, h, T, S) when need_weights).
template <class Layer, class FeedForward>
std::pair<Tensor, Tensor> decoder_layer_forward(Layer& l, const Tensor& tgt_in, const Tensor& memory_in,
                                                const TransformerMasks& m, bool need_weights, FeedForward&& ff) {
  const bool bf = l.options.batch_first();
  const Tensor tgt = batch_major(tgt_in, bf), memory = batch_major(memory_in, bf);  // (B, T, E), (B, S, E)
  // Named members, not a structured binding: clang before 16 cannot capture one.
  const DecoderAttentionArgs args = decoder_attention_args(m, need_weights);
  const AttentionArgs& self_args = args.self;
  const AttentionArgs& cross_args = args.cross;
  const bool nf = l.options.norm_first();
  Tensor weights;
  Tensor x =
      residual(tgt, l.norm1, nf, [&](const Tensor& h) { return l.dropout1(l.self_attn(h, h, h, self_args).first); });
  x = residual(x, l.norm2, nf, [&](const Tensor& h) {
    auto [o, w] = l.multihead_attn(h, memory, memory, cross_args);
    weights = w;
    return l.dropout2(o);
  });
  return {batch_major(residual(x, l.norm3, nf, ff), bf), weights};
}

}  // namespace ag::nn::detail
