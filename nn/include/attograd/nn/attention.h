#pragma once
/// \file
/// Attention modules. Legend: B batch, L query length, S key length, E embed dim,
/// h heads, d = E / h head dim. Inputs are batch-first.
#include <optional>
#include <utility>

#include "attograd/nn/kv_cache.h"
#include "attograd/nn/layers.h"

namespace ag::nn {

/// Masks and flags of one attention call; see MASKS.md for the conventions. The first
/// three are torch.nn.MultiheadAttention.forward's, in its order and with its meaning.
struct AttentionArgs {
  Tensor key_padding_mask = {};  ///< bool (B, S): true = IGNORE this key (padding), as PyTorch's
  bool need_weights = false;     ///< also return per-head weights (B, h, L, S) (PyTorch: averaged)
  Tensor attn_mask = {};         ///< bool: true = NOT allowed (as PyTorch's nn.MultiheadAttention), or float
                                 /// (added to the scores); (L, S), PyTorch's 3-D (B * h, L, S) (batch-major,
                                 /// one per batch entry and head), or any shape broadcastable to (B, h, L, S)
  bool causal = false;           ///< also apply causal_mask(L, S, causal_variant)
  CausalVariant causal_variant = CausalVariant::upper_left;  ///< see attograd/ops/attention.h
  /// attograd's spelling of key_padding_mask with the opposite polarity: bool (B, S),
  /// true = KEEP this key (a real token), e.g. keep_mask_from_lengths. Give one or the other.
  Tensor key_keep_mask = {};
};

// ---- Attention: one head with learned projections (nn/ATTENTION.md) ----
/// Options of nn::Attention: required ones in the constructor, the rest chainable setters.
struct AttentionOptions {
  /// The required options; the others keep their PyTorch defaults.
  AttentionOptions(int64_t embed_dim) : embed_dim_(embed_dim) {}
  /// E, the model width (query width and output width).
  AG_ARG(int64_t, embed_dim);
  AG_ARG(std::optional<int64_t>, kdim);  ///< key width, default embed_dim
  AG_ARG(std::optional<int64_t>, vdim);  ///< value width, default embed_dim
  /// Biases in the input and output projections.
  AG_ARG(bool, bias) = true;
};

/// Single-head attention with learned q, k, v and output projections: (B, L, E) -> (B, L, E).
class AttentionImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit AttentionImpl(const AttentionOptions& options);
  /// query (B, L, E), key (B, S, kdim), value (B, S, vdim) -> (output (B, L, E),
  /// weights (B, 1, L, S) when requested).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  AttentionOptions options;
  Linear q_proj{nullptr};    ///< query projection (E -> E)
  Linear k_proj{nullptr};    ///< key projection (kdim -> E)
  Linear v_proj{nullptr};    ///< value projection (vdim -> E)
  Linear out_proj{nullptr};  ///< output projection (E -> E)
};
/// The holder of AttentionImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Attention);

// ---- MultiheadAttention, as torch.nn.MultiheadAttention ----
/// Options of nn::MultiheadAttention: required ones in the constructor, the rest chainable setters.
struct MultiheadAttentionOptions {
  /// The required options; the others keep their PyTorch defaults.
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// E, the model width (query width and output width).
  AG_ARG(int64_t, embed_dim);
  /// H, the number of query heads (embed_dim % num_heads == 0).
  AG_ARG(int64_t, num_heads);
  /// Dropout probability in training.
  AG_ARG(double, dropout) = 0.0;
  /// Biases in the input and output projections.
  AG_ARG(bool, bias) = true;
  /// Appends learned bias_k / bias_v rows to the keys and values (source length + 1).
  AG_ARG(bool, add_bias_kv) = false;
  /// Appends a row of zeros to the keys and values after them (source length + 1), every
  /// query allowed to attend to it, as PyTorch's add_zero_attn.
  AG_ARG(bool, add_zero_attn) = false;
  /// The key input width (default embed_dim).
  AG_ARG(std::optional<int64_t>, kdim);
  /// The value input width (default embed_dim).
  AG_ARG(std::optional<int64_t>, vdim);
  /// Inputs and output (B, len, E); false: sequence-first (len, B, E), PyTorch's default
  /// and LibTorch's only layout. attograd's default stays true (every attograd program
  /// before 0.3 is batch-first; nn/PORTING.md).
  AG_ARG(bool, batch_first) = true;
};

