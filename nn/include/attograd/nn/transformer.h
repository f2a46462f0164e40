#pragma once
/// \file
/// The encoder-decoder Transformer, mirroring torch.nn.Transformer (batch-first by default,
/// sequence-first with batch_first(false)) down to parameter names (encoder.layers.0.self_attn.in_proj_weight, decoder.norm.weight,
/// ...), so a PyTorch state dict loads as is.
/// Legend: B batch, S source length, T target length, E d_model. Shapes below are
/// batch-first; with batch_first(false) every (B, len, E) is (len, B, E).
#include <optional>
#include <vector>

#include "attograd/nn/attention.h"
#include "attograd/nn/container.h"

namespace ag::nn {

/// The feed-forward activation of a transformer layer.
enum class Activation { ReLU, GELU };

/// Options of one encoder or decoder layer, as torch.nn.TransformerEncoderLayer's arguments.
struct TransformerLayerOptions {
  /// The required options; the others keep their PyTorch defaults.
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  /// E, the width of the residual stream.
  AG_ARG(int64_t, d_model);
  /// H, the number of attention heads (d_model % nhead == 0).
  AG_ARG(int64_t, nhead);
  /// The hidden width of the feed-forward block.
  AG_ARG(int64_t, dim_feedforward) = 2048;
  /// Dropout probability in training.
  AG_ARG(double, dropout) = 0.1;
  /// ReLU or GELU between the two feed-forward linears.
  AG_ARG(Activation, activation) = Activation::ReLU;
  /// Epsilon of every LayerNorm in the layer.
  AG_ARG(double, layer_norm_eps) = 1e-5;
  /// Pre-norm (x + f(norm(x))) rather than post-norm (norm(x + f(x))).
  AG_ARG(bool, norm_first) = false;
  /// Inputs and outputs (B, len, E); false: sequence-first (len, B, E), PyTorch's default
  /// and LibTorch's only layout (masks keep their shapes). attograd's default stays true.
  AG_ARG(bool, batch_first) = true;
};

/// The masks of one encoder-decoder call, as torch.nn.Transformer.forward's arguments:
/// a bool src_mask / tgt_mask / memory_mask is true where attention is NOT allowed, a float
/// one is added to the scores; a *_key_padding_mask is bool (B, len), true = ignore (padding).
/// The *_keep_mask fields are attograd's opposite spelling (true = real token, e.g.
/// keep_mask_from_lengths): give a keep mask or a key padding mask, not both.
struct TransformerMasks {
  Tensor src_mask = {};                 ///< (S, S) encoder self-attention mask
  Tensor tgt_mask = {};                 ///< (T, T) decoder self-attention mask
  Tensor memory_mask = {};              ///< (T, S) cross-attention mask
  Tensor src_key_padding_mask = {};     ///< (B, S) bool, true = padded source token (ignored)
  Tensor tgt_key_padding_mask = {};     ///< (B, T) bool, true = padded target token (ignored)
  Tensor memory_key_padding_mask = {};  ///< (B, S) bool, true = padded memory position (ignored)
  Tensor src_keep_mask = {};            ///< (B, S) bool, true = real source token
  Tensor tgt_keep_mask = {};            ///< (B, T) bool, true = real target token
  Tensor memory_keep_mask = {};         ///< (B, S) bool, true = real memory position
  /// Add the causal mask to the decoder self-attention.
  bool tgt_causal = false;
};

/// Per decoder layer: self-attention keys/values of the positions decoded so far, and
/// the cross-attention keys/values of the memory (computed once).
struct KVCache {
  /// One decoder layer's cached self-attention and cross-attention keys and values.
  struct Layer {
    Tensor self_k;   ///< (B, t, E) self-attention keys so far
    Tensor self_v;   ///< (B, t, E) self-attention values so far
    Tensor cross_k;  ///< (B, S, E) cross-attention keys of the memory
    Tensor cross_v;  ///< (B, S, E) cross-attention values of the memory
    /// Row i becomes old row index[i] (index (B') i64) in every defined tensor: how beam
    /// search follows the hypotheses it keeps. Undefined tensors stay undefined.
    void reorder(const Tensor& index);
  };
  /// One entry per layer, in order.
  std::vector<Layer> layers;
  void reorder(const Tensor& index);  ///< every layer's reorder
  /// t, the positions decoded so far.
  int64_t length() const { return layers.empty() || !layers[0].self_k.defined() ? 0 : layers[0].self_k.size(1); }
};

/// Self-attention then feed-forward, each with residual and LayerNorm: (B, S, E) -> (B, S, E).
class TransformerEncoderLayerImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit TransformerEncoderLayerImpl(const TransformerLayerOptions& options);
  /// src (B, S, E) -> (B, S, E); torch's order and meanings: src_mask (S, S) bool true =
  /// not allowed or float added, src_key_padding_mask (B, S) bool true = padding.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});

