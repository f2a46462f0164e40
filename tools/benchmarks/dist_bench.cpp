// The distributed side of the benchmarks (driven by tools/bench_dist): trains a
// Transformer encoder at d_model 512 on synthetic tokens for a fixed global batch and
// prints ONE JSON line (from rank 0) with every step's time.
//
//   dist_bench --threads 1                                   # 1 process x 1 thread
//   dist_bench --threads 2                                   # 1 process x 2 threads
//   tools/mpirun -np 2 dist_bench --ddp --threads 1          # 2 ranks x 1 thread each
//
// Model (float32, dropout 0): Embedding(vocab, 512), 2 nn::TransformerEncoderLayer
// (8 heads, d_ff 2048, post-norm, ReLU), Linear(512, vocab); cross-entropy on every
// position; Adam. Legend: B global batch, b = B / ranks rows per rank, L sequence, E 512,
// V vocab.
//
// A step: forward, backward, Adam step on this process's rows of the global batch. Every
// rank draws the same global batch (B, L) from one seed; under --ddp each rank takes its
// rows [rank * b, (rank + 1) * b) and nn::DistributedDataParallel averages the gradients,
// so 2 ranks train the same model as 1 process on the whole batch. A barrier before each
// timed step makes the ranks start together; a step's time is the slowest rank's.
//
// Communication share (--ddp): per step and rank, (seconds in Work::wait at the end of
// backward + seconds starting the all-reduces) / step seconds, the max over ranks, then
// the median over steps. It counts what computation did not hide, and it includes
// waiting for the slower rank to reach the same bucket (load imbalance: on a shared
// machine, a rank that is descheduled makes the other one wait).
//
// cpu_cores: user + system CPU seconds of all ranks during the timed steps over their wall
// time, i.e. how many cores the run actually got (MPI's polling while waiting counts).
#include <attograd/attograd.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using namespace ag;
using Clock = std::chrono::steady_clock;

struct Config {
  int threads = 1;
  int64_t global_batch = 16, seq_len = 64, vocab = 1024;
  int64_t d_model = 512, heads = 8, d_ff = 2048, layers = 2;
  int steps = 10, warmup = 2;
  bool ddp = false;
  double bucket_cap_mb = 25;
  uint64_t seed = 0;
};

// ids (b, L) -> logits (b, L, V)
struct BenchNetImpl : nn::Module {
  explicit BenchNetImpl(const Config& c) : nn::Module("BenchNet") {
    embed = register_module("embed", nn::Embedding(c.vocab, c.d_model));
    layers = register_module("layers", nn::ModuleList());
    for (int64_t i = 0; i < c.layers; ++i)
      layers->push_back(nn::TransformerEncoderLayer(
          nn::TransformerLayerOptions(c.d_model, c.heads).dim_feedforward(c.d_ff).dropout(0.0)));
    head = register_module("head", nn::Linear(c.d_model, c.vocab));
  }
  Tensor forward(const Tensor& ids) {
    Tensor h = embed(ids);  // (b, L, E)
    for (std::size_t i = 0; i < layers->size(); ++i) h = layers->at<nn::TransformerEncoderLayerImpl>(i)->forward(h);
    return head(h);  // (b, L, V)
  }
  nn::Embedding embed{nullptr};
  nn::ModuleList layers{nullptr};
  nn::Linear head{nullptr};
};
AG_MODULE(BenchNet);

// User + system seconds of this process so far (all its threads).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Elementwise op over ranks of a per-step vector (identity in a world of one).
std::vector<double> over_ranks(const std::vector<double>& v, dist::ReduceOp op) {
  if (v.empty()) return v;
  Tensor t = Tensor::from_vector(v);
  dist::all_reduce(t, op);
  return t.to_vector<double>();
}

}  // namespace

