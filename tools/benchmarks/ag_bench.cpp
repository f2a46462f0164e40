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
//      buffers with OpenBLAS's own threads, after attograd's repetitions (not interleaved:
//      OpenBLAS's spinning threads would slow attograd's next one), and "extra.dnnl_sgemm"
//      a direct dnnl_sgemm with oneDNN's own (OpenMP) threads; info.config is
//      show_config(), whose "f32 products" line names the engine attograd's ran on
//   6  greedy decoding of 1000 copy-task sequences (model of 1) with the KV cache;
//      "extra.no_cache" times the same decoding without it, interleaved
//   7  decoder-only GPT training step (examples/lm's GPT-2 layout: LayerNorm, learned
//      positions, GELU MLP 4x, untied bias-free head): vocab 65, context 64, width 128,
//      4 blocks, 4 heads, batch 32, dropout 0.1; AdamW (3e-3, betas 0.9/0.99, decay 0.1
//      on every parameter), clip 1, cross entropy on random windows; --checkpoint 1 runs
//      every block under ag::checkpoint (examples/lm's --checkpoint-activations);
//      --autocast bf16|f16 runs the forward and the loss under ag::autocast (PyTorch's CPU
//      autocast lists; f32 master weights, backward outside the guard, no loss scaling)
//   8  greedy decoding with that GPT (eval, untrained) at batch 1: one start token, then
//      63 new tokens to the full context, with the KV cache; "extra.no_cache" runs the
//      model over the whole prefix for every new token (what LibTorch and PyTorch do)
//   9  the same at batch 32
//  10  one point of tools/bench --sweep: workload 3's MHA forward + backward at the
//      --L, --B, --E, --heads, --causal given
//  11  GroupedQueryAttention forward + backward, B 16, L 256, E 256, 8 query heads sharing
//      2 key/value heads (q E -> E, k and v E -> E/4), causal self-attention
//  12  greedy decoding at batch 32 with a LLaMA-style GPT (examples/lm/gpt.h: RMSNorm,
//      rotary positions, GQA 8 heads / 2 kv heads, SwiGLU, no biases): vocab 65, context
//      64, width 128, 4 blocks; one start token, 63 new tokens, KV cache, "extra.no_cache"
//      recomputing the prefix as in workloads 8, 9
//  13  greedy decoding at batch 1 with a model whose weights do not fit in cache (issue 26):
//      LLaMA-style, width 1024, 16 heads of 64, 12 blocks, SwiGLU, no biases, vocab 65,
//      context 64: 151M parameters, random; 63 new tokens with the KV cache (no
//      recomputation companion: it would take minutes); info.weight_bytes
//  14  the same at batch 32
//  15  memory bandwidth: memcpy of 256 MB f32 split over --threads threads;
//      info.gb_per_s (read + written) per repetition, the roofline of workload 13;
//      with --kb N: each thread reads its own N-KB array over and over instead (no
//      writes), info.gb_per_s the bytes read: a working set that fits a core's L2 against
//      one that does not (--kb 1536 against 3072, workload 8's 3.1 MB of f32 weights)
//  13, 14 with --quantize int8|int4|dynamic-int8: every Linear quantized by
//      ag::quant::quantize_ (weight-only int8, int4 in groups of 32, or dynamic int8: int8
//      weights and activations quantized per row at run time; nn/QUANTIZATION.md)
//  8, 9, 12, 13, 14 with --dtype bf16|f16: the model's weights converted by
//      Module::to(dtype), so the activations and the KV cache are in that dtype too
//  16  CNN training step: the Fashion-MNIST example's default classifier
//      (examples/fashion/model.h: ResNet-9 narrowed, conv 3x3 + BatchNorm + ReLU stacks
//      of 16, 32 (max pool to 14), 2 x 32 added, 64 (to 7), 128 (to 3), 2 x 128 added,
//      global max pool, Linear(128, 10)) in train mode on one fixed random batch (128, 1, 28, 28) with
//      random labels; cross entropy, backward, and the example's SGD (Nesterov momentum
//      0.9, weight decay 5e-4 on the conv and Linear weights only) at a constant lr 0.008
//      (its OneCycleLR's first); --batch N; --autocast bf16|f16 as workload 7, with the
//      f32 step timed too, interleaved, as "extra.f32"
//  17  conv2d forward + backward of a ResNet stage layer: input (8, 64, 56, 56) requiring
//      grad, weight (64, 64, 3, 3), padding 1, no bias; backward from ones to the input and
//      the weight; --batch N
//  18  nn::LSTM forward + backward (ag_bench_rnn.cpp): input 512, hidden 512, 2 layers, on
//      a random time-major input (100, 32, 512); loss = output.sum(), backward to every
//      parameter, gradients dropped before each repetition; --batch N
//  19  nn::GRU inference at batch 1 (ag_bench_rnn.cpp): input 512, hidden 512, 2 layers,
//      eval, NoGradGuard; a repetition is 100 calls of one time step each (1, 1, 512),
//      the hidden state carried from call to call (a streaming decoder), from zeros
//
// Memory: rss_before_kb is the resident set just before the workload builds anything
// (libraries loaded, threads set); peak_rss_kb is getrusage's ru_maxrss at the end;
// peak_delta_kb is their difference (what the workload itself added at its peak).
// max_allocated_delta_kb is ag::max_memory_allocated() over the workload: the peak of
// live tensor storages alone, without the buffer cache's idle buffers or malloc's slack.
#include <attograd/attograd.h>
#include <attograd/autocast.h>
#include <cblas.h>
#include <dlfcn.h>
#if ATTOGRAD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#if defined(__x86_64__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../examples/copy/trainer.h"

