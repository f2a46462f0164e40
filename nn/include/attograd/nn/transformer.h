#pragma once
// The encoder-decoder Transformer, mirroring torch.nn.Transformer (batch_first=True)
// down to parameter names (encoder.layers.0.self_attn.in_proj_weight, decoder.norm.weight,
// ...), so a PyTorch state dict loads as is.
// Legend: B batch, S source length, T target length, E d_model.
#include <vector>

#include "attograd/nn/attention.h"
#include "attograd/nn/container.h"

namespace ag::nn {

enum class Activation { ReLU, GELU };

struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  AG_ARG(int64_t, d_model);
  AG_ARG(int64_t, nhead);
  AG_ARG(int64_t, dim_feedforward) = 2048;
  AG_ARG(double, dropout) = 0.1;
  AG_ARG(Activation, activation) = Activation::ReLU;
  AG_ARG(double, layer_norm_eps) = 1e-5;
  AG_ARG(bool, norm_first) = false;
};

// Masks in the project's convention: bool true = may attend, float = added to scores.
struct TransformerMasks {
  Tensor src_mask, tgt_mask, memory_mask;                         // (S, S), (T, T), (T, S)
  Tensor src_padding_mask, tgt_padding_mask, memory_padding_mask;  // (B, len), true = real token
  bool tgt_causal = false;
};

// Per decoder layer: self-attention keys/values of the positions decoded so far, and
// the cross-attention keys/values of the memory (computed once).
struct KVCache {
  struct Layer {
    Tensor self_k, self_v;    // (B, t, E)
    Tensor cross_k, cross_v;  // (B, S, E)
    // Row i becomes old row index[i] (index (B') i64) in every defined tensor: how beam
    // search follows the hypotheses it keeps. Undefined tensors stay undefined.
    void reorder(const Tensor& index);
  };
  std::vector<Layer> layers;
  void reorder(const Tensor& index);  // every layer's reorder
  int64_t length() const { return layers.empty() || !layers[0].self_k.defined() ? 0 : layers[0].self_k.size(1); }
};

class TransformerEncoderLayerImpl : public Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerLayerOptions& options);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_padding_mask = {});

  TransformerLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};

 private:
  Tensor feed_forward(const Tensor& x);
};
AG_MODULE(TransformerEncoderLayer);

class TransformerDecoderLayerImpl : public Module {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerLayerOptions& options);
  // tgt (B, T, E), memory (B, S, E) -> (B, T, E)
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  // forward, plus the cross-attention weights per head (B, h, T, S), for inspection.
  std::pair<Tensor, Tensor> forward_with_cross_weights(const Tensor& tgt, const Tensor& memory,
                                                       const TransformerMasks& masks = {});
  // One new position: tgt (B, 1, E) given the cache of the positions before it.
  Tensor forward_step(const Tensor& tgt, const Tensor& memory, KVCache::Layer& cache,
                      const Tensor& memory_padding_mask = {});

  TransformerLayerOptions options;
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};

 private:
  Tensor feed_forward(const Tensor& x);
  std::pair<Tensor, Tensor> run(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks,
                                bool need_weights);
};
AG_MODULE(TransformerDecoderLayer);

class TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_padding_mask = {});
  ModuleList layers{nullptr};
  LayerNorm norm{nullptr};  // empty when final_norm is false
};
AG_MODULE(TransformerEncoder);

class TransformerDecoderImpl : public Module {
 public:
  TransformerDecoderImpl(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  // Decodes position cache.length() from tgt_step (B, 1, E); appends to the cache.
  Tensor forward_step(const Tensor& tgt_step, const Tensor& memory, KVCache& cache,
                      const Tensor& memory_padding_mask = {});
  ModuleList layers{nullptr};
  LayerNorm norm{nullptr};
};
AG_MODULE(TransformerDecoder);

struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8) : d_model_(d_model), nhead_(nhead) {}
  AG_ARG(int64_t, d_model);
  AG_ARG(int64_t, nhead);
  AG_ARG(int64_t, num_encoder_layers) = 6;
  AG_ARG(int64_t, num_decoder_layers) = 6;
  AG_ARG(int64_t, dim_feedforward) = 2048;
  AG_ARG(double, dropout) = 0.1;
  AG_ARG(Activation, activation) = Activation::ReLU;
  AG_ARG(double, layer_norm_eps) = 1e-5;
  AG_ARG(bool, norm_first) = false;

 public:
  TransformerLayerOptions layer() const;
};

class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(const TransformerOptions& options = {});
  // src (B, S, E), tgt (B, T, E) -> (B, T, E)
  Tensor forward(const Tensor& src, const Tensor& tgt, const TransformerMasks& masks = {});
  Tensor encode(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_padding_mask = {});
  Tensor decode(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  void pretty_print(std::ostream& os) const override;

  TransformerOptions options;
  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};
};
AG_MODULE(Transformer);

}  // namespace ag::nn
