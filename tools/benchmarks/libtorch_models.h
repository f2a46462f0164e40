#pragma once
// The models of libtorch_bench.cpp, twins of torch_bench.py's (and so of ag_bench's):
// the copy-task Seq2Seq around torch::nn::Transformer and the GPT-2-style decoder of
// workloads 7-9. LibTorch's C++ Transformer and MultiheadAttention (1.13) take
// sequence-first tensors (L, B, E) and add float attention masks (-inf = masked), so
// the models transpose around them and build -inf masks where Python passes bools.
// LibTorch 1.13 has no grouped-query attention, RMSNorm or rotary embedding: workloads
// 11 and 12 write them with tensor ops, as a user would (GQA, LLaMA below). Workload 16's
// CNN is the Fashion-MNIST example's residual network (FashionCNN, at the end).
// Legend: B batch, S source length, T target length, E d_model, V vocabulary,
// h query heads, g key/value heads, d = E / h head dim.
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace ltb {

// sum(p.numel() for p in module.parameters())
inline int64_t num_parameters(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// (L, L) float: 0 on and below the diagonal, -inf above (a query sees no later key).
inline torch::Tensor causal_mask(int64_t L) { return torch::nn::TransformerImpl::generate_square_subsequent_mask(L); }

// ---- the copy-task model (examples/copy/seq2seq.h) ---------------------------------
inline torch::Tensor sinusoidal_positions(int64_t max_len, int64_t E) {
  auto pos = torch::arange(max_len, torch::kFloat64).unsqueeze(1);  // (max_len, 1)
  auto i = torch::arange(0, E, 2, torch::kFloat64);                 // (E / 2)
  auto angle = pos / torch::pow(10000.0, i / static_cast<double>(E));
  auto pe = torch::zeros({max_len, E});  // (max_len, E)
  using torch::indexing::Slice;
  pe.index_put_({Slice(), Slice(0, torch::indexing::None, 2)}, torch::sin(angle).to(torch::kFloat32));
  pe.index_put_({Slice(), Slice(1, torch::indexing::None, 2)}, torch::cos(angle).to(torch::kFloat32));
  return pe;
}

struct Seq2SeqImpl : torch::nn::Module {
  Seq2SeqImpl(int64_t vocab, int64_t d_model, int64_t heads, int64_t layers, int64_t d_ff, double dropout = 0.1,
              int64_t max_len = 64)
      : d_model(d_model),
        src_embed(register_module("src_embed", torch::nn::Embedding(vocab, d_model))),
        tgt_embed(register_module("tgt_embed", torch::nn::Embedding(vocab, d_model))),
        drop(register_module("drop", torch::nn::Dropout(dropout))),
        transformer(register_module("transformer", torch::nn::Transformer(torch::nn::TransformerOptions(d_model, heads)
                                                                              .num_encoder_layers(layers)
                                                                              .num_decoder_layers(layers)
                                                                              .dim_feedforward(d_ff)
                                                                              .dropout(dropout)))),
        generator(register_module("generator", torch::nn::Linear(d_model, vocab))) {
    pe = register_buffer("pe", sinusoidal_positions(max_len, d_model));
    torch::nn::init::normal_(src_embed->weight, 0.0, 1.0 / std::sqrt(static_cast<double>(d_model)));
    torch::nn::init::normal_(tgt_embed->weight, 0.0, 1.0 / std::sqrt(static_cast<double>(d_model)));
  }

  // ids (B, n) -> (n, B, E), sequence-first for the Transformer.
  torch::Tensor embed(torch::nn::Embedding& table, const torch::Tensor& ids) {
    auto x = table(ids) * std::sqrt(static_cast<double>(d_model)) + pe.slice(0, 0, ids.size(1));
    return drop(x).transpose(0, 1);
  }

  // src (B, S), tgt_in (B, T) -> logits (B, T, V)
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt_in) {
    auto src_pad = src.eq(0);  // key padding: true = padding
    auto h = transformer->forward(embed(src_embed, src), embed(tgt_embed, tgt_in), torch::Tensor(),
                                  causal_mask(tgt_in.size(1)), torch::Tensor(), src_pad, tgt_in.eq(0),
                                  src_pad);  // (T, B, E)
    return generator(h.transpose(0, 1));
  }

  // src (B, S) -> (B, steps), recomputing the decoder over the whole prefix each step.
  torch::Tensor greedy_decode(const torch::Tensor& src, int64_t steps, int64_t start = 1) {
    torch::NoGradGuard no_grad;
    auto pad = src.eq(0);
    auto memory = transformer->encoder.forward(embed(src_embed, src), torch::Tensor(), pad);  // (S, B, E)
    auto ys = torch::full({src.size(0), 1}, start, torch::kLong);
    for (int64_t i = 0; i < steps; ++i) {
      auto h = transformer->decoder.forward(embed(tgt_embed, ys), memory, causal_mask(ys.size(1)), torch::Tensor(),
                                            torch::Tensor(), pad);  // (T, B, E)
      auto next = generator(h[-1]).argmax(-1, true);                // (B, 1)
      ys = torch::cat({ys, next}, 1);
    }
    return ys.slice(1, 1);
  }

  int64_t d_model;
  torch::nn::Embedding src_embed, tgt_embed;
  torch::nn::Dropout drop;
  torch::nn::Transformer transformer;
  torch::nn::Linear generator;
  torch::Tensor pe;
};
TORCH_MODULE(Seq2Seq);

// ---- the GPT of workloads 7-9 (examples/lm/gpt.h with its GPT-2 switches) ----------
// Pre-norm blocks x = x + drop(attn(ln_1(x))); x = x + drop(mlp(ln_2(x))), MLP E -> 4E
// -> E with GELU, learned positions, final LayerNorm, untied bias-free head.
struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t E, int64_t heads, double dropout)
      : ln_1(register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({E})))),
        attn(register_module(
            "attn", torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(E, heads).dropout(dropout)))),
        ln_2(register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({E})))),
        fc(register_module("fc", torch::nn::Linear(E, 4 * E))),
        proj(register_module("proj", torch::nn::Linear(4 * E, E))),
        drop(register_module("drop", torch::nn::Dropout(dropout))) {}

  // x (T, B, E), mask (T, T) -> (T, B, E)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    auto a = ln_1(x);
    auto h = x + drop(std::get<0>(attn->forward(a, a, a, torch::Tensor(), false, mask)));
    return h + drop(proj(torch::gelu(fc(ln_2(h)))));
  }

  torch::nn::LayerNorm ln_1;
  torch::nn::MultiheadAttention attn;
  torch::nn::LayerNorm ln_2;
  torch::nn::Linear fc, proj;
  torch::nn::Dropout drop;
};
TORCH_MODULE(Block);