// Its name in usage messages (bench_harness.h).
constexpr const char* kProgram = "ag_bench";
#include "bench_harness.h"
#include "ag_bench_rnn.h"
#include "../../examples/fashion/model.h"
#include "../../examples/lm/gpt.h"

namespace {

using namespace ag;
using namespace bench;

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

// ---- 11: GroupedQueryAttention forward + backward ---------------------------------------
// As workload 3 with h query heads sharing g key/value heads, causal.
Timings gqa(const Args& a, int64_t B, int64_t L, int64_t E, int64_t heads, int64_t kv_heads) {
  manual_seed(0);
  nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(E, heads).num_kv_heads(kv_heads));
  Tensor x = randn({B, L, E}).requires_grad_();  // (B, L, E)
  Tensor dout = ones({B, L, E});                 // (B, L, E)
  nn::AttentionArgs args;
  args.causal = true;
  Timings t = run_reps(a, [&] {
    attn->zero_grad();
    x.zero_grad();
    Tensor out = attn(x, x, x, args).first;  // (B, L, E)
    out.backward(dout);
  });
  t.info = {{"B", B},
            {"L", L},
            {"E", E},
            {"heads", heads},
            {"kv_heads", kv_heads},
            {"causal", true},
            {"parameters", attn->num_parameters()}};
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
  // attograd keeps OpenBLAS on one thread and splits products over its own pool
  // (ops/kernels/gemm.h); the direct call gets OpenBLAS's own threads, --threads of them.
  // Not interleaved: after a threaded call OpenBLAS's threads spin (sched_yield) for a
  // while and would take the cores from attograd's next repetition (8 against 16 ms a
  // matmul at 2 threads, from one process to the next), so attograd's repetitions run
  // first, then OpenBLAS's.
  Timings t = run_reps(a, [&] { out = matmul(A, Bm); });
  openblas_set_num_threads(a.threads);
  t.extra["sgemm"] = run_reps(a, [&] {
                       cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, pa, n, pb, n, 0.0f, pc, n);
                     }).times;
  openblas_set_num_threads(1);
  // The two results must agree, or the comparison means nothing.
  double diff = max(abs(out - C)).item<double>();
  t.info = {{"n", n}, {"max_abs_diff_vs_sgemm", diff}, {"config", show_config()}};
