#pragma once
// Text generation: temperature, top-k and nucleus (top-p) filtering of the next
// character's distribution, then a draw with multinomial.
// Decoding goes through the model's Decoder (model.h): the prompt is prefilled once,
// then each new token costs one position. A GPT keeps each layer's keys and values in
// a DecoderKVCache and sees at most the prompt's last `context` tokens; when the cache
// reaches `context` positions it restarts from the last context/2 tokens (one prefill
// per context/2 new tokens), since the model has no positions beyond context. A
// recurrent model (max_length() 0) carries its state over the whole prompt and
// everything generated, with no restart. Without the cache (use_cache = false) every
// step recomputes the model over the last `context` tokens (a recurrent model: over the
// whole text from a zero state): the two agree token for token while prompt + new
// tokens fit in a GPT's context (always, for a recurrent model), and differ after (a
// full window vs. a window that refills in halves).
#include <string>
#include <vector>

#include "data.h"
#include "model.h"

namespace lm {

struct SamplingOptions {
  double temperature = 0.8;  // 0: greedy (argmax)
  int64_t top_k = 0;         // keep the k most likely characters (0: all)
  double top_p = 0.95;       // keep the smallest set whose probability reaches top_p (1: all)
};

// logits (V) -> the filtered next-token distribution (V), f64, summing to 1. With
// temperature 0 it is one-hot at the argmax.
Tensor next_token_probs(const Tensor& logits, const SamplingOptions& o);

// Appends `n` sampled tokens to `ids` (the prompt, at least one token); returns the
// new tokens only.
std::vector<int64_t> generate(const CharLM& model, std::vector<int64_t> ids, int64_t n, const SamplingOptions& o,
                              Generator& gen, bool use_cache = true);

}  // namespace lm
