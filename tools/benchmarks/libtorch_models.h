#pragma once
// The models of libtorch_bench.cpp, twins of torch_bench.py's (and so of ag_bench's):
// the copy-task Seq2Seq around torch::nn::Transformer and the GPT-2-style decoder of
// workloads 7-9. LibTorch's C++ Transformer and MultiheadAttention (1.13) take
// sequence-first tensors (L, B, E) and add float attention masks (-inf = masked), so
// the models transpose around them and build -inf masks where Python passes bools.
// Legend: B batch, S source length, T target length, E d_model, V vocabulary.
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace ltb {

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
                                  causal_mask(tgt_in.size(1)), torch::Tensor(), src_pad, tgt_in.eq(0), src_pad);  // (T, B, E)
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
      auto next = generator(h[-1]).argmax(-1, true);              // (B, 1)
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
        attn(register_module("attn", torch::nn::MultiheadAttention(
                                         torch::nn::MultiheadAttentionOptions(E, heads).dropout(dropout)))),
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

}  // namespace ltb