#if ATTOGRAD_HAVE_DNNL
  // oneDNN's sgemm on its own OpenMP threads, --threads of them (attograd keeps it on one
  // thread per call and splits over its pool, as for OpenBLAS).
  auto omp_set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (omp_set) omp_set(a.threads);
  Tensor D = zeros({n, n});
  float* pd = D.data<float>();
  t.extra["dnnl_sgemm"] = run_reps(a, [&] { dnnl_sgemm('N', 'N', n, n, n, 1.0f, pa, n, pb, n, 0.0f, pd, n); }).times;
  if (omp_set) omp_set(1);
  t.info["max_abs_diff_vs_dnnl_sgemm"] = max(abs(out - D)).item<double>();
#endif
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

// "bf16", "f16", "f32" (bench_harness.h has checked the word)
DType dtype_named(const std::string& s) { return s == "bf16" ? DType::bf16 : s == "f16" ? DType::f16 : DType::f32; }

// ---- 7: GPT training step ---------------------------------------------------------
constexpr int64_t kGptVocab = 65, kContext = 64, kGptBatch = 32;

lm::GPT make_gpt(bool checkpoint_activations = false) {
  manual_seed(1);
  return lm::GPT(
      lm::GPTOptions(kGptVocab).context(kContext).d_model(128).heads(4).layers(4).dropout(0.1).checkpoint_activations(
          checkpoint_activations));
}

Timings gpt_training(const Args& a) {
  lm::GPT model = make_gpt(a.checkpoint != 0);
  model->train();
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-3).betas({0.9, 0.99}).weight_decay(0.1));
  Generator gen(7920);
  Timings t = run_reps(a, [&] {
    Tensor w = randint(0, kGptVocab, {kGptBatch, kContext + 1}, &gen);  // (B, T + 1) windows
    Tensor x = w.narrow(1, 0, kContext), y = w.narrow(1, 1, kContext);  // (B, T)
    Tensor loss;
    {
      std::optional<ag::autocast> guard;  // PyTorch's recipe: forward and loss inside, backward outside
      if (a.autocast != "none") guard.emplace(dtype_named(a.autocast));
      Tensor logits = model(x);  // (B, T, V): bf16 / f16 under autocast (the head is a linear)
      loss = cross_entropy(logits.reshape({-1, kGptVocab}), y.reshape({-1}));  // f32 (autocast's f32 list)
    }
    opt.zero_grad();
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
  });
  t.info = {
      {"vocab", kGptVocab},    {"context", kContext}, {"d_model", 128}, {"heads", 4},
      {"layers", 4},           {"batch", kGptBatch},  {"dropout", 0.1}, {"checkpoint_activations", a.checkpoint != 0},
      {"autocast", a.autocast}};
  return t;
}

// Workload 12's LLaMA-style model: 8 query heads (d 16) sharing 2 key/value heads.
lm::GPT make_llama() {
  manual_seed(1);
  return lm::GPT(lm::GPTOptions(kGptVocab)
                     .context(kContext)
                     .d_model(128)
                     .heads(8)
                     .kv_heads(2)
                     .layers(4)
                     .bias(false)
                     .norm(lm::Norm::rms)
                     .pos(lm::Position::rope)
                     .mlp(lm::MlpKind::swiglu));
}

// Workloads 13 and 14 (issue 26): a model big enough that reading its weights dominates
// a decode step: LLaMA-style, E 1024, 16 heads of 64, 12 layers, SwiGLU 2736, no biases,
// 151M parameters (604 MB in f32), random weights.
lm::GPT make_llama_150m() {
  manual_seed(1);
  return lm::GPT(lm::GPTOptions(kGptVocab)
                     .context(kContext)
                     .d_model(1024)
                     .heads(16)
                     .layers(12)
                     .bias(false)
                     .norm(lm::Norm::rms)
                     .pos(lm::Position::rope)
                     .mlp(lm::MlpKind::swiglu));
}

// ---- 15: memory bandwidth (the roofline of a weight-bound decode) ----------------------
// A stream-like copy of 256 MB f32 (far past the caches) on `--threads` threads, each a
// contiguous slice; GB/s counts the bytes read plus written.
Timings read_bandwidth(const Args& a);

// fn(w) on `threads` std::threads of their own (w = 0 .. threads - 1), joined.
template <class F>
void on_threads(int threads, F fn) {
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) pool.emplace_back(fn, w);
  for (auto& th : pool) th.join();
}

