#pragma once
// What ag_bench and libtorch_bench share: the command line, the timing loop and the
// memory readings, so both sides of tools/bench measure the same way. Each program
// defines `kProgram` (its name, for usage messages) before including this header, in
// every file that includes it (its functions are inline: ag_bench's workloads span
// ag_bench.cpp and ag_bench_rnn.cpp).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

struct Args {
  int workload = 0, threads = 1, reps = 5, warmup = 1;
  int L = 256, B = 16, E = 256, heads = 8, causal = 0;  // workload 10 (one sweep point)
  int checkpoint = 0;  // workload 7, ag_bench only: every GPT block under ag::checkpoint
  int kb = 0;          // workload 15, ag_bench only: read a working set of this many KB per thread
  int batch = 0;       // workloads 16, 17, 18: the batch (0: the workload's own, 128, 8 and 32)
  // workloads 7, 16: forward and loss under CPU autocast to this dtype (bf16, f16), or none
  std::string autocast = "none";
  // workloads 8, 9, 12, 13, 14 (ag_bench only): the GPT's weights, and so its KV cache, in
  // this dtype
  std::string dtype = "f32";
  // workloads 13, 14 (ag_bench only): the Linear layers quantized by ag::quant::quantize_
  std::string quantize = "none";
};

[[noreturn]] inline void usage(const std::string& why) {
  std::cerr << kProgram << ": " << why << "\nusage: " << kProgram
            << " --workload N (1-19; 13-15: ag_bench only) --threads T --reps R --warmup W"
               " [--L L --B B --E E --heads H --causal 0|1] [--checkpoint 0|1] [--batch N]"
               " [--autocast bf16|f16|none] [--dtype f32|bf16|f16] [--quantize none|int8|int4|dynamic-int8]"
               " [--kb KB]\n";
  std::exit(2);
}

inline Args parse(int argc, char** argv) {
  Args a;
  std::map<std::string, int*> opts = {{"--workload", &a.workload},
                                      {"--threads", &a.threads},
                                      {"--reps", &a.reps},
                                      {"--warmup", &a.warmup},
                                      {"--L", &a.L},
                                      {"--B", &a.B},
                                      {"--E", &a.E},
                                      {"--heads", &a.heads},
                                      {"--causal", &a.causal},
                                      {"--checkpoint", &a.checkpoint},
                                      {"--kb", &a.kb},
                                      {"--batch", &a.batch}};
  std::map<std::string, std::string*> words = {
      {"--autocast", &a.autocast}, {"--dtype", &a.dtype}, {"--quantize", &a.quantize}};
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") usage("runs one benchmark workload and prints one JSON line");
    if (!opts.count(k) && !words.count(k)) usage("unknown option " + k);
    if (i + 1 >= argc) usage("missing value after " + k);
    if (words.count(k)) {
      *words[k] = argv[++i];
      continue;
    }
    try {
      *opts[k] = std::stoi(argv[++i]);
    } catch (const std::exception&) { usage("not an integer after " + k + ": " + argv[i]); }
  }
  if (a.workload < 1 || a.workload > 19) usage("--workload must be 1..19");
  if (a.workload > 12 && a.workload < 16 && std::string(kProgram) != "ag_bench")
    usage("workloads 13-15 (the 150M LLaMA decode, memory bandwidth) are ag_bench's only");
  if (a.kb != 0 && a.workload != 15) usage("--kb is for workload 15 (read bandwidth by working set)");
  if (a.kb < 0 || a.kb > (1 << 22)) usage("--kb takes 1..4194304 (KB per thread)");
  if (a.checkpoint != 0 && (a.workload != 7 || std::string(kProgram) != "ag_bench"))
    usage("--checkpoint (activation checkpointing) is ag_bench's, for workload 7 only");
  if (a.autocast != "none" && a.autocast != "bf16" && a.autocast != "f16")
    usage("--autocast takes bf16, f16 or none, got " + a.autocast);
  if (a.autocast != "none" && a.workload != 7 && a.workload != 16)
    usage("--autocast is for workloads 7 and 16 (the GPT and CNN training steps)");
  if (a.batch != 0 && (a.workload < 16 || a.workload > 18)) usage("--batch is for workloads 16, 17 and 18");
  if (a.batch < 0) usage("--batch takes a positive batch (0: the workload's own)");
  if (a.dtype != "f32" && a.dtype != "bf16" && a.dtype != "f16")
    usage("--dtype takes f32, bf16 or f16, got " + a.dtype);
  if (a.dtype != "f32" &&
      ((a.workload != 8 && a.workload != 9 && a.workload != 12 && a.workload != 13 && a.workload != 14) ||
       std::string(kProgram) != "ag_bench"))
    usage("--dtype (the GPT's weights and KV cache) is ag_bench's, for workloads 8, 9, 12, 13 and 14 only");
  if (a.quantize != "none" && a.quantize != "int8" && a.quantize != "int4" && a.quantize != "dynamic-int8")
    usage("--quantize takes none, int8, int4 or dynamic-int8, got " + a.quantize);
  if (a.quantize != "none" && a.workload != 13 && a.workload != 14)
    usage("--quantize (quantized Linear layers) is ag_bench's, for workloads 13 and 14 only");
  if (a.threads < 1 || a.reps < 1 || a.warmup < 0) usage("need --threads >= 1, --reps >= 1, --warmup >= 0");
  if (a.L < 1 || a.B < 1 || a.heads < 1 || a.E % a.heads != 0) usage("need L, B >= 1 and heads dividing E");
  return a;
}

inline long current_rss_kb() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

inline long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

inline double seconds(const std::function<void()>& f) {
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
inline Timings run_reps(const Args& a, const std::function<void()>& main,
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

}  // namespace bench
