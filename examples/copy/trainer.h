#pragma once
// Training and evaluation for the copy task, shared by the copy_task binary and the
// end-to-end test. Adam (0.9, 0.98, 1e-9) with the Noam schedule, gradient clipping,
// cross-entropy over non-padding target tokens; held-out sequences come from their own
// random stream, so they never depend on how long training ran. `precision` bf16 / f16
// trains and decodes under ag::autocast (common/precision.h).
#include <functional>
#include <memory>

#include "../common/precision.h"
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
  bool tensor_parallel = false;  // --tp: every Transformer layer split across the ranks
  DType precision = DType::f32;  // f32, or bf16 / f16 autocast with f32 master weights
};

inline Seq2Seq make_model(const Config& c) {
  return Seq2Seq(Seq2SeqOptions(c.vocab, c.d_model)
                     .heads(c.heads)
                     .layers(c.layers)
                     .d_ff(c.d_ff)
                     .dropout(c.dropout)
                     .max_len(std::max<int64_t>(64, c.len))
                     .tensor_parallel(c.tensor_parallel));
}

// Everything a run owns, so that a checkpoint can capture and restore all of it.
// With `ddp`, gradients are averaged across the ranks of ag::dist (mpirun): every rank
// draws the same global batch and trains on its own rows of it.
struct Run {
  Config config;
  Seq2Seq model;
  std::unique_ptr<nn::DistributedDataParallel> ddp;
  optim::Adam opt;
  optim::NoamScheduler sched;
  amp::GradScaler scaler;  // enabled for f16 only
  Generator data_gen;
  Run(const Config& c, Seq2Seq m, bool data_parallel = false)
      : config(c),
        model(std::move(m)),
        ddp(data_parallel ? std::make_unique<nn::DistributedDataParallel>(model.ptr()) : nullptr),
        opt(model->named_parameters(), optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9)),
        sched(opt, c.d_model, c.lr_factor, c.warmup),
        scaler(examples::scaler_for(c.precision)),
        data_gen(c.seed * 7919 + 1) {
    // A skipped f16 step must be skipped on every rank: DDP's gradients are the same
    // everywhere, tensor-parallel shards are not (it would take PyTorch's
    // ShardedGradScaler, which all-reduces the inf flag).
    AG_CHECK(!(c.tensor_parallel && c.precision == DType::f16), ValueError,
             "copy_task: --precision f16 with --tp needs a GradScaler whose skip agrees across the ranks; use bf16");
    // Dropout masks differ between ranks (their rows differ too); the model itself came
    // from rank 0 through the DDP broadcast.
    if (ddp) manual_seed(c.seed * 1000003 + static_cast<uint64_t>(dist::rank()));
    // Replicated dropout draws alike on every rank, dropout inside a rank's heads and
    // feed-forward slice from its own stream.
    if (c.tensor_parallel) nn::tensor_parallel_manual_seed(c.seed);
  }
  explicit Run(const Config& c, bool data_parallel = false)
      : Run(
            c,
            [&] {
              manual_seed(c.seed);
              return make_model(c);
            }(),
            data_parallel) {}
};

// This rank's rows of a global batch of B: [rank * B / W, (rank + 1) * B / W).
inline Batch shard(const Batch& b, int64_t rank, int64_t world) {
  const int64_t B = b.src.size(0);
  AG_CHECK(B % world == 0, ValueError, "copy_task: --batch ", B, " must divide by the ", world, " ranks");
  const int64_t n = B / world;
  Batch s{b.src.narrow(0, rank * n, n), b.tgt_in.narrow(0, rank * n, n), b.tgt_out.narrow(0, rank * n, n), 0};
  s.tokens = ne(s.tgt_out, 0).sum().item<int64_t>();
  return s;
}

struct StepStats {
  int64_t step;
  double loss, lr, grad_norm;
  int64_t tokens;
  bool skipped = false;  // f16: the GradScaler found an inf/NaN gradient
};

// One optimizer step on a fresh batch; returns the mean token loss.
inline StepStats train_step(Run& r) {
  const Config& c = r.config;
  r.model->train();
  Batch b = make_batch(c.task, c.batch, c.len, c.min_len, c.vocab, r.data_gen);  // the global batch
  const int64_t world = r.ddp ? dist::world_size() : 1;
  Batch mine = world > 1 ? shard(b, dist::rank(), world) : b;
  Tensor loss;
  {
    const autocast amp = examples::autocast_for(c.precision);  // the forward and the loss only
    Tensor logits = r.model(mine.src, mine.tgt_in);            // (B / world, T, V)
    CrossEntropyOptions ce;
    ce.ignore_index = 0;
    ce.label_smoothing = c.label_smoothing;
    // The mean over the global batch's tokens. A rank's share is its sum over the global
    // token count, times world because DDP averages the ranks' gradients: exact also
    // when padding gives the ranks different token counts.
    ce.reduction = Reduction::sum;
    loss = cross_entropy(logits.reshape({-1, c.vocab}), mine.tgt_out.reshape({-1}), ce) *
           (static_cast<double>(world) / static_cast<double>(std::max<int64_t>(b.tokens, 1)));
  }
  double lr = r.opt.lr();
  r.opt.zero_grad();
  r.scaler.scale(loss).backward();
  r.scaler.unscale_(r.opt);  // clip the true gradients
  // DDP left the same averaged .grad on every rank, so the norm agrees too; with
  // tensor parallelism the norm sums the ranks' shards.
  double norm = c.tensor_parallel ? nn::clip_grad_norm_tensor_parallel_(*r.model, c.clip)
                                  : optim::clip_grad_norm_(r.model->parameters(), c.clip);
  const bool stepped = r.scaler.step(r.opt);
  r.scaler.update();
  r.sched.step();
  Tensor reported = loss.detach().clone();
  if (world > 1) dist::all_reduce(reported, dist::ReduceOp::AVG);
  return {r.sched.last_step(), reported.item<double>(), lr, norm, b.tokens, !stepped};
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
  {
    const autocast amp = examples::autocast_for(c.precision);  // decoding in the training precision
    r.decoded = model->greedy_decode(r.batch.src, c.len - 1, 1);
  }
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
