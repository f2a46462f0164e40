// The tensor-parallel feed-forward and Transformer layers: torch.nn.Transformer's layers
// (attograd/nn/transformer.h) with the attention and the feed-forward split by rank.
// Post-norm (default): x = norm(x + block(x)); pre-norm (norm_first): x = x + block(norm(x)).
// Legend: B batch, S source length, T target length, E d_model, F dim_feedforward.
#include "attograd/dist.h"
#include "attograd/nn/tensor_parallel.h"
#include "tensor_parallel_util.h"
#include "transformer_util.h"

namespace ag::nn {
using detail::activate;
using detail::replica;
using detail::residual;
namespace {

// Dropout inside the parallel region: each rank's features draw their own mask.
Dropout parallel_dropout(double p) {
  Dropout d(p);
  d->generator = &tensor_parallel_generator();
  return d;
}

// Before any generator draw, so that the error names the options, not a sub-module.
void check_layer(const char* op, const TransformerLayerOptions& o) {
  const int64_t p = dist::world_size();
  AG_CHECK(o.nhead() > 0 && o.nhead() % p == 0, ShapeError, op, ": nhead ", o.nhead(), " (d_model ", o.d_model(),
           ") must divide by the world size ", p);
  detail::check_divides(op, "dim_feedforward", o.dim_feedforward(), Shape{o.dim_feedforward(), o.d_model()});
}

}  // namespace

// ---- TensorParallelFeedForward ------------------------------------------------------------
TensorParallelFeedForwardImpl::TensorParallelFeedForwardImpl(const TensorParallelFeedForwardOptions& o)
    : TensorParallelModule("TensorParallelFeedForward"), options(o) {
  detail::check_divides("TensorParallelFeedForward", "dim_feedforward", o.dim_feedforward(),
                        Shape{o.dim_feedforward(), o.d_model()});
  Linear full1(o.d_model(), o.dim_feedforward());  // drawn in the Transformer layers' order
  Linear full2(o.dim_feedforward(), o.d_model());
  linear1 = register_module("linear1", ColumnParallelLinear(*full1));  // E -> F/p
  dropout = register_module("dropout", parallel_dropout(o.dropout()));
  linear2 = register_module("linear2", RowParallelLinear(*full2));  // F/p -> E
}

Tensor TensorParallelFeedForwardImpl::forward(const Tensor& x) {
  return linear2(dropout(activate(linear1(x), options.activation())));
}

void TensorParallelFeedForwardImpl::pretty_print(std::ostream& os) const {
  os << "TensorParallelFeedForward(d_model=" << options.d_model() << ", dim_feedforward=" << options.dim_feedforward()
     << ", activation=" << (options.activation() == Activation::GELU ? "gelu" : "relu")
     << ", dropout=" << options.dropout() << ", world_size=" << dist::world_size() << ')';
}

// ---- encoder layer ------------------------------------------------------------------------
TensorParallelTransformerEncoderLayerImpl::TensorParallelTransformerEncoderLayerImpl(const TransformerLayerOptions& o)
    : TensorParallelModule("TensorParallelTransformerEncoderLayer"), options(o) {
  check_layer("TensorParallelTransformerEncoderLayer", o);
  build(*TransformerEncoderLayer(o));
}

TensorParallelTransformerEncoderLayerImpl::TensorParallelTransformerEncoderLayerImpl(
    const TransformerEncoderLayerImpl& full)
    : TensorParallelModule("TensorParallelTransformerEncoderLayer"), options(full.options) {
  check_layer("TensorParallelTransformerEncoderLayer", options);
  build(full);
}

// Registered in TransformerEncoderLayer's order, so state dicts list the same keys in turn.
void TensorParallelTransformerEncoderLayerImpl::build(const TransformerEncoderLayerImpl& full) {
  self_attn = register_module("self_attn", TensorParallelMultiheadAttention(*full.self_attn));
  linear1 = register_module("linear1", ColumnParallelLinear(*full.linear1));
  dropout = register_module("dropout", parallel_dropout(options.dropout()));
  linear2 = register_module("linear2", RowParallelLinear(*full.linear2));
  norm1 = register_module("norm1", replica(*full.norm1));
  norm2 = register_module("norm2", replica(*full.norm2));
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
  train(full.is_training());
}

void TensorParallelTransformerEncoderLayerImpl::reset_parameters() {
  load_full_state_dict(TransformerEncoderLayer(options)->state_dict());
}

Tensor TensorParallelTransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                                          const Tensor& src_key_padding_mask) {
  return detail::encoder_layer_forward(*this, src, src_mask, src_key_padding_mask, [&](const Tensor& h) {
    return dropout2(linear2(dropout(activate(linear1(h), options.activation()))));
  });
}