// GB/s of each repetition that moved `bytes`.
std::vector<double> gb_per_s(const Timings& t, double bytes) {
  std::vector<double> gbs;
  for (double s : t.times) gbs.push_back(bytes / s / 1e9);
  return gbs;
}

Timings bandwidth(const Args& a) {
  if (a.kb > 0) return read_bandwidth(a);
  const int64_t n = int64_t{64} << 20;
  std::vector<float> src(static_cast<std::size_t>(n), 1.0f), dst(static_cast<std::size_t>(n), 0.0f);
  Timings t = run_reps(a, [&] {
    const int64_t per = n / a.threads;
    on_threads(a.threads, [&](int w) {
      const int64_t lo = w * per, hi = w + 1 == a.threads ? n : lo + per;
      std::memcpy(dst.data() + lo, src.data() + lo, static_cast<std::size_t>(hi - lo) * sizeof(float));
    });
  });
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  t.info = {{"bytes_moved", bytes}, {"gb_per_s", gb_per_s(t, bytes)}};
  return t;
}

// --kb: per thread, passes over its own array until 64 MB are read (at least one pass);
// an XOR of 32-byte words (AVX2 where the CPU has it, else 16-byte SSE2, every x86-64)
// keeps the loads and nothing else: 16-byte loads cap a core near 2 x 16 bytes a cycle,
// under its L2's rate.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) uint64_t xor_words_avx2(const uint64_t* p, int64_t n) {  // n a multiple of 16
  const auto* v = reinterpret_cast<const __m256i*>(p);                                   // 4 words each
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = 0; i < n / 4; i += 4) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(v + i));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(v + i + 1));
    a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(v + i + 2));
    a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(v + i + 3));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)));
  return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
}
#endif

uint64_t xor_words(const uint64_t* p, int64_t n) {  // n a multiple of 16
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return xor_words_avx2(p, n);
#endif
#if defined(__SSE2__)
  auto at = [p](int64_t i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)); };
  __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = 0; i < n; i += 8) {
    a0 = _mm_xor_si128(a0, at(i));
    a1 = _mm_xor_si128(a1, at(i + 2));
    a2 = _mm_xor_si128(a2, at(i + 4));
    a3 = _mm_xor_si128(a3, at(i + 6));
  }
  alignas(16) uint64_t lanes[2];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), _mm_xor_si128(_mm_xor_si128(a0, a1), _mm_xor_si128(a2, a3)));
  return lanes[0] ^ lanes[1];
#else
  uint64_t acc = 0;
  for (int64_t i = 0; i < n; ++i) acc ^= p[i];
  return acc;
#endif
}

Timings read_bandwidth(const Args& a) {
  const int64_t words = std::max<int64_t>(16, int64_t{a.kb} * 1024 / 8 / 16 * 16);
  const int64_t passes = std::max<int64_t>(1, (int64_t{64} << 20) / (words * 8));
  std::vector<std::vector<uint64_t>> arrays(static_cast<std::size_t>(a.threads),
                                            std::vector<uint64_t>(static_cast<std::size_t>(words), 1));
  std::atomic<uint64_t> sink{0};
  Timings t = run_reps(a, [&] {
    on_threads(a.threads, [&](int w) {
      uint64_t x = 0;
      for (int64_t p = 0; p < passes; ++p) x ^= xor_words(arrays[static_cast<std::size_t>(w)].data(), words);
      sink ^= x;
    });
  });
  const double bytes = static_cast<double>(a.threads) * static_cast<double>(passes * words * 8);
  t.info = {{"kb_per_thread", words * 8 / 1024},
            {"bytes_read", bytes},
            {"gb_per_s", gb_per_s(t, bytes)},
            {"sink", sink.load() & 1}};
  return t;
}