/// torch.nn.MultiheadAttention: (B, L, E) queries over (B, S, *) keys/values -> (B, L, E),
/// or (L, B, E) over (S, B, *) with batch_first(false).
class MultiheadAttentionImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  /// Shorthand for the options constructor.
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  void reset_parameters();  ///< PyTorch's: xavier_uniform projections, zero biases
  /// query (B, L, E), key (B, S, kdim), value (B, S, vdim) -> (output (B, L, E),
  /// per-head weights (B, h, L, S) or undefined); with batch_first(false) query (L, B, E),
  /// key (S, B, kdim), value (S, B, vdim) -> output (L, B, E), the weights as before. With add_bias_kv, S counts the
  /// appended bias key. A query whose keys are all masked attends to nothing: its
  /// attention output is zero (so its module output is out_proj.bias).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  void pretty_print(std::ostream& os) const override;

  /// Projections of q, k, v (B, len, E), whatever batch_first; used by forward and by
  /// incremental decoding.
  Tensor project_q(const Tensor& query) const;
  /// key (B, S, kdim), value (B, S, vdim) -> projected k, v (B, S, E).
  std::pair<Tensor, Tensor> project_kv(const Tensor& key, const Tensor& value) const;
  /// Attention on projected (B, L, E) q and (B, S, E) k, v: head split, masks, softmax,
  /// head merge and out_proj.
  std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& args);
  /// Cached causal self-attention, as GroupedQueryAttention::forward_step: x (B, n, E)
  /// holds n new positions following the cache's t; their projected keys and values are
  /// appended to `cache` as (B, h, n, d), then each new query i sees the cached keys
  /// 0 ... t + i (CausalVariant::lower_right) and, with add_bias_kv, bias_k / bias_v (kept
  /// out of the cache, so cache.length() counts positions). n = prompt length for the
  /// prefill, then 1 per decoded token. Masks in args apply on top, over the t + n cached
  /// keys (attn_mask (n, t + n), padding masks (B, t + n)). Returns (B, n, E), equal to
  /// the matching rows of forward(x_all, x_all, x_all, causal) over every position so far.
  /// Needs kdim = vdim = embed_dim (self-attention); inference: the cache keeps no graph.
  /// With batch_first(false) x and the result are (n, B, E); the cache is the same.
  Tensor forward_step(const Tensor& x, DecoderKVCache::Layer& cache, const AttentionArgs& args = {});

  /// True when q, k, v share one in_proj_weight (kdim = vdim = embed_dim).
  bool packed() const { return in_proj_weight.defined(); }
  /// d = embed_dim / num_heads.
  int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }

  /// The options it was built with (pretty_print shows them).
  MultiheadAttentionOptions options;
  Tensor in_proj_weight;  ///< (3E, E) when kdim = vdim = E
  Tensor q_proj_weight;   ///< (E, E) query weight when unpacked (kdim or vdim != E)
  Tensor k_proj_weight;   ///< (E, kdim) key weight when unpacked
  Tensor v_proj_weight;   ///< (E, vdim) value weight when unpacked
  Tensor in_proj_bias;    ///< (3E)
  Tensor bias_k;          ///< (1, 1, E) learned key appended with add_bias_kv, else undefined
  Tensor bias_v;          ///< (1, 1, E) learned value appended with add_bias_kv, else undefined
  /// The output projection (E -> E).
  Linear out_proj{nullptr};

 private:
  /// attend after the head split: q (B, h, L, d), k and v (B, h, S, d); appends bias_k,
  /// bias_v with add_bias_kv.
  std::pair<Tensor, Tensor> attend_heads(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& args);
};
/// The holder of MultiheadAttentionImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(MultiheadAttention);

}  // namespace ag::nn
