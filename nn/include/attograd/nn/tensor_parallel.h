#pragma once
/// \file
/// Tensor parallelism across heads (Megatron-LM, Shoeybi et al. 2019), on ag::dist.
/// Legend: B batch, L query length, S key length, E embed dim, h heads, g key/value
/// heads, d = E / h head dim, F dim_feedforward, p world size, r this rank.
///
/// Every rank runs the same model on the same (replicated) input; each holds a slice of
/// the big matrices. A column-parallel linear keeps rows of W (output features): its
/// output is sharded, one block of features per rank. A row-parallel linear keeps the
/// matching columns of the next W: each rank's product is a partial sum, and one
/// all-reduce makes the output whole again. Attention heads are independent, so a
/// block of h/p heads per rank is the natural split (core/DISTRIBUTED.md):
///
///   x (B, L, E) replicated ── f ──> q, k, v of this rank's heads (column-parallel)
///       ──> attention over h/p heads ──> out_proj rows (row-parallel) ── g ──> (B, L, E)
///
/// f = copy_to_parallel_region (identity forward, all-reduce backward) and
/// g = reduce_from_parallel_region (all-reduce forward, identity backward), from
/// <attograd/ops/distributed.h>: per block, one all-reduce forward (after the row-parallel
/// product) and one backward per distinct input (self-attention: one; cross-attention: two).
/// The feed-forward is the same pattern: linear1 column-parallel, linear2 row-parallel.
/// Replicated parameters (LayerNorm, the row-parallel bias) get the same, full gradient
/// on every rank; sharded ones get their slice of the full gradient. The loss must be
/// computed alike on every rank (it is counted once, not summed over ranks).
///
/// Checkpoints stay in the single-process layout: load_full_state_dict takes the full,
/// unsharded state dict of the single-process module (PyTorch's names and shapes, e.g.
/// self_attn.in_proj_weight (3E, E)) and keeps this rank's slice; full_state_dict
/// all-gathers the slices back, so rank 0 can save one file that nn::load, PyTorch and
/// a run on any other number of ranks read. Constructors from options initialize as the
/// single-process module would from the same generator state (they build it, then keep
/// their slice), so ranks seeded alike hold the slices of one model, whatever p is.
/// This needs a full copy of each module in memory while it is built.
///
/// Randomness: dropout on replicated tensors (dropout1..3 of the layers) uses the default
/// generator, which must draw the same masks on every rank (seed every rank alike);
/// dropout inside the parallel region (attention weights of this rank's heads, the
/// feed-forward's hidden features) uses tensor_parallel_generator(), seeded per rank.
/// So dropout masks differ from a single process's; equality tests run with dropout 0.
///
/// ShardSpec, TensorParallelModule, the full-layout state-dict functions, the generator
/// and Column/RowParallelLinear are in attograd/nn/tensor_parallel_linear.h (included
/// here); this header adds the attention, feed-forward and Transformer modules.
///
///   ag::dist::InitGuard dist(&argc, &argv);
///   nn::tensor_parallel_manual_seed(0);
///   nn::TensorParallelTransformerEncoderLayer layer(nn::TransformerLayerOptions(512, 8));
///   layer->load_full_state_dict(ag::load_safetensors("layer.safetensors"));
///   Tensor y = layer(x);                     // x, y (B, L, 512) on every rank
///   TensorMap full = layer->full_state_dict();  // on every rank (collective)
///   if (ag::dist::rank() == 0) ag::save_safetensors("out.safetensors", full);
#include <optional>
#include <utility>

#include "attograd/nn/attention.h"
#include "attograd/nn/gqa.h"
#include "attograd/nn/layers.h"
#include "attograd/nn/tensor_parallel_linear.h"  // ShardSpec, TensorParallelModule, Column/RowParallelLinear
#include "attograd/nn/transformer.h"