struct GPTImpl : torch::nn::Module {
  GPTImpl(int64_t vocab, int64_t context, int64_t E, int64_t heads, int64_t layers, double dropout)
      : tok_emb(register_module("tok_emb", torch::nn::Embedding(vocab, E))),
        pos_emb(register_module("pos_emb", torch::nn::Embedding(context, E))),
        drop(register_module("drop", torch::nn::Dropout(dropout))),
        ln_f(register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({E})))),
        head(register_module("head", torch::nn::Linear(torch::nn::LinearOptions(E, vocab).bias(false)))) {
    for (int64_t i = 0; i < layers; ++i)
      blocks.push_back(register_module("blocks_" + std::to_string(i), Block(E, heads, dropout)));
  }

  // ids (B, T) -> logits (B, T, V)
  torch::Tensor forward(const torch::Tensor& ids) {
    const int64_t T = ids.size(1);
    auto x = drop(tok_emb(ids) + pos_emb(torch::arange(T, torch::kLong))).transpose(0, 1);  // (T, B, E)
    auto mask = causal_mask(T);
    for (auto& b : blocks) x = b(x, mask);
    return head(ln_f(x.transpose(0, 1)));
  }

  torch::nn::Embedding tok_emb, pos_emb;
  torch::nn::Dropout drop;
  std::vector<Block> blocks;
  torch::nn::LayerNorm ln_f;
  torch::nn::Linear head;
};
TORCH_MODULE(GPT);

// ---- grouped-query attention (workloads 11, 12), as tools/check_lm_model.py writes it ----
// q E -> E, k and v E -> g*d; the g key/value heads repeated to h (query heads
// i*h/g .. (i+1)*h/g - 1 read kv head i), dense scores + an additive causal mask.
// Rotary tables, when given, rotate q and k (B, h|g, T, d) before the scores.
inline torch::Tensor rotate_half(const torch::Tensor& x) {  // [x1, x2] -> [-x2, x1] on the last dim
  auto halves = x.chunk(2, -1);
  return torch::cat({-halves[1], halves[0]}, -1);
}

