// The GPT model: see gpt.h. Initialization as GPT-2: N(0, 0.02) weights and embeddings,
// zero biases, and the residual projections (attn.out_proj, mlp.proj / mlp.w2) scaled by
// 1/sqrt(2 * layers) so that the residual stream's variance does not grow with depth.
#include "gpt.h"

#include <cmath>

namespace lm {

namespace {

constexpr double kNormEps = 1e-5;

void init_linear(nn::Linear& l, double std) {
  nn::init::normal_(l->weight, 0.0, std);
  if (l->bias.defined()) nn::init::zeros_(l->bias);
}

double resid_std(const GPTOptions& o) { return 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers())); }

// Registers a LayerNorm or an RMSNorm under `name`, by o.norm().
void register_norm(nn::Module& m, const std::string& name, const GPTOptions& o, nn::LayerNorm& ln, nn::RMSNorm& rms) {
  if (o.norm() == Norm::layer)
    ln = m.register_module(name, nn::LayerNorm(nn::LayerNormOptions({o.d_model()}).eps(kNormEps).bias(o.bias())));
  else
    rms = m.register_module(name, nn::RMSNorm(nn::RMSNormOptions({o.d_model()}).eps(kNormEps)));
}

}  // namespace

int64_t swiglu_hidden(const GPTOptions& o) {
  const int64_t h = 2 * o.mlp_ratio() * o.d_model() / 3;
  return (h + 7) / 8 * 8;
}

// ---- MLP ----
MLPImpl::MLPImpl(const GPTOptions& o) : Module("MLP") {
  const int64_t hidden = o.mlp_ratio() * o.d_model();
  fc = register_module("fc", nn::Linear(nn::LinearOptions(o.d_model(), hidden).bias(o.bias())));
  proj = register_module("proj", nn::Linear(nn::LinearOptions(hidden, o.d_model()).bias(o.bias())));
  init_linear(fc, 0.02);
  init_linear(proj, resid_std(o));
}

Tensor MLPImpl::forward(const Tensor& x) { return proj(gelu(fc(x))); }

// ---- Block ----
BlockImpl::BlockImpl(const GPTOptions& o, nn::RotaryEmbedding rope_)
    : Module("Block"), options(o), rope(std::move(rope_)) {
  const int64_t g = o.kv_heads().value_or(o.heads());
  AG_CHECK(o.d_model() % o.heads() == 0, ValueError, "GPT: d_model ", o.d_model(), " is not divisible by heads ",
           o.heads());
  AG_CHECK(g >= 1 && o.heads() % g == 0, ValueError, "GPT: kv_heads ", g, " does not divide heads ", o.heads());
  AG_CHECK((o.pos() == Position::rope) == !rope.is_empty(), ValueError,
           "GPT block: rotary tables must be given exactly when pos is rope");
  register_norm(*this, "ln_1", o, ln_1, rms_1);
  attn = register_module("attn", nn::GroupedQueryAttention(nn::GroupedQueryAttentionOptions(o.d_model(), o.heads())
                                                               .num_kv_heads(g)
                                                               .bias(o.bias())
                                                               .dropout(o.dropout())));
  init_linear(attn->q_proj, 0.02);
  init_linear(attn->k_proj, 0.02);
  init_linear(attn->v_proj, 0.02);
  init_linear(attn->out_proj, resid_std(o));
  register_norm(*this, "ln_2", o, ln_2, rms_2);
  if (o.mlp() == MlpKind::gelu) {
    mlp = register_module("mlp", MLP(o));
  } else {
    swiglu = register_module("mlp", nn::SwiGLU(nn::SwiGLUOptions(o.d_model(), swiglu_hidden(o)).bias(o.bias())));
    init_linear(swiglu->w1, 0.02);
    init_linear(swiglu->w3, 0.02);
    init_linear(swiglu->w2, resid_std(o));
  }
  drop = register_module("drop", nn::Dropout(o.dropout()));
}

// (B, T, E) -> (B, T, E). One handle `t` is reassigned step by step, so each
// intermediate is released as soon as the next exists (as Python's reference counting
// does in PyTorch's block): under autocast the f32 layer-norm outputs are dead once the
// projections have cast them, where a local or a temporary of the last statement kept
// 2 MiB of them alive at workload 7's peak.
Tensor BlockImpl::forward(const Tensor& x) {
  nn::AttentionArgs args;
  args.causal = true;  // the fused kernel skips the key tiles above the diagonal
  Tensor t = norm_1(x);
  if (rope.is_empty()) {
    t = attn(t, t, t, args).first;
  } else {
    // Rotate q (B, h, T, d) and k (B, g, T, d) between projection and attention.
    auto [k, v] = attn->project_kv(t, t);
    Tensor q = rope(attn->project_q(t));
    t = attn->attend(q, rope(k), v, args).first;
  }
  t = drop(t);
  const Tensor h = x + t;
  t = norm_2(h);
  t = feed_forward(t);
  t = drop(t);
  return h + t;
}

Tensor BlockImpl::forward_step(const Tensor& x, nn::DecoderKVCache::Layer& cache) {
  Tensor a = norm_1(x);  // (B, n, E)
  Tensor y;
  if (rope.is_empty()) {
    y = attn->forward_step(a, cache);
  } else {
    // As GroupedQueryAttention::forward_step, with q and k rotated to their absolute
    // positions t .. t + n - 1 before k joins the cache.
    const int64_t t = cache.length();
    auto [k, v] = attn->project_kv(a, a);  // (B, g, n, d)
    cache.append(rope(k, t), v);
    nn::AttentionArgs args;
    args.causal = true;
    args.causal_variant = CausalVariant::lower_right;  // the n queries are the last n of t + n keys
    y = attn->attend(rope(attn->project_q(a), t), cache.keys(), cache.values(), args).first;
  }
  Tensor h = x + drop(y);
  return h + drop(feed_forward(norm_2(h)));
}