namespace ag::nn {

// ---- TensorParallelMultiheadAttention ----
/// One options struct for both single-process counterparts, chosen by num_kv_heads:
///   unset: nn::MultiheadAttention (torch.nn.MultiheadAttention): packed in_proj_weight
///          (3E, E), in_proj_bias (3E), out_proj.weight, out_proj.bias;
///   set to g (h % g == 0, g % p == 0, g == h allowed): nn::GroupedQueryAttention:
///          q_proj (E -> E), k_proj and v_proj (E -> g*d), out_proj, each .weight/.bias.
/// MultiheadAttentionOptions has no num_kv_heads and its kdim, vdim and add_bias_kv have
/// no tensor-parallel form here; it converts (ValueError if those are set), as do
/// GroupedQueryAttentionOptions (num_kv_heads set).
struct TensorParallelMultiheadAttentionOptions {
  /// The required options; the others keep their PyTorch defaults.
  TensorParallelMultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// From nn::MultiheadAttention's options (ValueError with kdim, vdim, add_bias_kv,
  /// add_zero_attn or batch_first(false)).
  TensorParallelMultiheadAttentionOptions(const MultiheadAttentionOptions& o);
  /// From nn::GroupedQueryAttention's options.
  TensorParallelMultiheadAttentionOptions(const GroupedQueryAttentionOptions& o);
  /// E, the model width (query width and output width).
  AG_ARG(int64_t, embed_dim);
  AG_ARG(int64_t, num_heads);  ///< must divide by p
  /// Key/value heads (divides num_heads; fewer = grouped-query attention).
  AG_ARG(std::optional<int64_t>, num_kv_heads);
  AG_ARG(double, dropout) = 0.0;  ///< on the attention weights, in training mode
  /// Biases in the input and output projections.
  AG_ARG(bool, bias) = true;
};

/// Multi-head (or grouped-query) attention with h/p heads per rank: (B, L, E) -> (B, L, E), replicated.
class TensorParallelMultiheadAttentionImpl : public TensorParallelModule {
 public:
  /// Initialized as the single-process counterpart from the same generator state.
  explicit TensorParallelMultiheadAttentionImpl(const TensorParallelMultiheadAttentionOptions& options);
  /// Shorthand for the options constructor.
  TensorParallelMultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : TensorParallelMultiheadAttentionImpl(TensorParallelMultiheadAttentionOptions(embed_dim, num_heads)) {}
  /// This rank's heads of an existing module (its options, dtype and weights).
  explicit TensorParallelMultiheadAttentionImpl(const MultiheadAttentionImpl& full);
  /// Shorthand for the options constructor.
  explicit TensorParallelMultiheadAttentionImpl(const GroupedQueryAttentionImpl& full);
  /// Re-draws the parameters with PyTorch's default initialization.
  void reset_parameters();
  /// query (B, L, E), key and value (B, S, E), replicated -> (output (B, L, E) replicated,
  /// per-head weights (B, h, L, S) gathered from all ranks when args.need_weights).
  /// Masks exactly as the single-process module (attograd/nn/attention.h); an attn_mask
  /// with a head dim of h, (h, L, S) or (B, h, L, S), is cut to this rank's heads.
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  void pretty_print(std::ostream& os) const override;

  bool packed() const { return !options.num_kv_heads().has_value(); }  ///< MultiheadAttention's layout
  /// g over all ranks.
  int64_t num_kv_heads() const { return options.num_kv_heads().value_or(options.num_heads()); }
  /// d = E / h.
  int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }
  int64_t num_heads_per_partition() const;     ///< h / p: heads [r*h/p, (r+1)*h/p)
  int64_t num_kv_heads_per_partition() const;  ///< g / p

  /// The options it was built with (pretty_print shows them).
  TensorParallelMultiheadAttentionOptions options;
  Tensor in_proj_weight;                 ///< packed: (3E/p, E), this rank's rows of q, then k, then v
  Tensor in_proj_bias;                   ///< packed: (3E/p), or undefined
  ColumnParallelLinear q_proj{nullptr};  ///< this rank's query heads (E -> E/p)
  ColumnParallelLinear k_proj{nullptr};  ///< this rank's key heads (E -> g*d/p)
  ColumnParallelLinear v_proj{nullptr};  ///< this rank's value heads (E -> g*d/p)
  RowParallelLinear out_proj{nullptr};   ///< E/p -> E

 private:
  void build(const MultiheadAttentionImpl& full);
  void build(const GroupedQueryAttentionImpl& full);
  std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& args);
};
/// The holder of TensorParallelMultiheadAttentionImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelMultiheadAttention);