// ---- 8, 9, 12, 13, 14: GPT greedy decoding with and without the KV cache -----------------
// B sequences from one start token to the full context: (context - 1) new tokens each.
// recompute: also time decoding without the cache (not for the 150M model: minutes).
Timings gpt_decoding(const Args& a, lm::GPT model, int64_t B, bool recompute_too = true) {
  model->eval();
  model->to(dtype_named(a.dtype));  // --dtype: weights, activations and KV cache
  int64_t quantized = 0;            // --quantize (workloads 13, 14): the Linears' weights
  if (a.quantize != "none") quantized = lm::quantize_for_inference(model, a.quantize);
  const int64_t steps = kContext - 1;
  auto next_of = [](const Tensor& logits) {  // (B, n, V) -> (B, 1): argmax of the last row
    return argmax(logits.select(1, logits.size(1) - 1), -1, true);
  };
  Tensor with, without;
  int64_t kv_bytes = 0, kv_allocated = 0;  // K and V per token and sequence; all buffers, all layers
  auto cached = [&] {
    NoGradGuard no_grad;
    nn::DecoderKVCache cache = model->make_cache();
    Tensor ids = ones({B, 1}, DType::i64);  // (B, 1) start tokens
    std::vector<Tensor> out{ids};
    Tensor next = next_of(model->forward_step(ids, cache));
    for (int64_t i = 0; i < steps; ++i) {
      out.push_back(next);
      if (i + 1 < steps) next = next_of(model->forward_step(next, cache));
    }
    with = cat(out, 1);  // (B, context)
    kv_bytes = cache.bytes_per_token();
    kv_allocated = 0;
    for (const auto& l : cache.layers) kv_allocated += l.bytes_allocated();
  };
  auto recompute = [&] {
    NoGradGuard no_grad;
    Tensor ids = ones({B, 1}, DType::i64);
    for (int64_t i = 0; i < steps; ++i) ids = cat({ids, next_of(model(ids))}, 1);
    without = ids;
  };
  Timings t = recompute_too ? run_reps(a, cached, {{"no_cache", recompute}}) : run_reps(a, cached);
  // Greedy tokens of the two paths. In f32 they agree; in bf16 / f16 the two paths round
  // differently and an untrained model's near-tied logits may then pick other tokens, so
  // the fraction of equal positions is reported instead of the f32 check.
  t.info = {{"batch", B},
            {"steps", steps},
            {"tokens", B * steps},
            {"context", kContext},
            {"parameters", model->num_parameters()},
            {"dtype", a.dtype},
            {"quantize", a.quantize},
            {"linears_quantized", quantized},
            {"cache_bytes_per_token", kv_bytes},
            {"cache_bytes_allocated", kv_allocated}};
  if (recompute_too) {
    const auto tw = with.to_vector<int64_t>(), tn = without.to_vector<int64_t>();
    int64_t equal = 0;
    for (std::size_t i = 0; i < tw.size() && i < tn.size(); ++i) equal += tw[i] == tn[i];
    t.info["cache_tokens_equal_no_cache"] = static_cast<double>(equal) / static_cast<double>(tw.size());
    if (a.dtype == "f32") t.info["cache_equals_no_cache"] = tw == tn;
  }
  t.info["weight_bytes"] = [&] {
    int64_t b = 0;
    for (const auto& [name, p] : model->state_dict())  // quantized codes and scales are buffers
      b += p.numel() * static_cast<int64_t>(itemsize(p.dtype()));
    return b;
  }();
  return t;
}