int main(int argc, char** argv) {
  dist::InitGuard world(&argc, &argv);  // a world of one without mpirun
  Config c;
  CLI::App app{"Times training steps of a d_model 512 Transformer encoder, 1 process or data parallel."};
  app.add_option("--threads", c.threads, "threads per process (OpenBLAS and attograd)")->check(CLI::PositiveNumber);
  app.add_option("--global-batch", c.global_batch, "sequences per step over all ranks")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", c.seq_len, "tokens per sequence")->check(CLI::PositiveNumber);
  app.add_option("--steps", c.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_flag("--ddp", c.ddp, "data parallel over the mpirun ranks (nn::DistributedDataParallel)");
  app.add_option("--bucket-cap-mb", c.bucket_cap_mb, "DDP bucket size in MiB")->check(CLI::PositiveNumber);
  app.add_option("--seed", c.seed, "seed of the model and the data");
  CLI11_PARSE(app, argc, argv);

  const int W = dist::world_size(), R = dist::rank();
  AG_CHECK(c.ddp || W == 1, ValueError, "dist_bench: ", W, " ranks without --ddp would each train alone; pass --ddp");
  AG_CHECK(c.global_batch % W == 0, ValueError, "dist_bench: --global-batch ", c.global_batch, " must divide by the ",
           W, " ranks");
  const int64_t b = c.global_batch / W;
  set_num_threads(c.threads);

  manual_seed(c.seed);
  BenchNet net(c);
  // Parameters and buffers come from rank 0 (the constructor broadcasts them).
  std::unique_ptr<nn::DistributedDataParallel> ddp;
  if (c.ddp)
    ddp = std::make_unique<nn::DistributedDataParallel>(
        net, nn::DistributedDataParallelOptions().bucket_cap_mb(c.bucket_cap_mb));
  optim::Adam opt(net->named_parameters(), optim::AdamOptions(1e-4));

  int64_t params = 0, grad_bytes = 0;
  for (const Tensor& p : net->parameters()) {
    params += p.numel();
    if (p.requires_grad()) grad_bytes += p.numel() * static_cast<int64_t>(itemsize(p.dtype()));
  }

  Generator data_gen(c.seed * 7919 + 1);
  // Copy task on random tokens: every position predicts its own token (the loss falls,
  // so a broken backward shows in "loss").
  auto step = [&]() -> double {
    Tensor ids = randint(0, c.vocab, {c.global_batch, c.seq_len}, &data_gen);  // (B, L), same on every rank
    Tensor mine = W > 1 ? ids.narrow(0, R * b, b) : ids;                       // (b, L)
    Tensor logits = net(mine);                                                 // (b, L, V)
    // The mean over this rank's rows; DDP averages over ranks = the mean over the batch.
    Tensor loss = cross_entropy(logits.reshape({-1, c.vocab}), mine.reshape({-1}));
    opt.zero_grad();
    loss.backward();
    opt.step();
    return loss.item<double>();
  };

  for (int i = 0; i < c.warmup; ++i) step();
  if (ddp) ddp->reset_comm_stats();

  std::vector<double> times, comm, wait, start, losses;
  dist::barrier();
  const double cpu0 = cpu_seconds();
  const auto loop0 = Clock::now();
  for (int i = 0; i < c.steps; ++i) {
    dist::barrier();
    nn::DistributedDataParallel::CommStats before = ddp ? ddp->comm_stats() : nn::DistributedDataParallel::CommStats{};
    auto t0 = Clock::now();
    losses.push_back(step());
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    times.push_back(s);
    if (ddp) {
      const auto& after = ddp->comm_stats();
      wait.push_back(after.wait_seconds - before.wait_seconds);
      start.push_back(after.start_seconds - before.start_seconds);
      comm.push_back((wait.back() + start.back()) / s);
    }
  }
  const double loop_s = std::chrono::duration<double>(Clock::now() - loop0).count();
  const double cpu_s = cpu_seconds() - cpu0;
  // Buckets whose all-reduce started during backward (overlapping it), over the timed steps.
  const int64_t in_hooks = ddp ? ddp->comm_stats().buckets_started_in_hooks : 0;

  // Collectives after timing: every rank calls them in the same order.
  std::vector<double> step_max = over_ranks(times, dist::ReduceOp::MAX);
  std::vector<double> loss_avg = over_ranks(losses, dist::ReduceOp::AVG);
  std::vector<double> share_max = over_ranks(comm, dist::ReduceOp::MAX);
  std::vector<double> wait_max = over_ranks(wait, dist::ReduceOp::MAX);
  std::vector<double> start_max = over_ranks(start, dist::ReduceOp::MAX);
  // CPU time of all ranks over the timed loop's wall time (rank 0's): the cores this
  // run got. Below threads x ranks on a shared machine; MPI's polling counts as busy.
  const double cores = over_ranks({cpu_s}, dist::ReduceOp::SUM)[0] / loop_s;
  if (R != 0) return 0;

  const double med = median(step_max);
  nlohmann::json j = {
      {"bench", "dist_bench"},
      {"ranks", W},
      {"threads", c.threads},
      {"ddp", c.ddp},
      {"global_batch", c.global_batch},
      {"local_batch", b},
      {"seq_len", c.seq_len},
      {"d_model", c.d_model},
      {"heads", c.heads},
      {"d_ff", c.d_ff},
      {"layers", c.layers},
      {"vocab", c.vocab},
      {"params", params},
      {"steps", c.steps},
      {"warmup", c.warmup},
      {"step_times", step_max},
      {"median_step_s", med},
      {"sequences_per_s", static_cast<double>(c.global_batch) / med},
      {"tokens_per_s", static_cast<double>(c.global_batch * c.seq_len) / med},
      {"cpu_cores", cores},
      {"loss_first", loss_avg.front()},
      {"loss_last", loss_avg.back()},
  };
  if (ddp) {
    j["comm_share"] = median(share_max);
    j["comm_share_steps"] = share_max;
    j["comm_wait_s"] = median(wait_max);
    j["comm_start_s"] = median(start_max);
    j["bucket_cap_mb"] = c.bucket_cap_mb;
    j["buckets"] = ddp->bucket_indices().size();
    // Each bucket is all-reduced once per step, so every gradient byte goes once (plus
    // one float flag per parameter: "this rank has a .grad").
    j["allreduce_bytes_per_step"] = W > 1 ? grad_bytes : 0;
    j["buckets_started_in_hooks"] = in_hooks;
  }
  std::cout << j.dump() << std::endl;
  return 0;
}
