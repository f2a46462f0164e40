// A PyTorch program ported line for line: nanoGPT's model (Karpathy's model.py) with
// the tril mask buffer and masked_fill, ModuleDict / ModuleList, tied embeddings, the
// inference path's x[:, [-1], :], hooks (forward, full backward, tensor, retain_grad)
// and activation checkpointing. tools/make_nanogpt_fixture.py is the PyTorch side; each
// line below is the corresponding line of that file in LibTorch's spelling, and the
// results match PyTorch 1.13's to 1e-8 in float64
// (tests/fixtures/nanogpt_port.safetensors).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <map>
#include <string>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace ag::indexing;

namespace {

struct Config {
  int64_t block_size = 8;
  int64_t vocab_size = 11;
  int64_t n_layer = 2;
  int64_t n_head = 2;
  int64_t n_embd = 8;
  double dropout = 0.0;
  bool bias = true;
  bool checkpoint = false;
};

struct CausalSelfAttentionImpl : nn::Module {
  explicit CausalSelfAttentionImpl(const Config& config) {
    AG_CHECK(config.n_embd % config.n_head == 0, ValueError, "n_embd % n_head");
    c_attn =
        register_module("c_attn", nn::Linear(nn::LinearOptions(config.n_embd, 3 * config.n_embd).bias(config.bias)));
    c_proj = register_module("c_proj", nn::Linear(nn::LinearOptions(config.n_embd, config.n_embd).bias(config.bias)));
    attn_dropout = register_module("attn_dropout", nn::Dropout(config.dropout));
    resid_dropout = register_module("resid_dropout", nn::Dropout(config.dropout));
    n_head = config.n_head;
    n_embd = config.n_embd;
    bias = register_buffer(
        "bias", tril(ones({config.block_size, config.block_size})).view({1, 1, config.block_size, config.block_size}));
  }

  Tensor forward(const Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    auto qkv = c_attn(x).split(n_embd, 2);
    Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    k = k.view({B, T, n_head, C / n_head}).transpose(1, 2);
    q = q.view({B, T, n_head, C / n_head}).transpose(1, 2);
    v = v.view({B, T, n_head, C / n_head}).transpose(1, 2);
    Tensor att = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(k.size(-1))));
    att = att.masked_fill(bias.index({Slice(), Slice(), Slice(None, T), Slice(None, T)}) == 0, -INFINITY);
    att = nn::functional::softmax(att, -1);
    att = attn_dropout(att);
    Tensor y = att.matmul(v);
    y = y.transpose(1, 2).contiguous().view({B, T, C});
    y = resid_dropout(c_proj(y));
    return y;
  }

  nn::Linear c_attn{nullptr}, c_proj{nullptr};
  nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
  int64_t n_head = 0, n_embd = 0;
  Tensor bias;
};
AG_MODULE(CausalSelfAttention);

struct MLPImpl : nn::Module {
  explicit MLPImpl(const Config& config) {
    c_fc = register_module("c_fc", nn::Linear(nn::LinearOptions(config.n_embd, 4 * config.n_embd).bias(config.bias)));
    gelu = register_module("gelu", nn::GELU());
    c_proj =
        register_module("c_proj", nn::Linear(nn::LinearOptions(4 * config.n_embd, config.n_embd).bias(config.bias)));
    dropout = register_module("dropout", nn::Dropout(config.dropout));
  }

  Tensor forward(Tensor x) {
    x = c_fc(x);
    x = gelu(x);
    x = c_proj(x);
    x = dropout(x);
    return x;
  }

  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::GELU gelu{nullptr};
  nn::Dropout dropout{nullptr};
};
AG_MODULE(MLP);

struct BlockImpl : nn::Module {
  explicit BlockImpl(const Config& config) {
    ln_1 = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({config.n_embd})));
    attn = register_module("attn", CausalSelfAttention(config));
    ln_2 = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({config.n_embd})));
    mlp = register_module("mlp", MLP(config));
  }

  Tensor forward(Tensor x) {
    x = x + attn(ln_1(x));
    x = x + mlp(ln_2(x));
    return x;
  }

  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
AG_MODULE(Block);

struct GPTImpl : nn::Module {
  explicit GPTImpl(const Config& config) : config(config) {
    nn::ModuleList h;
    for (int64_t i = 0; i < config.n_layer; ++i) h->append(Block(config));
    transformer =
        register_module("transformer", nn::ModuleDict(nn::ModuleDictImpl::Items{
                                           {"wte", nn::Embedding(config.vocab_size, config.n_embd).ptr()},
                                           {"wpe", nn::Embedding(config.block_size, config.n_embd).ptr()},
                                           {"drop", nn::Dropout(config.dropout).ptr()},
                                           {"h", h.ptr()},
                                           {"ln_f", nn::LayerNorm(nn::LayerNormOptions({config.n_embd})).ptr()},
                                       }));
    lm_head = register_module("lm_head", nn::Linear(nn::LinearOptions(config.n_embd, config.vocab_size).bias(false)));
    transformer["wte"]->as<nn::Embedding>()->weight = lm_head->weight;
    apply([](nn::Module& m) { init_weights(m); });
    for (auto& [pn, p] : named_parameters())
      if (pn.ends_with("c_proj.weight"))
        nn::init::normal_(p, 0.0, 0.02 / std::sqrt(2.0 * static_cast<double>(this->config.n_layer)));
  }

