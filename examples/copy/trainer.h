#pragma once
// Training and evaluation for the copy task, shared by the copy_task binary and the
// end-to-end test. Adam (0.9, 0.98, 1e-9) with the Noam schedule, gradient clipping,
// cross-entropy over non-padding target tokens; held-out sequences come from their own
// random stream, so they never depend on how long training ran.
#include <functional>

#include "data.h"
#include "seq2seq.h"

namespace copy_task {

struct Config {
  Task task = Task::copy;
  int64_t vocab = 11, len = 10, min_len = 10;
  int64_t d_model = 64, heads = 4, layers = 2, d_ff = 256;
  double dropout = 0.1;
  int64_t batch = 80, steps = 1000, warmup = 200;
  double lr_factor = 1.0, clip = 1.0, label_smoothing = 0.0;
  uint64_t seed = 1;
  int64_t eval = 1000;
};

inline Seq2Seq make_model(const Config& c) {
  return Seq2Seq(Seq2SeqOptions(c.vocab, c.d_model).heads(c.heads).layers(c.layers).d_ff(c.d_ff)
                     .dropout(c.dropout).max_len(std::max<int64_t>(64, c.len)));
}

// Everything a run owns, so that a checkpoint can capture and restore all of it.
struct Run {
  Config config;
  Seq2Seq model;
  optim::Adam opt;
  optim::NoamScheduler sched;
  Generator data_gen;
  Run(const Config& c, Seq2Seq m)
      : config(c), model(std::move(m)),
        opt(model->named_parameters(), optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9)),
        sched(opt, c.d_model, c.lr_factor, c.warmup), data_gen(c.seed * 7919 + 1) {}
  explicit Run(const Config& c) : Run(c, [&] { manual_seed(c.seed); return make_model(c); }()) {}
};

struct StepStats {
  int64_t step;
  double loss, lr, grad_norm;
  int64_t tokens;
};

// One optimizer step on a fresh batch; returns the mean token loss.
inline StepStats train_step(Run& r) {
  const Config& c = r.config;
  r.model->train();
  Batch b = make_batch(c.task, c.batch, c.len, c.min_len, c.vocab, r.data_gen);
  Tensor logits = r.model(b.src, b.tgt_in);  // (B, T, V)
  CrossEntropyOptions ce;
  ce.ignore_index = 0;
  ce.label_smoothing = c.label_smoothing;
  Tensor loss = cross_entropy(logits.reshape({-1, c.vocab}), b.tgt_out.reshape({-1}), ce);
  double lr = r.opt.lr();
  r.opt.zero_grad();
  loss.backward();
  double norm = optim::clip_grad_norm_(r.model->parameters(), c.clip);
  r.opt.step();
  r.sched.step();
  return {r.sched.last_step(), loss.item<double>(), lr, norm, b.tokens};
}

struct EvalResult {
  double exact = 0, token = 0;  // fractions of sequences / of content tokens
  Batch batch;                  // the held-out set
  Tensor decoded;               // (N, len - 1)
};

// Greedy decoding (with the KV cache) of `n` held-out sequences from seed `seed`.
inline EvalResult evaluate(Seq2Seq& model, const Config& c, int64_t n, uint64_t seed = 12345) {
  model->eval();
  Generator gen(seed);
  EvalResult r;
  r.batch = make_batch(c.task, n, c.len, c.min_len, c.vocab, gen);
  r.decoded = model->greedy_decode(r.batch.src, c.len - 1, 1);
  auto want = r.batch.tgt_out.to_vector<int64_t>(), got = r.decoded.to_vector<int64_t>();
  int64_t T = c.len - 1, seq_ok = 0, tok_ok = 0, toks = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool all = true;
    for (int64_t t = 0; t < T; ++t) {
      int64_t w = want[i * T + t];
      if (w == 0) break;  // padding: the rest of the row is padding too
      ++toks;
      bool ok = got[i * T + t] == w;
      tok_ok += ok;
      all = all && ok;
    }
    seq_ok += all;
  }
  r.exact = static_cast<double>(seq_ok) / static_cast<double>(n);
  r.token = toks ? static_cast<double>(tok_ok) / static_cast<double>(toks) : 1.0;
  return r;
}

}  // namespace copy_task
