#pragma once
// The copy-task model, written with the public nn API only: token embeddings scaled by
// sqrt(d_model), sinusoidal positions, dropout, nn::Transformer, and a generator Linear
// to the vocabulary (as in "The Annotated Transformer").
// Legend: B batch, S source length, T target length, E d_model, V vocabulary.
#include <attograd/attograd.h>

#include <cmath>

namespace copy_task {

using namespace ag;

struct Seq2SeqOptions {
  Seq2SeqOptions(int64_t vocab, int64_t d_model) : vocab_(vocab), d_model_(d_model) {}
  AG_ARG(int64_t, vocab);
  AG_ARG(int64_t, d_model);
  AG_ARG(int64_t, heads) = 4;
  AG_ARG(int64_t, layers) = 2;  // encoder and decoder each
  AG_ARG(int64_t, d_ff) = 256;
  AG_ARG(double, dropout) = 0.1;
  AG_ARG(int64_t, max_len) = 64;
  // Split each Transformer layer across the mpirun ranks (nn::TensorParallelTransformer):
  // the same model and state-dict names, each rank holding its heads and its slice of
  // the feed-forward; embeddings, norms and the generator are replicated.
  AG_ARG(bool, tensor_parallel) = false;
};

// pe[pos, 2i] = sin(pos / 10000^(2i/E)), pe[pos, 2i+1] = cos(...): (max_len, E)
inline Tensor sinusoidal_positions(int64_t max_len, int64_t E) {
  std::vector<float> pe(static_cast<std::size_t>(max_len * E));
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i = 0; i < E; i += 2) {
      double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / static_cast<double>(E));
      pe[pos * E + i] = static_cast<float>(std::sin(angle));
      if (i + 1 < E) pe[pos * E + i + 1] = static_cast<float>(std::cos(angle));
    }
  return Tensor::from_vector(pe, {max_len, E});
}

// Teacher forcing: key padding masks (PyTorch's: true where the token is 0 = padding) for
// source, memory and target, and the causal target mask.
inline nn::TransformerMasks teacher_forcing_masks(const Tensor& src, const Tensor& tgt_in) {
  nn::TransformerMasks m;
  m.src_key_padding_mask = eq(src, 0);
  m.memory_key_padding_mask = m.src_key_padding_mask;
  m.tgt_key_padding_mask = eq(tgt_in, 0);
  m.tgt_causal = true;
  return m;
}

class Seq2SeqImpl : public nn::Module {
 public:
  explicit Seq2SeqImpl(const Seq2SeqOptions& o) : Module("Seq2Seq"), options(o) {
    src_embed = register_module("src_embed", nn::Embedding(o.vocab(), o.d_model()));
    tgt_embed = register_module("tgt_embed", nn::Embedding(o.vocab(), o.d_model()));
    pe = register_buffer("pe", sinusoidal_positions(o.max_len(), o.d_model()));
    drop = register_module("drop", nn::Dropout(o.dropout()));
    nn::Transformer full(nn::TransformerOptions(o.d_model(), o.heads())
                             .num_encoder_layers(o.layers())
                             .num_decoder_layers(o.layers())
                             .dim_feedforward(o.d_ff())
                             .dropout(o.dropout()));
    // Built whole on every rank from the same seed, then sliced: the same initial model
    // as one process.
    if (o.tensor_parallel())
      tp_transformer = register_module("transformer", nn::TensorParallelTransformer(*full));
    else
      transformer = register_module("transformer", full);
    generator = register_module("generator", nn::Linear(o.d_model(), o.vocab()));
    // N(0, 1/E): after the sqrt(E) scaling, token embeddings are about as large as the
    // positional encoding, so position-based attention (what copying needs) is learnable
    // early. With N(0, 1) rows the positions drown and training sits on a long plateau.
    double std = 1.0 / std::sqrt(static_cast<double>(o.d_model()));
    nn::init::normal_(src_embed->weight, 0.0, std);
    nn::init::normal_(tgt_embed->weight, 0.0, std);
  }

  // ids (B, n) starting at position `start` -> (B, n, E)
  Tensor embed(nn::Embedding& table, const Tensor& ids, int64_t start = 0) {
    AG_CHECK(start + ids.size(1) <= options.max_len(), ShapeError, "Seq2Seq: length ", start + ids.size(1),
             " exceeds max_len ", options.max_len());
    double scale = std::sqrt(static_cast<double>(options.d_model()));
    return drop(table(ids) * scale + pe.narrow(0, start, ids.size(1)).to(table->weight.dtype()));
  }

  // src (B, S), tgt_in (B, T) token ids, padding 0 -> logits (B, T, V)
  Tensor forward(const Tensor& src, const Tensor& tgt_in) {
    const nn::TransformerMasks m = teacher_forcing_masks(src, tgt_in);
    if (tp_transformer.is_empty()) return generator(transformer(embed(src_embed, src), embed(tgt_embed, tgt_in), m));
    return generator(tp_transformer(embed(src_embed, src), embed(tgt_embed, tgt_in), m));
  }

  Tensor encode(const Tensor& src) {
    // src_key_padding_mask, as torch's: true = padding (token 0)
    if (tp_transformer.is_empty()) return transformer->encode(embed(src_embed, src), {}, eq(src, 0));
    return tp_transformer->encode(embed(src_embed, src), {}, eq(src, 0));
  }

  // Embedded targets (B, T, E) against memory (B, S, E) -> decoder output (B, T, E).
  Tensor decode(const Tensor& tgt, const Tensor& memory, const nn::TransformerMasks& m) {
    return tp_transformer.is_empty() ? transformer->decode(tgt, memory, m) : tp_transformer->decode(tgt, memory, m);
  }

  // Greedy decoding of `steps` tokens after the start token: (B, steps). With the cache
  // each step runs one new position through the decoder; without it, the whole prefix.
  Tensor greedy_decode(const Tensor& src, int64_t steps, int64_t start_token, bool use_cache = true) {
    NoGradGuard no_grad;
    const int64_t B = src.size(0);
    Tensor src_keep = ne(src, 0);  // true = real token: forward_step's memory_keep_mask
    Tensor memory = encode(src);
    Tensor ys = full({B, 1}, start_token, DType::i64);
    nn::KVCache cache;
    for (int64_t t = 0; t < steps; ++t) {
      Tensor h;                                      // (B, 1, E): decoder output at the newest position
      if (use_cache && tp_transformer.is_empty()) {  // tensor-parallel layers have no cached step
        h = transformer->decoder->forward_step(embed(tgt_embed, ys.narrow(1, t, 1), t), memory, cache, src_keep);
      } else {
        nn::TransformerMasks m;
        m.tgt_causal = true;
        m.memory_keep_mask = src_keep;
        h = decode(embed(tgt_embed, ys), memory, m).narrow(1, t, 1);
      }
      Tensor next = argmax(generator(h), -1);  // (B, 1)
      ys = cat({ys, next}, 1);
    }
    return ys.narrow(1, 1, steps);
  }

  void pretty_print(std::ostream& os) const override {
    os << "Seq2Seq(vocab=" << options.vocab() << ", d_model=" << options.d_model() << ')';
  }

  Seq2SeqOptions options;
  nn::Embedding src_embed{nullptr}, tgt_embed{nullptr};
  nn::Dropout drop{nullptr};
  nn::Transformer transformer{nullptr};                   // one of these two
  nn::TensorParallelTransformer tp_transformer{nullptr};  // is set
  nn::Linear generator{nullptr};
  Tensor pe;  // (max_len, E) buffer
};
AG_MODULE(Seq2Seq);

}  // namespace copy_task
