// The GPT model: see gpt.h. Initialization as GPT-2: N(0, 0.02) weights and embeddings,
// zero biases, and the residual projections (attn.proj, mlp.proj) scaled by
// 1/sqrt(2 * layers) so that the residual stream's variance does not grow with depth.
#include "gpt.h"

#include <cmath>

namespace lm {

namespace {

void init_linear(nn::Linear& l, double std) {
  nn::init::normal_(l->weight, 0.0, std);
  if (l->bias.defined()) nn::init::zeros_(l->bias);
}

nn::LayerNorm layer_norm(const GPTOptions& o) {
  return nn::LayerNorm(nn::LayerNormOptions({o.d_model()}).bias(o.bias()));
}

}  // namespace

// ---- CausalSelfAttention ----
CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPTOptions& o) : Module("CausalSelfAttention"), options(o) {
  AG_CHECK(o.d_model() % o.heads() == 0, ValueError, "GPT: d_model ", o.d_model(), " is not divisible by heads ",
           o.heads());
  const double resid_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers()));
  qkv = register_module("qkv", nn::Linear(nn::LinearOptions(o.d_model(), 3 * o.d_model()).bias(o.bias())));
  proj = register_module("proj", nn::Linear(nn::LinearOptions(o.d_model(), o.d_model()).bias(o.bias())));
  init_linear(qkv, 0.02);
  init_linear(proj, resid_std);
}

Tensor CausalSelfAttentionImpl::forward(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), E = x.size(2), h = options.heads();
  // (B, T, 3E) -> three (B, h, T, d)
  auto parts = chunk(qkv(x), 3, -1);
  auto heads = [&](const Tensor& t) { return t.reshape({B, T, h, E / h}).transpose(1, 2); };
  SdpaOptions so;
  so.causal = true;  // the fused kernel skips the key tiles above the diagonal
  so.dropout_p = is_training() ? options.dropout() : 0.0;
  Tensor y = scaled_dot_product_attention(heads(parts[0]), heads(parts[1]), heads(parts[2]), so).first;  // (B, h, T, d)
  return proj(y.transpose(1, 2).reshape({B, T, E}));
}

// ---- MLP ----
MLPImpl::MLPImpl(const GPTOptions& o) : Module("MLP") {
  const int64_t hidden = o.mlp_ratio() * o.d_model();
  fc = register_module("fc", nn::Linear(nn::LinearOptions(o.d_model(), hidden).bias(o.bias())));
  proj = register_module("proj", nn::Linear(nn::LinearOptions(hidden, o.d_model()).bias(o.bias())));
  init_linear(fc, 0.02);
  init_linear(proj, 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers())));
}

Tensor MLPImpl::forward(const Tensor& x) { return proj(gelu(fc(x))); }

// ---- Block ----
BlockImpl::BlockImpl(const GPTOptions& o) : Module("Block") {
  ln_1 = register_module("ln_1", layer_norm(o));
  attn = register_module("attn", CausalSelfAttention(o));
  ln_2 = register_module("ln_2", layer_norm(o));
  mlp = register_module("mlp", MLP(o));
  drop = register_module("drop", nn::Dropout(o.dropout()));
}

Tensor BlockImpl::forward(const Tensor& x) {
  Tensor h = x + drop(attn(ln_1(x)));
  return h + drop(mlp(ln_2(h)));
}

// ---- GPT ----
GPTImpl::GPTImpl(const GPTOptions& o) : Module("GPT"), options(o) {
  tok_emb = register_module("tok_emb", nn::Embedding(o.vocab(), o.d_model()));
  pos_emb = register_module("pos_emb", nn::Embedding(o.context(), o.d_model()));
  drop = register_module("drop", nn::Dropout(o.dropout()));
  blocks = register_module("blocks", nn::ModuleList());
  for (int64_t i = 0; i < o.layers(); ++i) blocks->push_back(Block(o));
  ln_f = register_module("ln_f", layer_norm(o));
  head = register_module("head", nn::Linear(nn::LinearOptions(o.d_model(), o.vocab()).bias(false)));
  nn::init::normal_(tok_emb->weight, 0.0, 0.02);
  nn::init::normal_(pos_emb->weight, 0.0, 0.02);
  nn::init::normal_(head->weight, 0.0, 0.02);
}

Tensor GPTImpl::forward(const Tensor& ids) {
  AG_CHECK(ids.dim() == 2, ShapeError, "GPT: ids must be (B, T), got shape ", ids.shape());
  const int64_t T = ids.size(1);
  AG_CHECK(T >= 1 && T <= options.context(), ShapeError, "GPT: sequence length ", T, " must be in [1, context = ",
           options.context(), "] (ids shape ", ids.shape(), ")");
  Tensor x = drop(tok_emb(ids) + pos_emb(arange(T)));  // (B, T, E) + (T, E)
  for (const auto& b : *blocks) x = std::static_pointer_cast<BlockImpl>(b)->forward(x);
  return head(ln_f(x));  // (B, T, V)
}

int64_t GPTImpl::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

void GPTImpl::pretty_print(std::ostream& os) const {
  os << "GPT(vocab=" << options.vocab() << ", context=" << options.context() << ", d_model=" << options.d_model()
     << ", heads=" << options.heads() << ", layers=" << options.layers() << ", dropout=" << options.dropout() << ')';
}

}  // namespace lm