// ---- TensorParallelFeedForward: linear2(dropout(activation(linear1(x)))) ----
/// linear1 column-parallel (E -> F/p), linear2 row-parallel (F/p -> E); the keys of its
/// full state dict are those of the Transformer layers' feed-forward: linear1.weight,
/// linear1.bias, linear2.weight, linear2.bias.
struct TensorParallelFeedForwardOptions {
  /// The required options; the others keep their PyTorch defaults.
  TensorParallelFeedForwardOptions(int64_t d_model, int64_t dim_feedforward)
      : d_model_(d_model), dim_feedforward_(dim_feedforward) {}
  /// E, the width of the residual stream.
  AG_ARG(int64_t, d_model);
  AG_ARG(int64_t, dim_feedforward);  ///< must divide by p
  /// ReLU or GELU between the two feed-forward linears.
  AG_ARG(Activation, activation) = Activation::ReLU;
  AG_ARG(double, dropout) = 0.0;  ///< on the hidden features, in training mode
};

/// The feed-forward block split over ranks: linear1 column-parallel, linear2 row-parallel; (B, L, E) -> (B, L, E).
class TensorParallelFeedForwardImpl : public TensorParallelModule {
 public:
  /// Initialized as nn::Linear(E, F) then nn::Linear(F, E) from the same generator state.
  explicit TensorParallelFeedForwardImpl(const TensorParallelFeedForwardOptions& options);
  /// x (..., E) replicated -> (..., E) replicated
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  TensorParallelFeedForwardOptions options;
  /// (d_model -> dim_feedforward) first feed-forward linear.
  ColumnParallelLinear linear1{nullptr};
  /// (dim_feedforward -> d_model) second feed-forward linear.
  RowParallelLinear linear2{nullptr};
  Dropout dropout{nullptr};  ///< draws from tensor_parallel_generator()
};
/// The holder of TensorParallelFeedForwardImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelFeedForward);

// ---- Transformer layers ----
/// TransformerEncoderLayer / TransformerDecoderLayer (attograd/nn/transformer.h) with
/// tensor-parallel attention and feed-forward; the same options, forward arguments and
/// state-dict names (self_attn.in_proj_weight, linear1.weight, norm1.weight, ...). The
/// norms are replicated. Constructors from options initialize as the single-process
/// layer from the same generator state; the ones from a layer take its options, dtype,
/// training mode and this rank's slices of its weights.
class TensorParallelTransformerEncoderLayerImpl : public TensorParallelModule {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit TensorParallelTransformerEncoderLayerImpl(const TransformerLayerOptions& options);
  /// Shorthand for the options constructor.
  explicit TensorParallelTransformerEncoderLayerImpl(const TransformerEncoderLayerImpl& full);
  /// Re-draws the parameters with PyTorch's default initialization.
  void reset_parameters();
  /// src (B, S, E) replicated -> (B, S, E) replicated; masks as TransformerEncoderLayer.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  TransformerLayerOptions options;
  /// The self-attention block.
  TensorParallelMultiheadAttention self_attn{nullptr};
  /// (d_model -> dim_feedforward) first feed-forward linear.
  ColumnParallelLinear linear1{nullptr};
  /// (dim_feedforward -> d_model) second feed-forward linear.
  RowParallelLinear linear2{nullptr};
  LayerNorm norm1{nullptr};   ///< LayerNorm of the self-attention block
  LayerNorm norm2{nullptr};   ///< LayerNorm of the feed-forward block
  Dropout dropout{nullptr};   ///< dropout between linear1 and linear2
  Dropout dropout1{nullptr};  ///< dropout on the self-attention output
  Dropout dropout2{nullptr};  ///< dropout on the feed-forward output

 private:
  void build(const TransformerEncoderLayerImpl& full);
};
/// The holder of TensorParallelTransformerEncoderLayerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelTransformerEncoderLayer);

/// TransformerDecoderLayer with attention and feed-forward split over ranks; same state dict.
class TensorParallelTransformerDecoderLayerImpl : public TensorParallelModule {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit TensorParallelTransformerDecoderLayerImpl(const TransformerLayerOptions& options);
  /// Shorthand for the options constructor.
  explicit TensorParallelTransformerDecoderLayerImpl(const TransformerDecoderLayerImpl& full);
  /// Re-draws the parameters with PyTorch's default initialization.
  void reset_parameters();
  /// tgt (B, T, E), memory (B, S, E), replicated -> (B, T, E) replicated.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  /// forward, plus the cross-attention weights of all heads (B, h, T, S).
  std::pair<Tensor, Tensor> forward_with_cross_weights(const Tensor& tgt, const Tensor& memory,
                                                       const TransformerMasks& masks = {});
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  TransformerLayerOptions options;
  TensorParallelMultiheadAttention self_attn{nullptr};       ///< self-attention
  TensorParallelMultiheadAttention multihead_attn{nullptr};  ///< cross-attention over the memory
  /// (d_model -> dim_feedforward) first feed-forward linear.
  ColumnParallelLinear linear1{nullptr};
  /// (dim_feedforward -> d_model) second feed-forward linear.
  RowParallelLinear linear2{nullptr};
  LayerNorm norm1{nullptr};   ///< LayerNorm of the self-attention block
  LayerNorm norm2{nullptr};   ///< LayerNorm of the cross-attention block
  LayerNorm norm3{nullptr};   ///< LayerNorm of the feed-forward block
  Dropout dropout{nullptr};   ///< dropout between linear1 and linear2
  Dropout dropout1{nullptr};  ///< dropout on the self-attention output
  Dropout dropout2{nullptr};  ///< dropout on the cross-attention output
  Dropout dropout3{nullptr};  ///< dropout on the feed-forward output