// ---- 16: CNN training step (the Fashion-MNIST example's classifier) -----------------
// B batch, 28 x 28 pixels, 10 classes.
Timings cnn_training(const Args& a) {
  const int64_t B = a.batch > 0 ? a.batch : 128;
  manual_seed(1);
  fashion::Classifier model(fashion::ModelOptions(fashion::ModelKind::cnn));
  model->train();
  // The example's two groups (fashion::param_groups): conv and Linear weights decay,
  // BatchNorm parameters and biases do not.
  auto options = [](double wd) { return optim::SGDOptions(0.008).momentum(0.9).nesterov(true).weight_decay(wd); };
  optim::ParamGroup<optim::SGDOptions> decay{{}, options(5e-4)}, no_decay{{}, options(0.0)};
  for (auto& [name, p] : model->named_parameters()) (p.dim() >= 2 ? decay : no_decay).params.emplace_back(name, p);
  optim::SGD opt({decay, no_decay});
  Generator gen(7920);
  Tensor x = randn({B, 1, 28, 28}, DType::f32, &gen);  // (B, 1, 28, 28)
  Tensor y = randint(0, 10, {B}, &gen);                // (B,)
  auto step = [&](bool amp) {
    Tensor loss;
    {
      std::optional<ag::autocast> guard;  // forward and loss inside, backward outside
      if (amp) guard.emplace(dtype_named(a.autocast));
      loss = cross_entropy(model(x), y);  // logits (B, 10)
    }
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  // Under --autocast the f32 step is timed too, interleaved in this process ("extra.f32"),
  // so that the bf16 / f32 ratio sees the same machine.
  Timings t = a.autocast == "none" ? run_reps(a, [&] { step(false); })
                                   : run_reps(a, [&] { step(true); }, {{"f32", [&] { step(false); }}});
  t.info = {{"batch", B},
            {"widths", model->options.widths()},
            {"arch", fashion::arch_name(model->options.arch())},
            {"parameters", model->num_parameters()},
            {"autocast", a.autocast}};
  return t;
}

// ---- 17: conv2d forward + backward (a ResNet stage's 3x3 layer) --------------------------
// N batch, C = 64 channels in and out, 56 x 56 pixels.
Timings conv_layer(const Args& a) {
  const int64_t N = a.batch > 0 ? a.batch : 8, C = 64, H = 56;
  manual_seed(0);
  Tensor x = randn({N, C, H, H}).requires_grad_();                                 // (N, C, H, W)
  Tensor w = (randn({C, C, 3, 3}) * (1.0 / std::sqrt(9.0 * C))).requires_grad_();  // (C, C, 3, 3)
  Tensor dout = ones({N, C, H, H});                                                // (N, C, H, W)
  Timings t = run_reps(a, [&] {
    x.zero_grad();
    w.zero_grad();
    conv2d(x, w, {}, {1}, 1).backward(dout);  // (N, C, H, W)
  });
  t.info = {{"batch", N}, {"channels", C}, {"size", H}, {"kernel", 3}, {"padding", 1}};
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  ag::set_num_threads(a.threads);
  long rss_before = current_rss_kb();
  const std::size_t allocated_before = ag::memory_allocated();
  ag::reset_peak_memory_stats();
  Timings t;
  switch (a.workload) {
    case 1: t = copy_training(a, 64, 4, 256); break;
    case 2: t = copy_training(a, 512, 8, 2048); break;
    case 3: t = mha(a, 16, 256, 256, 8, false); break;
    case 4: t = mha(a, 1, 4096, 256, 4, true); break;
    case 5: t = matmul_vs_sgemm(a); break;
    case 6: t = decoding(a); break;
    case 7: t = gpt_training(a); break;
    case 8: t = gpt_decoding(a, make_gpt(), 1); break;
    case 9: t = gpt_decoding(a, make_gpt(), 32); break;
    case 10: t = mha(a, a.B, a.L, a.E, a.heads, a.causal != 0); break;
    case 11: t = gqa(a, 16, 256, 256, 8, 2); break;
    case 12: t = gpt_decoding(a, make_llama(), 32); break;
    case 13: t = gpt_decoding(a, make_llama_150m(), 1, false); break;
    case 14: t = gpt_decoding(a, make_llama_150m(), 32, false); break;
    case 15: t = bandwidth(a); break;
    case 16: t = cnn_training(a); break;
    case 17: t = conv_layer(a); break;
    case 18: t = lstm_training(a); break;
    case 19: t = gru_streaming(a); break;
  }
  long peak = peak_rss_kb();
  nlohmann::json j = {{"framework", "attograd"},
                      {"workload", a.workload},
                      {"threads", a.threads},
                      {"reps", a.reps},
                      {"warmup", a.warmup},
                      {"times", t.times},
                      {"extra", t.extra},
                      {"info", t.info},
                      {"rss_before_kb", rss_before},
                      {"peak_rss_kb", peak},
                      {"peak_delta_kb", peak - rss_before},
                      {"max_allocated_delta_kb", long((ag::max_memory_allocated() - allocated_before) / 1024)}};
  std::cout << j.dump() << std::endl;
}