  /// The options it was built with (pretty_print shows them).
  TransformerLayerOptions options;
  /// The self-attention block.
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};    ///< first feed-forward linear (E -> F)
  Linear linear2{nullptr};    ///< second feed-forward linear (F -> E)
  LayerNorm norm1{nullptr};   ///< LayerNorm of the self-attention block
  LayerNorm norm2{nullptr};   ///< LayerNorm of the feed-forward block
  Dropout dropout{nullptr};   ///< dropout between linear1 and linear2
  Dropout dropout1{nullptr};  ///< dropout on the self-attention output
  Dropout dropout2{nullptr};  ///< dropout on the feed-forward output

 private:
  Tensor feed_forward(const Tensor& x);
};
/// The holder of TransformerEncoderLayerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TransformerEncoderLayer);

/// Self-attention, cross-attention over the memory, feed-forward: (B, T, E) -> (B, T, E).
class TransformerDecoderLayerImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit TransformerDecoderLayerImpl(const TransformerLayerOptions& options);
  /// tgt (B, T, E), memory (B, S, E) -> (B, T, E), masks as torch.nn.TransformerDecoderLayer's
  /// (see TransformerMasks); tgt_is_causal adds the causal mask (TransformerMasks::tgt_causal).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false);
  /// The same with the masks in one struct.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks);
  /// forward, plus the cross-attention weights per head (B, h, T, S), for inspection.
  std::pair<Tensor, Tensor> forward_with_cross_weights(const Tensor& tgt, const Tensor& memory,
                                                       const TransformerMasks& masks = {});
  /// One new position: tgt (B, 1, E) given the cache of the positions before it;
  /// memory_keep_mask (B, S) bool, true = real memory position (attograd's polarity).
  Tensor forward_step(const Tensor& tgt, const Tensor& memory, KVCache::Layer& cache,
                      const Tensor& memory_keep_mask = {});

  /// The options it was built with (pretty_print shows them).
  TransformerLayerOptions options;
  MultiheadAttention self_attn{nullptr};       ///< self-attention
  MultiheadAttention multihead_attn{nullptr};  ///< cross-attention over the memory
  Linear linear1{nullptr};                     ///< first feed-forward linear (E -> F)
  Linear linear2{nullptr};                     ///< second feed-forward linear (F -> E)
  LayerNorm norm1{nullptr};                    ///< LayerNorm of the self-attention block
  LayerNorm norm2{nullptr};                    ///< LayerNorm of the cross-attention block
  LayerNorm norm3{nullptr};                    ///< LayerNorm of the feed-forward block
  Dropout dropout{nullptr};                    ///< dropout between linear1 and linear2
  Dropout dropout1{nullptr};                   ///< dropout on the self-attention output
  Dropout dropout2{nullptr};                   ///< dropout on the cross-attention output
  Dropout dropout3{nullptr};                   ///< dropout on the feed-forward output

 private:
  Tensor feed_forward(const Tensor& x);
  std::pair<Tensor, Tensor> run(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks,
                                bool need_weights);
};
/// The holder of TransformerDecoderLayerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TransformerDecoderLayer);

/// A stack of encoder layers with an optional final norm: (B, S, E) -> (B, S, E).
class TransformerEncoderImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  TransformerEncoderImpl(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  /// src (B, S, E) -> (B, S, E); masks as TransformerEncoderLayer::forward's (torch's).
  Tensor forward(const Tensor& src, const Tensor& mask = {}, const Tensor& src_key_padding_mask = {});
  /// One entry per layer, in order.
  ModuleList layers{nullptr};
  LayerNorm norm{nullptr};  ///< empty when final_norm is false
};
/// The holder of TransformerEncoderImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TransformerEncoder);