void TensorParallelTransformerEncoderLayerImpl::pretty_print(std::ostream& os) const {
  os << "TensorParallelTransformerEncoderLayer(d_model=" << options.d_model() << ", nhead=" << options.nhead()
     << ", dim_feedforward=" << options.dim_feedforward()
     << ", norm_first=" << (options.norm_first() ? "true" : "false") << ", world_size=" << dist::world_size() << ')';
}

// ---- decoder layer ------------------------------------------------------------------------
TensorParallelTransformerDecoderLayerImpl::TensorParallelTransformerDecoderLayerImpl(const TransformerLayerOptions& o)
    : TensorParallelModule("TensorParallelTransformerDecoderLayer"), options(o) {
  check_layer("TensorParallelTransformerDecoderLayer", o);
  build(*TransformerDecoderLayer(o));
}

TensorParallelTransformerDecoderLayerImpl::TensorParallelTransformerDecoderLayerImpl(
    const TransformerDecoderLayerImpl& full)
    : TensorParallelModule("TensorParallelTransformerDecoderLayer"), options(full.options) {
  check_layer("TensorParallelTransformerDecoderLayer", options);
  build(full);
}

void TensorParallelTransformerDecoderLayerImpl::build(const TransformerDecoderLayerImpl& full) {
  self_attn = register_module("self_attn", TensorParallelMultiheadAttention(*full.self_attn));
  multihead_attn = register_module("multihead_attn", TensorParallelMultiheadAttention(*full.multihead_attn));
  linear1 = register_module("linear1", ColumnParallelLinear(*full.linear1));
  dropout = register_module("dropout", parallel_dropout(options.dropout()));
  linear2 = register_module("linear2", RowParallelLinear(*full.linear2));
  norm1 = register_module("norm1", replica(*full.norm1));
  norm2 = register_module("norm2", replica(*full.norm2));
  norm3 = register_module("norm3", replica(*full.norm3));
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
  dropout3 = register_module("dropout3", Dropout(options.dropout()));
  train(full.is_training());
}

void TensorParallelTransformerDecoderLayerImpl::reset_parameters() {
  load_full_state_dict(TransformerDecoderLayer(options)->state_dict());
}

Tensor TensorParallelTransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                                          const TransformerMasks& masks) {
  return run(tgt, memory, masks, false).first;
}

std::pair<Tensor, Tensor> TensorParallelTransformerDecoderLayerImpl::forward_with_cross_weights(
    const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks) {
  return run(tgt, memory, masks, true);
}

std::pair<Tensor, Tensor> TensorParallelTransformerDecoderLayerImpl::run(const Tensor& tgt, const Tensor& memory,
                                                                         const TransformerMasks& m, bool need_weights) {
  return detail::decoder_layer_forward(*this, tgt, memory, m, need_weights, [&](const Tensor& h) {
    return dropout3(linear2(dropout(activate(linear1(h), options.activation()))));
  });
}

void TensorParallelTransformerDecoderLayerImpl::pretty_print(std::ostream& os) const {
  os << "TensorParallelTransformerDecoderLayer(d_model=" << options.d_model() << ", nhead=" << options.nhead()
     << ", dim_feedforward=" << options.dim_feedforward()
     << ", norm_first=" << (options.norm_first() ? "true" : "false") << ", world_size=" << dist::world_size() << ')';
}

}  // namespace ag::nn
