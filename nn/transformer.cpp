// torch.nn.Transformer's layers. Post-norm (default): x = norm(x + block(x));
// pre-norm (norm_first): x = x + block(norm(x)).
// Legend: B batch, S source length, T target length, E d_model.
#include "attograd/nn/transformer.h"
#include "transformer_util.h"

namespace ag::nn {
using detail::activate;
using detail::residual;
namespace {

LayerNormOptions norm_options(const TransformerLayerOptions& o) {
  return LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
}

void check_layer_options(const TransformerLayerOptions& o, const char* op) {
  AG_CHECK(o.d_model() > 0 && o.nhead() > 0 && o.d_model() % o.nhead() == 0, ShapeError, op, ": d_model ", o.d_model(),
           " must be divisible by nhead ", o.nhead());
  AG_CHECK(o.dim_feedforward() > 0, ValueError, op, ": dim_feedforward must be positive, got ", o.dim_feedforward());
}

// torch's positional decoder masks as the struct the layers take.
TransformerMasks decoder_masks(const Tensor& tgt_mask, const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                               const Tensor& memory_key_padding_mask, bool tgt_is_causal) {
  TransformerMasks m;
  m.tgt_mask = tgt_mask;
  m.memory_mask = memory_mask;
  m.tgt_key_padding_mask = tgt_key_padding_mask;
  m.memory_key_padding_mask = memory_key_padding_mask;
  m.tgt_causal = tgt_is_causal;
  return m;
}

}  // namespace

// ---- encoder layer ------------------------------------------------------------------
TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  check_layer_options(o, "TransformerEncoderLayer");
  self_attn = register_module(
      "self_attn", MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(norm_options(o)));
  norm2 = register_module("norm2", LayerNorm(norm_options(o)));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

Tensor TransformerEncoderLayerImpl::feed_forward(const Tensor& x) {
  return dropout2(linear2(dropout(activate(linear1(x), options.activation()))));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  return detail::encoder_layer_forward(*this, src, src_mask, src_key_padding_mask,
                                       [&](const Tensor& h) { return feed_forward(h); });
}

// ---- decoder layer ------------------------------------------------------------------
TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerLayerOptions& o)
    : Module("TransformerDecoderLayer"), options(o) {
  check_layer_options(o, "TransformerDecoderLayer");
  auto mha = MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout());
  self_attn = register_module("self_attn", MultiheadAttention(mha));
  multihead_attn = register_module("multihead_attn", MultiheadAttention(mha));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(norm_options(o)));
  norm2 = register_module("norm2", LayerNorm(norm_options(o)));
  norm3 = register_module("norm3", LayerNorm(norm_options(o)));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

Tensor TransformerDecoderLayerImpl::feed_forward(const Tensor& x) {
  return dropout3(linear2(dropout(activate(linear1(x), options.activation()))));
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& m) {
  return run(tgt, memory, m, false).first;
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask, bool tgt_is_causal) {
  const TransformerMasks m =
      decoder_masks(tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal);
  return run(tgt, memory, m, false).first;
}

std::pair<Tensor, Tensor> TransformerDecoderLayerImpl::forward_with_cross_weights(const Tensor& tgt,
                                                                                  const Tensor& memory,
                                                                                  const TransformerMasks& m) {
  return run(tgt, memory, m, true);
}

std::pair<Tensor, Tensor> TransformerDecoderLayerImpl::run(const Tensor& tgt, const Tensor& memory,
                                                           const TransformerMasks& m, bool need_weights) {
  return detail::decoder_layer_forward(*this, tgt, memory, m, need_weights,
                                       [&](const Tensor& h) { return feed_forward(h); });
}

// With causal self-attention, position t's keys and values in every layer depend only on
// positions <= t, so caching them per layer gives the same result as recomputing all.
Tensor TransformerDecoderLayerImpl::forward_step(const Tensor& tgt_in, const Tensor& memory_in, KVCache::Layer& cache,
                                                 const Tensor& memory_keep_mask) {
  const bool nf = options.norm_first(), bf = options.batch_first();
  AG_CHECK(tgt_in.dim() == 3 && tgt_in.size(bf ? 1 : 0) == 1, ShapeError,
           "TransformerDecoderLayer.forward_step: expected one position ", bf ? "(B, 1, E)" : "(1, B, E)", ", got ",
           tgt_in.shape());
  const Tensor tgt = detail::batch_major(tgt_in, bf), memory = detail::batch_major(memory_in, bf);  // (B, 1 | S, E)
  Tensor x = residual(tgt, norm1, nf, [&](const Tensor& h) {
    auto [k, v] = self_attn->project_kv(h, h);  // (B, 1, E)
    cache.self_k = cache.self_k.defined() ? cat({cache.self_k, k}, 1) : k;
    cache.self_v = cache.self_v.defined() ? cat({cache.self_v, v}, 1) : v;
    return dropout1(self_attn->attend(self_attn->project_q(h), cache.self_k, cache.self_v, {}).first);
  });
  x = residual(x, norm2, nf, [&](const Tensor& h) {
    if (!cache.cross_k.defined()) std::tie(cache.cross_k, cache.cross_v) = multihead_attn->project_kv(memory, memory);
    AttentionArgs args;
    args.key_keep_mask = memory_keep_mask;
    return dropout2(multihead_attn->attend(multihead_attn->project_q(h), cache.cross_k, cache.cross_v, args).first);
  });
  return detail::batch_major(residual(x, norm3, nf, [&](const Tensor& h) { return feed_forward(h); }), bf);
}

