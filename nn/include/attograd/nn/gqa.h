#pragma once
/// \file
/// Grouped-query attention and its KV cache for decoder-only models.
/// Legend: B batch, L query length, S key length, E embed dim, h query heads,
/// g key/value heads (h % g == 0), d = E / h head dim, t positions in a cache.
///
/// In grouped-query attention (GQA) the h query heads share g key/value heads: query
/// heads i*h/g ... (i+1)*h/g - 1 read key/value head i. g == h is ordinary multi-head
/// attention, g == 1 is multi-query attention (MQA). Quality stays close to g == h while
/// the keys and values a decoder caches per token shrink from 2*h*d to 2*g*d numbers per
/// layer, which is what bounds the batch size and context length of cached decoding.
///
/// Why a module apart from MultiheadAttention: MultiheadAttention keeps PyTorch's packed
/// in_proj_weight (3E, E) layout so that its state dict moves to and from
/// torch.nn.MultiheadAttention. With g < h the key and value projections are narrower
/// (E -> g*d) than the query's (E -> E), which that packed layout cannot hold; LLaMA-style
/// models keep four separate projections instead, and so does GroupedQueryAttention
/// (state-dict keys q_proj.weight, q_proj.bias, k_proj.weight, ..., out_proj.bias).
#include <optional>
#include <utility>
#include <vector>

#include "attograd/nn/attention.h"  // and DecoderKVCache (attograd/nn/kv_cache.h)

namespace ag::nn {

// ---- GroupedQueryAttention ----
/// Example: nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(512, 8).num_kv_heads(2));
struct GroupedQueryAttentionOptions {
  /// The required options; the others keep their PyTorch defaults.
  GroupedQueryAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// E, the model width (query width and output width).
  AG_ARG(int64_t, embed_dim);
  /// H, the number of query heads (embed_dim % num_heads == 0).
  AG_ARG(int64_t, num_heads);
  AG_ARG(std::optional<int64_t>, num_kv_heads);  ///< g, dividing num_heads; default num_heads
  /// Biases in the input and output projections.
  AG_ARG(bool, bias) = true;
  AG_ARG(double, dropout) = 0.0;  ///< on the attention weights, in training mode
};

/// Attention with h query heads sharing g key/value heads: (B, L, E) -> (B, L, E); separate q/k/v/out projections.
class GroupedQueryAttentionImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit GroupedQueryAttentionImpl(const GroupedQueryAttentionOptions& options);
  /// Shorthand for the options constructor.
  GroupedQueryAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : GroupedQueryAttentionImpl(GroupedQueryAttentionOptions(embed_dim, num_heads)) {}
  /// query (B, L, E), key (B, S, E), value (B, S, E) -> (output (B, L, E), per-head
  /// weights (B, h, L, S) when args.need_weights, else undefined). Masks as for
  /// MultiheadAttention (attn_mask, causal with causal_variant, key_keep_mask or
  /// key_padding_mask). A query whose keys are all masked gives out_proj.bias.
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  /// Cached causal self-attention: x (B, n, E) holds n new positions following the
  /// cache's t; their keys and values are appended to `cache`, then each new query i sees
  /// the cached keys 0 ... t + i (CausalVariant::lower_right). n = prompt length for the
  /// prefill, then 1 per decoded token. Masks in args apply on top, over all t + n keys
  /// (padding masks are (B, t + n)). Returns (B, n, E), equal to the matching rows of
  /// forward(x_all, x_all, x_all, causal) over every position so far.
  Tensor forward_step(const Tensor& x, DecoderKVCache::Layer& cache, const AttentionArgs& args = {});

  /// The pieces of forward, for callers that transform q and k between projection and
  /// attention (rotary embeddings): (B, L, E) -> (B, h, L, d); (B, S, E) -> (B, g, S, d) twice.
  Tensor project_q(const Tensor& query) const;
  /// key, value (B, S, E) -> k, v (B, g, S, d), heads split.
  std::pair<Tensor, Tensor> project_kv(const Tensor& key, const Tensor& value) const;
  /// q (B, h, L, d), k and v (B, g, S, d) -> (out_proj of the merged heads (B, L, E),
  /// weights (B, h, L, S) or undefined).
  std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& args);

  void pretty_print(std::ostream& os) const override;
  /// g, the key/value heads (num_heads when not set).
  int64_t num_kv_heads() const { return options.num_kv_heads().value_or(options.num_heads()); }
  /// d = embed_dim / num_heads.
  int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }

  /// The options it was built with (pretty_print shows them).
  GroupedQueryAttentionOptions options;
  Linear q_proj{nullptr};    ///< query projection (E -> h*d)
  Linear k_proj{nullptr};    ///< key projection (E -> g*d)
  Linear v_proj{nullptr};    ///< value projection (E -> g*d)
  Linear out_proj{nullptr};  ///< output projection (E -> E)
};
/// The holder of GroupedQueryAttentionImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(GroupedQueryAttention);

}  // namespace ag::nn