/// A stack of decoder layers and a final norm: (B, T, E), memory (B, S, E) -> (B, T, E).
class TransformerDecoderImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  TransformerDecoderImpl(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  /// tgt (B, T, E), memory (B, S, E) -> (B, T, E); masks as TransformerDecoderLayer::forward's.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false);
  /// The same with the masks in one struct.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks);
  /// Decodes position cache.length() from tgt_step (B, 1, E); appends to the cache.
  /// memory_keep_mask (B, S) bool, true = real memory position (attograd's polarity).
  Tensor forward_step(const Tensor& tgt_step, const Tensor& memory, KVCache& cache,
                      const Tensor& memory_keep_mask = {});
  /// One entry per layer, in order.
  ModuleList layers{nullptr};
  /// The final LayerNorm of the stack.
  LayerNorm norm{nullptr};
};
/// The holder of TransformerDecoderImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TransformerDecoder);

/// Options of nn::Transformer: required ones in the constructor, the rest chainable setters.
struct TransformerOptions {
  /// The required options; the others keep their PyTorch defaults.
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8) : d_model_(d_model), nhead_(nhead) {}
  /// E, the width of the residual stream.
  AG_ARG(int64_t, d_model);
  /// H, the number of attention heads (d_model % nhead == 0).
  AG_ARG(int64_t, nhead);
  /// Layers in the encoder stack.
  AG_ARG(int64_t, num_encoder_layers) = 6;
  /// Layers in the decoder stack.
  AG_ARG(int64_t, num_decoder_layers) = 6;
  /// The hidden width of the feed-forward block.
  AG_ARG(int64_t, dim_feedforward) = 2048;
  /// Dropout probability in training.
  AG_ARG(double, dropout) = 0.1;
  /// ReLU or GELU between the two feed-forward linears.
  AG_ARG(Activation, activation) = Activation::ReLU;
  /// Epsilon of every LayerNorm in the layer.
  AG_ARG(double, layer_norm_eps) = 1e-5;
  /// Pre-norm (x + f(norm(x))) rather than post-norm (norm(x + f(x))).
  AG_ARG(bool, norm_first) = false;
  /// Inputs and outputs (B, len, E); false: sequence-first (len, B, E), PyTorch's default
  /// and LibTorch's only layout (masks keep their shapes). attograd's default stays true.
  AG_ARG(bool, batch_first) = true;

 public:
  /// The per-layer options these imply.
  TransformerLayerOptions layer() const;
};

/// torch.nn.Transformer: encoder (B, S, E) and decoder (B, T, E) -> (B, T, E).
class TransformerImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit TransformerImpl(const TransformerOptions& options = {});
  /// src (B, S, E), tgt (B, T, E) -> (B, T, E), torch.nn.Transformer.forward's arguments in
  /// its order and meaning (bool masks true = not allowed, float added; key padding masks
  /// true = padding); tgt_is_causal adds the causal mask to the decoder self-attention.
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false);
  /// The same with the masks in one struct.
  Tensor forward(const Tensor& src, const Tensor& tgt, const TransformerMasks& masks);
  /// src (B, S, E) -> memory (B, S, E): the encoder alone, for decoding step by step
  /// (masks as TransformerEncoder::forward's: torch's).
  Tensor encode(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  /// tgt (B, T, E) over memory (B, S, E) -> (B, T, E): the decoder alone.
  Tensor decode(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  /// torch.nn.Transformer.generate_square_subsequent_mask: (n, n) float, -inf above the
  /// diagonal and 0 elsewhere, for tgt_mask; of `dtype`, or the default dtype
  /// (set_default_dtype), as PyTorch's.
  static Tensor generate_square_subsequent_mask(int64_t n, std::optional<DType> dtype = std::nullopt);
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  TransformerOptions options;
  /// The encoder stack (state-dict prefix "encoder.").
  TransformerEncoder encoder{nullptr};
  /// The decoder stack (state-dict prefix "decoder.").
  TransformerDecoder decoder{nullptr};
};
/// The holder of TransformerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Transformer);

}  // namespace ag::nn
