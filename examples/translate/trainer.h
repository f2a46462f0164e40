#pragma once
// Training and decoding for the translate example: Adam with the Noam schedule (warm-up,
// then inverse square root), label-smoothed cross-entropy over target tokens,
// micro-batches from length buckets accumulated up to a target token count per step,
// clipping; corpus decoding back to text for BLEU.
#include <string>
#include <vector>

#include "batching.h"
#include "model.h"
#include "subword.h"

namespace translate {

struct Config {
  // The defaults train for 900 steps, 25 to 50 minutes on 2 cores (README): a small
  // model taking many steps beat a larger one taking few (d_model 256, 3+3 layers, 8000
  // pieces and 5000 tokens per step made 28 steps in 2 minutes). Bounded by steps, not
  // time, so that the same command gives the same model on any machine.
  int64_t d_model = 256, heads = 4, layers = 2, d_ff = 1024;
  double dropout = 0.1, label_smoothing = 0.1;
  int64_t vocab = 4000;        // subword pieces (joint)
  int64_t max_tokens = 2500;   // padded tokens per micro-batch
  int64_t step_tokens = 3000;  // target tokens accumulated per optimizer step
  int64_t warmup = 300;
  double lr_factor = 1.0, clip = 1.0;
  int64_t steps = 900;  // optimizer steps in all, a resumed run continues up to it (0: no bound)
  double minutes = 0;   // an optional time limit for this process as well (0: none; both 0: no training)
  uint64_t seed = 1;
  int64_t max_len = 200;  // longest subword sequence the positions cover
};

struct Run {
  Config config;
  Translator model;
  optim::Adam opt;
  optim::NoamScheduler sched;
  int64_t epoch = 0, cursor = 0;  // the next micro-batch: batches of `epoch`, from `cursor`
  std::vector<std::vector<int64_t>> batches;
  Run(const Config& c, int64_t vocab);
};

struct StepStats {
  int64_t step;
  double loss;  // per target token, label-smoothed
  double lr, grad_norm;
  int64_t tokens;  // target tokens in this step
};

// One optimizer step over micro-batches totalling at least step_tokens target tokens.
StepStats train_step(Run& r, const std::vector<TokenPair>& train);

// Mean label-free cross-entropy per target token (nats) over `pairs`.
double evaluate_loss(Translator& model, const std::vector<TokenPair>& pairs, int64_t max_tokens);

// Greedy translations of `pairs`' sources, decoded to text, in order.
std::vector<std::string> translate_greedy(Translator& model, const Subword& sw, const std::vector<TokenPair>& pairs,
                                          int64_t max_new, int64_t max_tokens);
// Beam-search translations of `pairs`' sources (nn::beam_search with the KV cache), in order.
std::vector<std::string> translate_beam(Translator& model, const Subword& sw, const std::vector<TokenPair>& pairs,
                                        int64_t max_new, int64_t max_tokens, int64_t beam, double length_penalty);

}  // namespace translate