struct GQAImpl : torch::nn::Module {
  GQAImpl(int64_t E, int64_t heads, int64_t kv_heads, bool bias)
      : h(heads),
        g(kv_heads),
        d(E / heads),
        q_proj(register_module("q_proj", torch::nn::Linear(torch::nn::LinearOptions(E, E).bias(bias)))),
        k_proj(register_module("k_proj", torch::nn::Linear(torch::nn::LinearOptions(E, kv_heads * d).bias(bias)))),
        v_proj(register_module("v_proj", torch::nn::Linear(torch::nn::LinearOptions(E, kv_heads * d).bias(bias)))),
        out_proj(register_module("out_proj", torch::nn::Linear(torch::nn::LinearOptions(E, E).bias(bias)))) {}

  // x (B, T, E), mask (T, T) additive, cos/sin (T, d) or undefined -> (B, T, E)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& cos = {},
                        const torch::Tensor& sin = {}) {
    const int64_t B = x.size(0), T = x.size(1);
    auto split = [&](const torch::Tensor& t, int64_t n) { return t.reshape({B, T, n, d}).transpose(1, 2); };
    auto q = split(q_proj(x), h), k = split(k_proj(x), g), v = split(v_proj(x), g);  // (B, h|g, T, d)
    if (cos.defined()) {
      q = q * cos + rotate_half(q) * sin;
      k = k * cos + rotate_half(k) * sin;
    }
    k = k.repeat_interleave(h / g, 1);  // (B, h, T, d)
    v = v.repeat_interleave(h / g, 1);
    auto scores = torch::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(d))) + mask;
    auto y = torch::matmul(torch::softmax(scores, -1), v);  // (B, h, T, d)
    return out_proj(y.transpose(1, 2).reshape({B, T, h * d}));
  }

  int64_t h, g, d;
  torch::nn::Linear q_proj, k_proj, v_proj, out_proj;
};
TORCH_MODULE(GQA);

// ---- the LLaMA-style GPT of workload 12 (examples/lm/gpt.h: rms, rope, swiglu) ----------
// Pre-norm blocks x = x + attn(rms_1(x)); x = x + w2(silu(w1(h)) * w3(h)), h = rms_2(x);
// RMSNorm eps 1e-5 by hand, rotary tables (HF LLaMA's layout) built once for the
// context, SwiGLU hidden 2/3 of 4E rounded up to 8, no biases, untied head.
struct RMSNormImpl : torch::nn::Module {
  explicit RMSNormImpl(int64_t E) : weight(register_parameter("weight", torch::ones({E}))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-5) * weight; }
  torch::Tensor weight;
};
TORCH_MODULE(RMSNorm);

struct LlamaBlockImpl : torch::nn::Module {
  LlamaBlockImpl(int64_t E, int64_t heads, int64_t kv_heads, int64_t hidden)
      : rms_1(register_module("ln_1", RMSNorm(E))),
        attn(register_module("attn", GQA(E, heads, kv_heads, false))),
        rms_2(register_module("ln_2", RMSNorm(E))),
        w1(register_module("w1", torch::nn::Linear(torch::nn::LinearOptions(E, hidden).bias(false)))),
        w2(register_module("w2", torch::nn::Linear(torch::nn::LinearOptions(hidden, E).bias(false)))),
        w3(register_module("w3", torch::nn::Linear(torch::nn::LinearOptions(E, hidden).bias(false)))) {}

  // x (B, T, E), mask (T, T), cos/sin (T, d) -> (B, T, E)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& cos,
                        const torch::Tensor& sin) {
    auto h = x + attn(rms_1(x), mask, cos, sin);
    auto a = rms_2(h);
    return h + w2(torch::silu(w1(a)) * w3(a));
  }

  RMSNorm rms_1;
  GQA attn;
  RMSNorm rms_2;
  torch::nn::Linear w1, w2, w3;
};
TORCH_MODULE(LlamaBlock);

