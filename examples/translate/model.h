#pragma once
// The translation model, written with the public nn API: one embedding table shared by
// source and target (the subword vocabulary is joint), scaled by sqrt(d_model), with
// sinusoidal positions, nn::Transformer, and an output projection tied to the same table
// (Press & Wolf; as fairseq's share_all_embeddings). Legend: B batch, S source length,
// T target length, E d_model, V vocabulary.
#include <attograd/attograd.h>

#include <cmath>

#include "copy/seq2seq.h"  // sinusoidal_positions, teacher_forcing_masks

namespace translate {

using namespace ag;

struct TranslatorOptions {
  explicit TranslatorOptions(int64_t vocab) : vocab_(vocab) {}
  AG_ARG(int64_t, vocab);
  AG_ARG(int64_t, d_model) = 256;
  AG_ARG(int64_t, heads) = 4;
  AG_ARG(int64_t, layers) = 3;  // encoder and decoder each
  AG_ARG(int64_t, d_ff) = 1024;
  AG_ARG(double, dropout) = 0.1;
  AG_ARG(int64_t, max_len) = 256;
  AG_ARG(bool, tie_output) = true;
};

class TranslatorImpl : public nn::Module {
 public:
  explicit TranslatorImpl(const TranslatorOptions& o) : Module("Translator"), options(o) {
    embed = register_module("embed", nn::Embedding(o.vocab(), o.d_model()));
    // N(0, 1/E) rows: after the sqrt(E) scale they are about as large as the positions.
    nn::init::normal_(embed->weight, 0.0, 1.0 / std::sqrt(static_cast<double>(o.d_model())));
    pe = register_buffer("pe", copy_task::sinusoidal_positions(o.max_len(), o.d_model()));
    drop = register_module("drop", nn::Dropout(o.dropout()));
    transformer = register_module("transformer", nn::Transformer(nn::TransformerOptions(o.d_model(), o.heads())
                                                                     .num_encoder_layers(o.layers())
                                                                     .num_decoder_layers(o.layers())
                                                                     .dim_feedforward(o.d_ff())
                                                                     .dropout(o.dropout())));
    generator = register_module("generator", nn::Linear(nn::LinearOptions(o.d_model(), o.vocab()).bias(false)));
    if (o.tie_output()) generator->weight = embed->weight;  // one tensor under both names
  }

  // ids (B, n) at positions start .. start + n - 1 -> (B, n, E)
  Tensor embed_at(const Tensor& ids, int64_t start = 0) {
    AG_CHECK(start + ids.size(1) <= options.max_len(), ShapeError, "Translator: length ", start + ids.size(1),
             " exceeds max_len ", options.max_len());
    const double scale = std::sqrt(static_cast<double>(options.d_model()));
    return drop(embed(ids) * scale + pe.narrow(0, start, ids.size(1)).to(embed->weight.dtype()));
  }

  // src (B, S), tgt_in (B, T), padding 0 -> logits (B, T, V)
  Tensor forward(const Tensor& src, const Tensor& tgt_in) {
    const nn::TransformerMasks m = copy_task::teacher_forcing_masks(src, tgt_in);
    Tensor x = embed_at(src), y = embed_at(tgt_in);
    return generator(transformer(x, y, m));
  }

  // src (B, S) -> memory (B, S, E)
  // src_key_padding_mask as torch's: true = padding (token 0).
  Tensor encode(const Tensor& src) { return transformer->encode(embed_at(src), {}, eq(src, 0)); }

  // One decoding step with the cache: the newest target tokens (B, 1) at position t ->
  // log-probabilities (B, V) of the next token.
  Tensor step(const Tensor& last, int64_t t, const Tensor& memory, const Tensor& memory_keep_mask, nn::KVCache& cache) {
    Tensor h = transformer->decoder->forward_step(embed_at(last, t), memory, cache, memory_keep_mask);
    return log_softmax(generator(h).select(1, 0), -1);
  }

  // Greedy decoding (the KV cache), up to max_new tokens or eos for every row: (B, n)
  // ids after bos, eos included where produced, 0 after it.
  Tensor greedy(const Tensor& src, int64_t max_new, int64_t bos, int64_t eos) {
    NoGradGuard no_grad;
    const int64_t B = src.size(0);
    Tensor pad = ne(src, 0), memory = encode(src);
    nn::KVCache cache;
    Tensor last = full({B, 1}, Scalar(bos), DType::i64);
    std::vector<int64_t> out(static_cast<std::size_t>(B * max_new), 0);
    std::vector<bool> done(static_cast<std::size_t>(B), false);
    int64_t n = 0;
    for (int64_t t = 0; t < max_new; ++t, ++n) {
      Tensor next = argmax(step(last, t, memory, pad, cache), -1);  // (B)
      auto ids = next.to_vector<int64_t>();
      bool all = true;
      for (int64_t b = 0; b < B; ++b) {
        if (!done[size_t(b)]) out[size_t(b * max_new + t)] = ids[size_t(b)];
        done[size_t(b)] = done[size_t(b)] || ids[size_t(b)] == eos;
        all = all && done[size_t(b)];
      }
      last = next.unsqueeze(1);
      if (all) {
        ++n;
        break;
      }
    }
    return Tensor::from_vector(out, {B, max_new}).narrow(1, 0, std::max<int64_t>(n, 1)).contiguous();
  }

  TranslatorOptions options;
  nn::Embedding embed{nullptr};
  Tensor pe;  // (max_len, E) buffer
  nn::Dropout drop{nullptr};
  nn::Transformer transformer{nullptr};
  nn::Linear generator{nullptr};
};
AG_MODULE(Translator);

}  // namespace translate
