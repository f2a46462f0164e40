#pragma once
// A decoder-only Transformer language model (GPT-2's layout), written with the public
// nn API: token and learned position embeddings, N pre-norm blocks
//   x = x + attn(ln_1(x))    causal self-attention (fused kernel, causal = true)
//   x = x + mlp(ln_2(x))     Linear(E, 4E) -> GELU -> Linear(4E, E)
// a final LayerNorm and a Linear head to the vocabulary. Parameter names follow
// PyTorch modules of the same layout (tools/check_lm_model.py rebuilds it there):
//   tok_emb.weight, pos_emb.weight, blocks.<i>.{ln_1, attn.qkv, attn.proj, ln_2,
//   mlp.fc, mlp.proj}.{weight, bias}, ln_f.{weight, bias}, head.weight.
// Each architectural choice is one field of GPTOptions and is read in one place (the
// block's members), so variants (another norm, position scheme, attention or MLP) are
// one switch each.
// Legend: B batch, T sequence length (<= context), E d_model, h heads, d = E / h, V vocab.
#include <attograd/attograd.h>

#include <ostream>

namespace lm {

using namespace ag;

struct GPTOptions {
  GPTOptions(int64_t vocab) : vocab_(vocab) {}
  AG_ARG(int64_t, vocab);
  AG_ARG(int64_t, context) = 128;  // longest sequence (rows of the position table)
  AG_ARG(int64_t, d_model) = 128;
  AG_ARG(int64_t, heads) = 4;
  AG_ARG(int64_t, layers) = 4;
  AG_ARG(int64_t, mlp_ratio) = 4;  // hidden width of the MLP = mlp_ratio * d_model
  AG_ARG(double, dropout) = 0.0;   // on embeddings, attention weights and residual branches
  AG_ARG(bool, bias) = true;       // biases in Linear layers and LayerNorms (not the head)
};

// ---- causal self-attention: qkv (E -> 3E), sdpa with causal = true, proj (E -> E) ----
class CausalSelfAttentionImpl : public nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GPTOptions& o);
  Tensor forward(const Tensor& x);  // (B, T, E) -> (B, T, E)
  GPTOptions options;
  nn::Linear qkv{nullptr}, proj{nullptr};
};
AG_MODULE(CausalSelfAttention);

// ---- MLP: fc (E -> rE), GELU, proj (rE -> E) ----
class MLPImpl : public nn::Module {
 public:
  explicit MLPImpl(const GPTOptions& o);
  Tensor forward(const Tensor& x);  // (B, T, E) -> (B, T, E)
  nn::Linear fc{nullptr}, proj{nullptr};
};
AG_MODULE(MLP);

// ---- one pre-norm block ----
class BlockImpl : public nn::Module {
 public:
  explicit BlockImpl(const GPTOptions& o);
  Tensor forward(const Tensor& x);  // (B, T, E) -> (B, T, E)
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
  nn::Dropout drop{nullptr};  // on each residual branch
};
AG_MODULE(Block);

class GPTImpl : public nn::Module {
 public:
  explicit GPTImpl(const GPTOptions& o);
  // ids (B, T) i64 with T <= context -> logits (B, T, V)
  Tensor forward(const Tensor& ids);
  int64_t num_parameters() const;
  void pretty_print(std::ostream& os) const override;

  GPTOptions options;
  nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  nn::Dropout drop{nullptr};
  nn::ModuleList blocks{nullptr};
  nn::LayerNorm ln_f{nullptr};
  nn::Linear head{nullptr};
};
AG_MODULE(GPT);

}  // namespace lm
