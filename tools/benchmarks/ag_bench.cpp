// attograd's side of tools/bench: runs one workload and prints one JSON line with the
// time of every repetition (seconds) and the process's memory.
//
//   ag_bench --workload N --threads T --reps R --warmup W
//
// Workloads (float32; see tools/bench for the PyTorch twin, tools/benchmarks/torch_bench.py):
//   1  copy-task training step, d_model 64, 4 heads, d_ff 256, 2+2 layers, batch 80, length 10
//   2  the same at d_model 512, 8 heads, d_ff 2048
//   3  MultiheadAttention forward + backward, B 16, L = S = 256, E 256, 8 heads (self-attention)
//   4  MultiheadAttention forward + backward, B 1, L = S = 4096, E 256, 4 heads, causal
//   5  matmul 1024 x 1024 x 1024; "extra.sgemm" times a direct cblas_sgemm on the same
//      buffers, interleaved with attograd's matmul repetition by repetition
//   6  greedy decoding of 1000 copy-task sequences (model of 1) with the KV cache;
//      "extra.no_cache" times the same decoding without it, interleaved
//
// Memory: rss_before_kb is the resident set just before the workload builds anything
// (libraries loaded, threads set); peak_rss_kb is getrusage's ru_maxrss at the end;
// peak_delta_kb is their difference (what the workload itself added at its peak).
#include <attograd/attograd.h>
#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../examples/copy/trainer.h"

namespace {

using namespace ag;
using Clock = std::chrono::steady_clock;

struct Args {
  int workload = 0, threads = 1, reps = 5, warmup = 1;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "ag_bench: " << why << "\nusage: ag_bench --workload N (1-6) --threads T --reps R --warmup W\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") usage("runs one benchmark workload and prints one JSON line");
    if (i + 1 >= argc) usage("missing value after " + k);
    int v = 0;
    try {
      v = std::stoi(argv[++i]);
    } catch (const std::exception&) {
      usage("not an integer after " + k + ": " + argv[i]);
    }
    if (k == "--workload") a.workload = v;
    else if (k == "--threads") a.threads = v;
    else if (k == "--reps") a.reps = v;
    else if (k == "--warmup") a.warmup = v;
    else usage("unknown option " + k);
  }
  if (a.workload < 1 || a.workload > 6) usage("--workload must be 1..6");
  if (a.threads < 1 || a.reps < 1 || a.warmup < 0) usage("need --threads >= 1, --reps >= 1, --warmup >= 0");
  return a;
}

long current_rss_kb() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

double seconds(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What a workload measured: times of its main figure and of interleaved companions.
struct Timings {
  std::vector<double> times;
  std::map<std::string, std::vector<double>> extra;
  nlohmann::json info = nlohmann::json::object();
};

// Warm-up, then `reps` timed calls of `main` (and of each companion right after it).
Timings run_reps(const Args& a, const std::function<void()>& main,
                 const std::vector<std::pair<std::string, std::function<void()>>>& companions = {}) {
  for (int i = 0; i < a.warmup; ++i) {
    main();
    for (auto& [name, f] : companions) f();
  }
  Timings t;
  for (int i = 0; i < a.reps; ++i) {
    t.times.push_back(seconds(main));
    for (auto& [name, f] : companions) t.extra[name].push_back(seconds(f));
  }
  return t;
}

// ---- 1, 2: copy-task training step -------------------------------------------
Timings copy_training(const Args& a, int64_t d_model, int64_t heads, int64_t d_ff) {
  copy_task::Config c;  // batch 80, length 10, 2+2 layers, dropout 0.1, vocab 11
  c.d_model = d_model;
  c.heads = heads;
  c.d_ff = d_ff;
  copy_task::Run run(c);
  Timings t = run_reps(a, [&] { copy_task::train_step(run); });
  t.info = {{"d_model", d_model}, {"heads", heads}, {"d_ff", d_ff}, {"batch", c.batch}, {"len", c.len}};
  return t;
}

// ---- 3, 4: MultiheadAttention forward + backward ----------------------------------
// Self-attention on x (B, L, E) that requires grad; backward from a fixed (B, L, E)
// gradient of ones. Gradients are dropped (not zeroed) before each repetition.
Timings mha(const Args& a, int64_t B, int64_t L, int64_t E, int64_t heads, bool causal) {
  manual_seed(0);
  nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(E, heads));
  Tensor x = randn({B, L, E}).requires_grad_();  // (B, L, E)
  Tensor dout = ones({B, L, E});                 // (B, L, E)
  nn::AttentionArgs args;
  args.causal = causal;
  Timings t = run_reps(a, [&] {
    attn->zero_grad();
    x.zero_grad();
    Tensor out = attn(x, x, x, args).first;  // (B, L, E)
    out.backward(dout);
  });
  t.info = {{"B", B}, {"L", L}, {"E", E}, {"heads", heads}, {"causal", causal}};
  return t;
}

// ---- 5: matmul against cblas_sgemm -------------------------------------------------
Timings matmul_vs_sgemm(const Args& a) {
  const int n = 1024;
  manual_seed(0);
  Tensor A = randn({n, n}), Bm = randn({n, n});
  Tensor C = zeros({n, n});
  float *pa = A.data<float>(), *pb = Bm.data<float>(), *pc = C.data<float>();
  Tensor out;
  Timings t = run_reps(a, [&] { out = matmul(A, Bm); },
                       {{"sgemm", [&] {
                           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, pa, n, pb, n,
                                       0.0f, pc, n);
                         }}});
  // The two results must agree, or the comparison means nothing.
  double diff = max(abs(out - C)).item<double>();
  t.info = {{"n", n}, {"max_abs_diff_vs_sgemm", diff}};
  return t;
}

// ---- 6: greedy decoding with and without the KV cache ------------------------------
Timings decoding(const Args& a) {
  copy_task::Config c;  // the model of workload 1 (untrained: decoding cost does not depend on it)
  manual_seed(c.seed);
  copy_task::Seq2Seq model = copy_task::make_model(c);
  model->eval();
  const int64_t n = 1000, steps = c.len - 1;
  Generator gen(12345);
  Tensor src = copy_task::make_batch(c.task, n, c.len, c.min_len, c.vocab, gen).src;  // (n, len)
  Tensor with, without;
  Timings t = run_reps(a, [&] { with = model->greedy_decode(src, steps, 1, true); },
                       {{"no_cache", [&] { without = model->greedy_decode(src, steps, 1, false); }}});
  bool same = with.to_vector<int64_t>() == without.to_vector<int64_t>();
  t.info = {{"sequences", n}, {"steps", steps}, {"tokens", n * steps}, {"cache_equals_no_cache", same}};
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  ag::set_num_threads(a.threads);
  long rss_before = current_rss_kb();
  Timings t;
  switch (a.workload) {
    case 1: t = copy_training(a, 64, 4, 256); break;
    case 2: t = copy_training(a, 512, 8, 2048); break;
    case 3: t = mha(a, 16, 256, 256, 8, false); break;
    case 4: t = mha(a, 1, 4096, 256, 4, true); break;
    case 5: t = matmul_vs_sgemm(a); break;
    case 6: t = decoding(a); break;
  }
  long peak = peak_rss_kb();
  nlohmann::json j = {{"framework", "attograd"}, {"workload", a.workload}, {"threads", a.threads},
                      {"reps", a.reps},          {"warmup", a.warmup},     {"times", t.times},
                      {"extra", t.extra},        {"info", t.info},         {"rss_before_kb", rss_before},
                      {"peak_rss_kb", peak},     {"peak_delta_kb", peak - rss_before}};
  std::cout << j.dump() << std::endl;
}