 private:
  void build(const TransformerDecoderLayerImpl& full);
  std::pair<Tensor, Tensor> run(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks,
                                bool need_weights);
};
/// The holder of TensorParallelTransformerDecoderLayerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelTransformerDecoderLayer);

// ---- Whole stacks ----
/// TransformerEncoder / TransformerDecoder / Transformer (attograd/nn/transformer.h) made
/// of the tensor-parallel layers above, built from a single-process module (its options,
/// dtype, training mode and this rank's slices of its weights), with its state-dict names
/// (encoder.layers.0.self_attn.in_proj_weight, encoder.norm.weight, ...): a
/// full_state_dict() saved by rank 0 loads into the single-process Transformer and into
/// PyTorch's. No KV-cached decoding step: decode the whole prefix each step.
class TensorParallelTransformerEncoderImpl : public TensorParallelModule {
 public:
  /// Shorthand for the options constructor.
  explicit TensorParallelTransformerEncoderImpl(const TransformerEncoderImpl& full);
  /// src (B, S, E) replicated -> (B, S, E).
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  ModuleList layers{nullptr};  ///< of TensorParallelTransformerEncoderLayerImpl
  LayerNorm norm{nullptr};     ///< replicated; empty when the full encoder had none
};
/// The holder of TensorParallelTransformerEncoderImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelTransformerEncoder);

/// A stack of tensor-parallel decoder layers and a final norm (TransformerDecoder's keys).
class TensorParallelTransformerDecoderImpl : public TensorParallelModule {
 public:
  /// Shorthand for the options constructor.
  explicit TensorParallelTransformerDecoderImpl(const TransformerDecoderImpl& full);
  /// tgt (B, T, E), memory (B, S, E) replicated -> (B, T, E).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  ModuleList layers{nullptr};  ///< of TensorParallelTransformerDecoderLayerImpl
  /// The final LayerNorm of the stack.
  LayerNorm norm{nullptr};
};
/// The holder of TensorParallelTransformerDecoderImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelTransformerDecoder);

/// nn::Transformer with every layer split over ranks; loads and saves its full state dict.
class TensorParallelTransformerImpl : public TensorParallelModule {
 public:
  /// Shorthand for the options constructor.
  explicit TensorParallelTransformerImpl(const TransformerImpl& full);
  /// src (B, S, E), tgt (B, T, E), replicated -> (B, T, E) replicated; as Transformer.
  Tensor forward(const Tensor& src, const Tensor& tgt, const TransformerMasks& masks = {});
  /// src (B, S, E) -> memory (B, S, E), replicated.
  Tensor encode(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  /// tgt (B, T, E) over memory (B, S, E) -> (B, T, E), replicated.
  Tensor decode(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks = {});
  /// The options it was built with (pretty_print shows them).
  TransformerOptions options;
  /// The encoder stack (state-dict prefix "encoder.").
  TensorParallelTransformerEncoder encoder{nullptr};
  /// The decoder stack (state-dict prefix "decoder.").
  TensorParallelTransformerDecoder decoder{nullptr};
};
/// The holder of TensorParallelTransformerImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(TensorParallelTransformer);

/// The global gradient norm of a model whose parameters are partly sharded by the
/// modules above (sharded ones summed over ranks, replicated ones counted once), and
/// clip_grad_norm_ with it: every rank scales by the same factor, so a tensor-parallel
/// model clips as the single-process one. A collective. Returns the norm before clipping.
double clip_grad_norm_tensor_parallel_(const Module& model, double max_norm);

}  // namespace ag::nn