struct LlamaImpl : torch::nn::Module {
  LlamaImpl(int64_t vocab, int64_t context, int64_t E, int64_t heads, int64_t kv_heads, int64_t layers)
      : tok_emb(register_module("tok_emb", torch::nn::Embedding(vocab, E))),
        ln_f(register_module("ln_f", RMSNorm(E))),
        head(register_module("head", torch::nn::Linear(torch::nn::LinearOptions(E, vocab).bias(false)))) {
    const int64_t hidden = (2 * 4 * E / 3 + 7) / 8 * 8, d = E / heads;
    for (int64_t i = 0; i < layers; ++i)
      blocks.push_back(register_module("blocks_" + std::to_string(i), LlamaBlock(E, heads, kv_heads, hidden)));
    // (context, d): the d/2 frequencies base^(-2i/d) written twice
    auto inv_freq = torch::pow(10000.0, -torch::arange(0, d, 2, torch::kFloat64) / static_cast<double>(d));
    auto angles = torch::arange(context, torch::kFloat64).unsqueeze(1) * inv_freq.unsqueeze(0);  // (context, d/2)
    angles = torch::cat({angles, angles}, -1);
    cos = register_buffer("cos", angles.cos().to(torch::kFloat32));
    sin = register_buffer("sin", angles.sin().to(torch::kFloat32));
  }

  // ids (B, T) -> logits (B, T, V)
  torch::Tensor forward(const torch::Tensor& ids) {
    const int64_t T = ids.size(1);
    auto x = tok_emb(ids);  // (B, T, E)
    auto mask = causal_mask(T);
    auto c = cos.slice(0, 0, T), s = sin.slice(0, 0, T);
    for (auto& b : blocks) x = b(x, mask, c, s);
    return head(ln_f(x));
  }

  torch::nn::Embedding tok_emb;
  std::vector<LlamaBlock> blocks;
  RMSNorm ln_f;
  torch::nn::Linear head;
  torch::Tensor cos, sin;
};
TORCH_MODULE(Llama);

// ---- the Fashion-MNIST example's CNN (workload 16; examples/fashion/model.h) ----------
// Its default, ResNet-9 narrowed (Page's DAWNBench net): stacks of conv 3x3 (no bias) ->
// BatchNorm -> ReLU (-> max pool 2), widths (c0, c1, c2, c3) = (16, 32, 64, 128): prep
// (1 -> c0, 28 x 28), layer1 (c0 -> c1, pool to 14), res1 (two c1 stacks added to their
// input), layer2 (c1 -> c2, pool to 7), layer3 (c2 -> c3, pool to 3), res3 (as res1 on
// c3); global max -> fc Linear(c3, 10). Legend: B batch, C channels, 28 x 28 pixels.
inline void conv_bn_relu(torch::nn::Sequential s, int64_t in, int64_t out) {  // holders share their module
  s->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false)));
  s->push_back(torch::nn::BatchNorm2d(out));
  s->push_back(torch::nn::ReLU());
}

struct FashionCNNImpl : torch::nn::Module {
  explicit FashionCNNImpl(std::vector<int64_t> widths = {32, 64, 128}, int64_t classes = 10) {
    auto stack = [&](const char* name, int64_t in, int64_t out, bool pool) {  // the example's names
      torch::nn::Sequential s = register_module(name, torch::nn::Sequential());
      conv_bn_relu(s, in, out);
      if (pool) s->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
      return s;
    };
    prep = stack("prep", 1, widths[0] / 2, false);
    layer1 = stack("layer1", widths[0] / 2, widths[0], true);
    res1 = stack("res1", widths[0], widths[0], false);
    conv_bn_relu(res1, widths[0], widths[0]);
    layer2 = stack("layer2", widths[0], widths[1], true);
    layer3 = stack("layer3", widths[1], widths[2], true);
    res3 = stack("res3", widths[2], widths[2], false);
    conv_bn_relu(res3, widths[2], widths[2]);
    fc = register_module("fc", torch::nn::Linear(widths[2], classes));
  }

  // x (B, 1, 28, 28) -> logits (B, classes)
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = layer1->forward(prep->forward(x));  // (B, c1, 14, 14)
    h = h + res1->forward(h);
    h = layer3->forward(layer2->forward(h));  // (B, c3, 3, 3)
    h = h + res3->forward(h);
    return fc(h.amax({2, 3}));  // global max pool: (B, c3) -> (B, classes)
  }

  torch::nn::Sequential prep{nullptr}, layer1{nullptr}, res1{nullptr}, layer2{nullptr}, layer3{nullptr}, res3{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(FashionCNN);

}  // namespace ltb
