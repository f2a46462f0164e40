#pragma once
// A decoder-only Transformer language model, written with the public nn API. The
// default is GPT-2's layout; four switches turn it into a LLaMA-style model:
//   token embedding (+ learned position embedding when pos == learned), N pre-norm blocks
//     x = x + attn(norm_1(x))    causal self-attention through nn::GroupedQueryAttention
//                                (kv_heads key/value heads shared by `heads` query heads;
//                                kv_heads == heads is ordinary multi-head attention), with
//                                rotary embeddings on q and k (B, h, T, d) when pos == rope
//     x = x + mlp(norm_2(x))     gelu: Linear(E, rE) -> GELU -> Linear(rE, E)
//                                swiglu: nn::SwiGLU with H = 2rE/3 rounded up to a multiple
//                                of 8 (three E x H matrices ~ the two E x rE of GELU's)
//   a final norm (LayerNorm, or RMSNorm when norm == rms) and a Linear head to the
//   vocabulary, whose weight is the token embedding's when tie is set.
// Attention always goes through GroupedQueryAttention so that every configuration can
// decode with a DecoderKVCache (forward_step below). Parameter names follow PyTorch
// modules of the same layout (tools/check_lm_model.py rebuilds them there):
//   tok_emb.weight, pos_emb.weight (learned only), blocks.<i>.ln_1.{weight, bias},
//   blocks.<i>.attn.{q_proj, k_proj, v_proj, out_proj}.{weight, bias}, blocks.<i>.ln_2,
//   blocks.<i>.mlp.{fc, proj} (gelu) or blocks.<i>.mlp.{w1, w2, w3} (swiglu),
//   ln_f.{weight, bias}, head.weight. Tied, the state dict still has both keys (as
//   torch's); named_parameters lists the shared tensor once, as tok_emb.weight.
// RMSNorm has no bias; its eps is LayerNorm's 1e-5.
// Legend: B batch, T sequence length (<= context), E d_model, h heads, g kv_heads,
// d = E / h, V vocab, t positions in a KV cache.
#include <attograd/attograd.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "model.h"

namespace lm {

using namespace ag;

enum class Norm { layer, rms };
enum class Position { learned, rope };
enum class MlpKind { gelu, swiglu };

struct GPTOptions {
  GPTOptions(int64_t vocab) : vocab_(vocab) {}
  AG_ARG(int64_t, vocab);
  AG_ARG(int64_t, context) = 128;  // longest sequence (rows of the position table)
  AG_ARG(int64_t, d_model) = 128;
  AG_ARG(int64_t, heads) = 4;
  AG_ARG(std::optional<int64_t>, kv_heads);  // g, dividing heads; default heads
  AG_ARG(int64_t, layers) = 4;
  AG_ARG(int64_t, mlp_ratio) = 4;  // GELU MLP width = mlp_ratio * d_model (SwiGLU: 2/3 of it)
  AG_ARG(double, dropout) = 0.0;   // on embeddings, attention weights and residual branches
  AG_ARG(bool, bias) = true;       // biases in Linear layers and LayerNorms (not the head)
  AG_ARG(Norm, norm) = Norm::layer;
  AG_ARG(Position, pos) = Position::learned;
  AG_ARG(MlpKind, mlp) = MlpKind::gelu;
  AG_ARG(bool, tie) = false;  // head.weight is tok_emb.weight
  // Training only: each block runs under ag::checkpoint (attograd/activation_checkpoint.h), so its
  // activations are recomputed in backward instead of kept (less memory, ~1/3 more time).
  AG_ARG(bool, checkpoint_activations) = false;
};

// SwiGLU's hidden width for these options: 2/3 of the GELU MLP's, rounded up to 8.
int64_t swiglu_hidden(const GPTOptions& o);

// ---- MLP (gelu): fc (E -> rE), GELU, proj (rE -> E) ----
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
  // rope: the model's rotary tables (shared by the blocks, not a parameter), or empty.
  BlockImpl(const GPTOptions& o, nn::RotaryEmbedding rope);
  Tensor forward(const Tensor& x);  // (B, T, E) -> (B, T, E)
  // x (B, n, E): n new positions after the cache's t -> (B, n, E); appends their k, v.
  Tensor forward_step(const Tensor& x, nn::DecoderKVCache::Layer& cache);

  GPTOptions options;
  // Exactly one of each pair is registered (as ln_1, ln_2, mlp), by options.norm / mlp.
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  nn::RMSNorm rms_1{nullptr}, rms_2{nullptr};
  nn::GroupedQueryAttention attn{nullptr};
  MLP mlp{nullptr};
  nn::SwiGLU swiglu{nullptr};
  nn::Dropout drop{nullptr};  // on each residual branch
  nn::RotaryEmbedding rope{nullptr};

 private:
  Tensor norm_1(const Tensor& x) { return ln_1.is_empty() ? rms_1(x) : ln_1(x); }
  Tensor norm_2(const Tensor& x) { return ln_2.is_empty() ? rms_2(x) : ln_2(x); }
  Tensor feed_forward(const Tensor& x) { return mlp.is_empty() ? swiglu(x) : mlp(x); }
};
AG_MODULE(Block);

class GPTImpl : public CharLMImpl {
 public:
  explicit GPTImpl(const GPTOptions& o);
  // ids (B, T) i64 with T <= context -> logits (B, T, V)
  Tensor forward(const Tensor& ids) override;
  // Cached decoding: ids (B, n) are the n tokens after the cache's t (t + n <= context)
  // -> logits (B, n, V), equal to the last n rows of forward over all t + n tokens.
  Tensor forward_step(const Tensor& ids, nn::DecoderKVCache& cache);
  nn::DecoderKVCache make_cache() const { return nn::DecoderKVCache(static_cast<std::size_t>(options.layers())); }
  int64_t max_length() const override { return options.context(); }
  std::unique_ptr<Decoder> decoder() override;  // forward_step over a make_cache()
  void pretty_print(std::ostream& os) const override;

  GPTOptions options;
  nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};  // pos_emb only for learned positions
  nn::RotaryEmbedding rope{nullptr};                 // only for rope
  nn::Dropout drop{nullptr};
  nn::ModuleList blocks{nullptr};
  nn::LayerNorm ln_f{nullptr};
  nn::RMSNorm rms_f{nullptr};
  nn::Linear head{nullptr};

 private:
  Tensor embed(const Tensor& ids, int64_t offset);  // (B, T) -> (B, T, E), positions offset ..
  Tensor final_norm(const Tensor& x) { return ln_f.is_empty() ? rms_f(x) : ln_f(x); }
};
AG_MODULE(GPT);

// --quantize: weight-only "int8" or "int4" (groups of 32; a last partial group, as
// SwiGLU's w2 at d_model 128 has with in_features 344, is zero-padded), or "dynamic-int8"
// (int8 weights and activations quantized per row at run time) for every Linear of the
// model (ag::quant::quantize_), in place. Returns how many Linears were quantized.
int64_t quantize_for_inference(const GPT& model, const std::string& format);

}  // namespace lm
