#pragma once
// Attention modules. Legend: B batch, L query length, S key length, E embed dim,
// h heads, d = E / h head dim. Inputs are batch-first.
#include <optional>
#include <utility>

#include "attograd/nn/layers.h"

namespace ag::nn {

struct AttentionArgs {
  Tensor attn_mask;           // bool (true = may attend) or float (added to scores),
                              // broadcastable to (B, h, L, S): (L, S) is typical
  Tensor padding_mask;        // bool (B, S): true = real key, false = padding
  Tensor key_padding_mask;    // bool (B, S): true = IGNORE this key (torch.nn.MultiheadAttention's
                              // meaning); the negation of padding_mask. Give one or the other.
  bool causal = false;        // also apply causal_mask(L, S, causal_variant)
  CausalVariant causal_variant = CausalVariant::upper_left;  // see attograd/nn_ops.h
  bool need_weights = false;  // also return per-head weights (B, h, L, S)
};

// ---- Attention: one head with learned projections (note 002) ----
struct AttentionOptions {
  AttentionOptions(int64_t embed_dim) : embed_dim_(embed_dim) {}
  AG_ARG(int64_t, embed_dim);
  AG_ARG(std::optional<int64_t>, kdim);  // key width, default embed_dim
  AG_ARG(std::optional<int64_t>, vdim);  // value width, default embed_dim
  AG_ARG(bool, bias) = true;
};

class AttentionImpl : public Module {
 public:
  explicit AttentionImpl(const AttentionOptions& options);
  // query (B, L, E), key (B, S, kdim), value (B, S, vdim) -> (output (B, L, E),
  // weights (B, 1, L, S) when requested).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  void pretty_print(std::ostream& os) const override;

  AttentionOptions options;
  Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};
};
AG_MODULE(Attention);

// ---- MultiheadAttention, as torch.nn.MultiheadAttention(batch_first=True) ----
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  AG_ARG(int64_t, embed_dim);
  AG_ARG(int64_t, num_heads);
  AG_ARG(double, dropout) = 0.0;
  AG_ARG(bool, bias) = true;
  AG_ARG(bool, add_bias_kv) = false;
  AG_ARG(std::optional<int64_t>, kdim);
  AG_ARG(std::optional<int64_t>, vdim);
};

class MultiheadAttentionImpl : public Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  void reset_parameters();  // PyTorch's: xavier_uniform projections, zero biases
  // query (B, L, E), key (B, S, kdim), value (B, S, vdim) -> (output (B, L, E),
  // per-head weights (B, h, L, S) or undefined). With add_bias_kv, S counts the
  // appended bias key. A query whose keys are all masked attends to nothing: its
  // attention output is zero (so its module output is out_proj.bias).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionArgs& args = {});
  void pretty_print(std::ostream& os) const override;

  // Projections of q, k, v (B, len, E); used by forward and by incremental decoding.
  Tensor project_q(const Tensor& query) const;
  std::pair<Tensor, Tensor> project_kv(const Tensor& key, const Tensor& value) const;
  // Attention on projected (B, L, E) q and (B, S, E) k, v: head split, masks, softmax,
  // head merge and out_proj.
  std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionArgs& args);

  bool packed() const { return in_proj_weight.defined(); }
  int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }

  MultiheadAttentionOptions options;
  Tensor in_proj_weight;                               // (3E, E) when kdim = vdim = E
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;  // (E, E), (E, kdim), (E, vdim) otherwise
  Tensor in_proj_bias;                                 // (3E)
  Tensor bias_k, bias_v;                               // (1, 1, E) with add_bias_kv
  Linear out_proj{nullptr};
};
AG_MODULE(MultiheadAttention);

}  // namespace ag::nn