// ---- GPT ----
GPTImpl::GPTImpl(const GPTOptions& o) : CharLMImpl("GPT"), options(o) {
  tok_emb = register_module("tok_emb", nn::Embedding(o.vocab(), o.d_model()));
  if (o.pos() == Position::learned) {
    pos_emb = register_module("pos_emb", nn::Embedding(o.context(), o.d_model()));
    nn::init::normal_(pos_emb->weight, 0.0, 0.02);
  } else {
    AG_CHECK((o.d_model() / o.heads()) % 2 == 0, ValueError, "GPT: rope needs an even head dim, got d_model ",
             o.d_model(), " / heads ", o.heads());
    rope = register_module(
        "rope", nn::RotaryEmbedding(nn::RotaryEmbeddingOptions(o.d_model() / o.heads()).max_position(o.context())));
  }
  drop = register_module("drop", nn::Dropout(o.dropout()));
  blocks = register_module("blocks", nn::ModuleList());
  for (int64_t i = 0; i < o.layers(); ++i) blocks->push_back(Block(o, rope));
  register_norm(*this, "ln_f", o, ln_f, rms_f);
  head = register_module("head", nn::Linear(nn::LinearOptions(o.d_model(), o.vocab()).bias(false)));
  nn::init::normal_(tok_emb->weight, 0.0, 0.02);
  if (o.tie())
    head->weight = tok_emb->weight;  // (V, E) both: one tensor, one gradient, one optimizer state
  else
    nn::init::normal_(head->weight, 0.0, 0.02);
}

Tensor GPTImpl::embed(const Tensor& ids, int64_t offset) {
  AG_CHECK(ids.dim() == 2, ShapeError, "GPT: ids must be (B, T), got shape ", ids.shape());
  const int64_t T = ids.size(1);
  AG_CHECK(T >= 1 && offset + T <= options.context(), ShapeError, "GPT: positions ", offset, " .. ", offset + T - 1,
           " must lie in [0, context = ", options.context(), ") (ids shape ", ids.shape(), ")");
  Tensor x = tok_emb(ids);                                               // (B, T, E)
  if (!pos_emb.is_empty()) x = x + pos_emb(arange(offset, offset + T));  // + (T, E)
  return drop(x);
}

Tensor GPTImpl::forward(const Tensor& ids) {
  Tensor x = embed(ids, 0);
  const bool ckpt = options.checkpoint_activations() && is_training() && grad_enabled();
  for (const auto& b : *blocks) {
    auto block = std::static_pointer_cast<BlockImpl>(b);
    // (B, T, E) -> (B, T, E); checkpointed, the block's dropout masks are drawn again
    // from the same generator state in backward, so gradients equal the plain ones.
    x = ckpt ? checkpoint([block](const Tensor& v) { return block->forward(v); }, x) : block->forward(x);
  }
  return head(final_norm(x));  // (B, T, V)
}

Tensor GPTImpl::forward_step(const Tensor& ids, nn::DecoderKVCache& cache) {
  AG_CHECK(cache.layers.size() == blocks->size(), ValueError, "GPT forward_step: the cache has ", cache.layers.size(),
           " layers, the model ", blocks->size());
  Tensor x = embed(ids, cache.length());
  for (std::size_t i = 0; i < blocks->size(); ++i)
    x = std::static_pointer_cast<BlockImpl>((*blocks)[i])->forward_step(x, cache.layers[i]);
  return head(final_norm(x));  // (B, n, V)
}

namespace {

class GPTDecoder : public Decoder {
 public:
  explicit GPTDecoder(GPTImpl& model) : model_(model), cache_(model.make_cache()) {}
  Tensor step(const Tensor& ids) override { return model_.forward_step(ids, cache_); }  // (1, n) -> (1, n, V)
  int64_t length() const override { return cache_.length(); }

 private:
  GPTImpl& model_;
  nn::DecoderKVCache cache_;
};

}  // namespace

std::unique_ptr<Decoder> GPTImpl::decoder() { return std::make_unique<GPTDecoder>(*this); }

void GPTImpl::pretty_print(std::ostream& os) const {
  os << "GPT(vocab=" << options.vocab() << ", context=" << options.context() << ", d_model=" << options.d_model()
     << ", heads=" << options.heads() << ", kv_heads=" << options.kv_heads().value_or(options.heads())
     << ", layers=" << options.layers() << ", norm=" << (options.norm() == Norm::layer ? "layer" : "rms")
     << ", pos=" << (options.pos() == Position::learned ? "learned" : "rope")
     << ", mlp=" << (options.mlp() == MlpKind::gelu ? "gelu" : "swiglu")
     << ", tie=" << (options.tie() ? "true" : "false") << ", dropout=" << options.dropout() << ')';
}

int64_t quantize_for_inference(const GPT& model, const std::string& format) {
  AG_CHECK(format == "int8" || format == "int4" || format == "dynamic-int8", ValueError,
           "lm: --quantize takes int8, int4 or dynamic-int8, got '", format, "'");
  return quant::quantize_(model, format == "int8"   ? quant::int8_weight_only()
                                 : format == "int4" ? quant::int4_weight_only(32)
                                                    : quant::int8_dynamic_activation_int8_weight());
}

}  // namespace lm