  static void init_weights(nn::Module& module) {
    if (auto* linear = module.as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0.0, 0.02);
      if (linear->bias.defined()) nn::init::zeros_(linear->bias);
    } else if (auto* embedding = module.as<nn::Embedding>()) {
      nn::init::normal_(embedding->weight, 0.0, 0.02);
    }
  }

  std::pair<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets = {}) {
    const int64_t t = idx.size(1);
    AG_CHECK(t <= config.block_size, ValueError, "sequence longer than block_size");
    Tensor pos = arange(0, t, 1, DType::i64);
    Tensor tok_emb = transformer["wte"]->as<nn::Embedding>()->forward(idx);
    if (tok_emb.requires_grad()) tok_emb.register_hook([](const Tensor& g) { return g * 0.5; });
    Tensor pos_emb = transformer["wpe"]->as<nn::Embedding>()->forward(pos);
    Tensor x = transformer["drop"]->as<nn::Dropout>()->forward(tok_emb + pos_emb);
    for (const auto& module : *transformer->at<nn::ModuleListImpl>("h")) {
      Block block(std::dynamic_pointer_cast<BlockImpl>(module));  // called through the holder: hooks run
      if (config.checkpoint)
        x = checkpoint([block](const Tensor& in) { return block(in); }, x);
      else
        x = block(x);
    }
    x = transformer["ln_f"]->as<nn::LayerNorm>()->forward(x);
    Tensor logits, loss;
    if (targets.defined()) {
      logits = lm_head(x);
      loss =
          nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets.view({-1}), {.ignore_index = -1});
    } else {
      logits = lm_head(x.index({Slice(), tensor({-1}), Slice()}));
    }
    return {logits, loss};
  }

  Config config;
  nn::ModuleDict transformer{nullptr};
  nn::Linear lm_head{nullptr};
};
AG_MODULE(GPT);

// Copies the fixture's state dict (PyTorch's names) into the model.
void load_fixture_weights(GPT& model, const test_util::Fixture& f) {
  TensorMap state;
  for (const auto& [key, value] : f)
    if (key.starts_with("param.")) state.insert(key.substr(6), value);
  model->load_state_dict(state);
}

}  // namespace

TEST_CASE("nanoGPT ported line for line matches PyTorch (masks, indexing, hooks, checkpointing)") {
  set_default_dtype(DType::f64);
  const auto f = test_util::load_fixture("nanogpt_port");
  Config config;
  GPT model(config);
  model->to(DType::f64);
  load_fixture_weights(model, f);
  const Tensor idx = f.at("input.tokens"), targets = f.at("input.targets");

  std::map<std::string, Tensor> recorded;
  auto blocks = model->transformer->at<nn::ModuleListImpl>("h");
  auto h0 = (*blocks)[0]->register_forward_hook(
      [&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>& out) { recorded["block0"] = out[0]; });
  auto h1 = (*blocks)[1]->register_full_backward_hook(
      [&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>& gout) {
        recorded["block1_grad_output"] = gout[0];
      });
  auto [logits, loss] = model(idx, targets);
  logits.retain_grad();
  loss.backward();
  h0.remove();
  h1.remove();

  constexpr double tol = 1e-8;
  CHECK(tc::diff(logits, f.at("out.logits"), tol) == "");
  CHECK(tc::diff(loss, f.at("out.loss"), tol) == "");
  CHECK(tc::diff(recorded.at("block0"), f.at("out.block0"), tol) == "");
  CHECK(tc::diff(recorded.at("block1_grad_output"), f.at("out.block1_grad_output"), tol) == "");
  CHECK(tc::diff(logits.grad(), f.at("out.logits_grad"), tol) == "");
  int64_t grads = 0;
  for (const auto& entry : model->named_parameters()) {  // no structured binding: clang 14 cannot capture one
    const std::string& name = entry.first;
    INFO("parameter ", name);
    CHECK(tc::diff(entry.second.grad(), f.at("grad." + name), tol) == "");
    ++grads;
  }
  CHECK(grads == 28);  // wte/lm_head counted once, as PyTorch's named_parameters()
  {
    NoGradGuard no_grad;
    CHECK(tc::diff(model(idx).first, f.at("out.last_logits"), tol) == "");
  }

  // The same step with each block checkpointed.
  model->zero_grad();
  model->config.checkpoint = true;
  auto [logits2, loss2] = model(idx, targets);
  loss2.backward();
  CHECK(tc::diff(loss2, f.at("ckpt.loss"), tol) == "");
  for (const auto& entry : model->named_parameters()) {
    const std::string& name = entry.first;
    INFO("parameter ", name);
    CHECK(tc::diff(entry.second.grad(), f.at("ckpt.grad." + name), tol) == "");
  }
  set_default_dtype(DType::f32);
}