// ---- KV cache ------------------------------------------------------------------------------
void KVCache::Layer::reorder(const Tensor& index) {
  AG_CHECK(index.dim() == 1 && index.dtype() == DType::i64, ValueError, "KVCache.reorder: index must be 1-D i64, got ",
           index.shape(), " ", index.dtype());
  for (Tensor* t : {&self_k, &self_v, &cross_k, &cross_v})
    if (t->defined()) *t = index_select(*t, 0, index);  // IndexError on rows out of range
}

void KVCache::reorder(const Tensor& index) {
  for (Layer& l : layers) l.reorder(index);
}

// ---- stacks ------------------------------------------------------------------------------
TransformerEncoderImpl::TransformerEncoderImpl(const TransformerLayerOptions& layer, int64_t n, bool final_norm)
    : Module("TransformerEncoder") {
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < n; ++i) layers->push_back(TransformerEncoderLayer(layer));
  if (final_norm) norm = register_module("norm", LayerNorm(norm_options(layer)));
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i)->forward(x, mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm(x);
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerLayerOptions& layer, int64_t n, bool final_norm)
    : Module("TransformerDecoder") {
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < n; ++i) layers->push_back(TransformerDecoderLayer(layer));
  if (final_norm) norm = register_module("norm", LayerNorm(norm_options(layer)));
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks) {
  Tensor x = tgt;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(i)->forward(x, memory, masks);
  return norm.is_empty() ? x : norm(x);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask, bool tgt_is_causal) {
  const TransformerMasks m =
      decoder_masks(tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal);
  return forward(tgt, memory, m);
}

Tensor TransformerDecoderImpl::forward_step(const Tensor& tgt_step, const Tensor& memory, KVCache& cache,
                                            const Tensor& memory_keep_mask) {
  cache.layers.resize(layers->size());
  Tensor x = tgt_step;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(i)->forward_step(x, memory, cache.layers[i], memory_keep_mask);
  return norm.is_empty() ? x : norm(x);
}

// ---- Transformer --------------------------------------------------------------------------
TransformerLayerOptions TransformerOptions::layer() const {
  return TransformerLayerOptions(d_model(), nhead())
      .dim_feedforward(dim_feedforward())
      .dropout(dropout())
      .activation(activation())
      .layer_norm_eps(layer_norm_eps())
      .norm_first(norm_first())
      .batch_first(batch_first());
}

TransformerImpl::TransformerImpl(const TransformerOptions& o) : Module("Transformer"), options(o) {
  encoder = register_module("encoder", TransformerEncoder(o.layer(), o.num_encoder_layers()));
  decoder = register_module("decoder", TransformerDecoder(o.layer(), o.num_decoder_layers()));
}

Tensor TransformerImpl::encode(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  return encoder(src, src_mask, src_key_padding_mask);
}

Tensor TransformerImpl::decode(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks) {
  return decoder(tgt, memory, masks);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const TransformerMasks& masks) {
  detail::check_transformer_inputs("Transformer", src, tgt, options.d_model(), options.batch_first());
  Tensor memory = encode(src, masks.src_mask, detail::src_key_padding("Transformer", masks));
  return decode(tgt, memory, masks);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask,
                                bool tgt_is_causal) {
  TransformerMasks m =
      decoder_masks(tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal);
  m.src_mask = src_mask;
  m.src_key_padding_mask = src_key_padding_mask;
  return forward(src, tgt, m);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t n, std::optional<DType> dtype) {
  AG_CHECK(n >= 0, ValueError, "Transformer.generate_square_subsequent_mask: size must be >= 0, got ", n);
  // 0 on and below the diagonal, -inf above
  return additive_mask(causal_mask(n, n), dtype.value_or(get_default_dtype()));
}

void TransformerImpl::pretty_print(std::ostream& os) const {
  os << "Transformer(d_model=" << options.d_model() << ", nhead=" << options.nhead()
     << ", num_encoder_layers=" << options.num_encoder_layers()
     << ", num_decoder_layers=" << options.num_decoder_layers() << ", dim_feedforward=" << options.dim_feedforward()
     << ", dropout=" << options.dropout() << ", norm_first=" << (options.norm_first() ? "true" : "false");
  if (!options.batch_first()) os << ", batch_first=false";
  os << ')';
}

}  // namespace ag::nn
