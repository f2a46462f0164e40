// LibTorch's side of tools/bench: the C++ twin of torch_bench.py (same command line,
// same workloads and shapes, one JSON line out), so that attograd is weighed against
// PyTorch without Python's per-op overhead. Built only when CMake finds LibTorch
// (Debian libtorch-dev); see tools/benchmarks/CMakeLists.txt.
//
//   libtorch_bench --workload N --threads T --reps R --warmup W [--L .. --B .. --heads .. --causal 0|1]
//                  [--autocast bf16|none]  (workloads 7, 16: forward and loss under CPU autocast)
//                  [--batch N]             (workloads 16, 17, 18)
//
// Workloads 1-12, 16-19 as ag_bench.cpp's header lists them (11, 12: grouped-query
// attention and the LLaMA-style model written with tensor ops; 16: the Fashion-MNIST
// example's CNN, libtorch_models.h; 18, 19: torch::nn::LSTM and GRU). Threads:
// tools/bench sets OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to T for the process
// (Debian's LibTorch calls OpenBLAS, whose pool is sized when the library loads), and main
// calls torch::set_num_threads(T). Memory: as ag_bench (RSS before the workload, ru_maxrss).

#include <ATen/autocast_mode.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "libtorch_models.h"

// Its name in usage messages (bench_harness.h).
constexpr const char* kProgram = "libtorch_bench";
#include "bench_harness.h"

namespace {

using namespace bench;
using torch::Tensor;

// ---- 1, 2: copy-task training step (Adam 0.9/0.98/1e-9, Noam, clip 1) ------------------
constexpr int64_t kVocab = 11, kLen = 10, kBatch = 80;

// Copy task at full length: src = [1, c...] with c in [2, V), tgt = src.
Tensor copy_src(int64_t B) {
  auto src = torch::randint(2, kVocab, {B, kLen}, torch::kLong);  // (B, S)
  src.select(1, 0).fill_(1);
  return src;
}

Timings copy_training(const Args& a, int64_t d_model, int64_t heads, int64_t d_ff) {
  torch::manual_seed(1);
  ltb::Seq2Seq model(kVocab, d_model, heads, 2, d_ff);
  model->train();
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9));
  int64_t step_no = 0;
  auto step = [&] {
    ++step_no;  // Noam: factor 2, warm-up 200, as optim::NoamScheduler(opt, d_model, 2.0, 200)
    const double s = static_cast<double>(step_no);
    const double lr =
        2.0 / std::sqrt(static_cast<double>(d_model)) * std::min(1 / std::sqrt(s), s * std::pow(200.0, -1.5));
    static_cast<torch::optim::AdamOptions&>(opt.param_groups()[0].options()).lr(lr);
    auto src = copy_src(kBatch);
    auto tgt_in = src.slice(1, 0, kLen - 1), tgt_out = src.slice(1, 1);  // (B, T)
    auto logits = model(src, tgt_in);                                    // (B, T, V)
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), tgt_out.reshape({-1}),
                                                     torch::nn::functional::CrossEntropyFuncOptions().ignore_index(0));
    opt.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    return loss.item<double>();
  };
  Timings t = run_reps(a, step);
  t.info = {{"d_model", d_model}, {"heads", heads}, {"d_ff", d_ff}, {"batch", kBatch}, {"len", kLen}};
  return t;
}

// ---- 3, 4, 10: MultiheadAttention forward + backward -----------------------------------
// Self-attention on x (L, B, E) that requires grad, backward from ones.
Timings mha(const Args& a, int64_t B, int64_t L, int64_t E, int64_t heads, bool causal) {
  torch::manual_seed(0);
  torch::nn::MultiheadAttention attn(torch::nn::MultiheadAttentionOptions(E, heads));
  auto x = torch::randn({L, B, E}).requires_grad_();  // (L, B, E)
  auto dout = torch::ones({L, B, E});
  Tensor mask = causal ? ltb::causal_mask(L) : Tensor();  // (L, S) additive
  Timings t = run_reps(a, [&] {
    attn->zero_grad();
    x.mutable_grad() = Tensor();
    auto out = std::get<0>(attn->forward(x, x, x, Tensor(), false, mask));  // (L, B, E)
    out.backward(dout);
  });
  t.info = {{"B", B}, {"L", L}, {"E", E}, {"heads", heads}, {"causal", causal}};
  return t;
}

// ---- 5: matmul ---------------------------------------------------------------------------
Timings matmul(const Args& a) {
  const int64_t n = 1024;
  torch::manual_seed(0);
  auto A = torch::randn({n, n}), Bm = torch::randn({n, n});
  Tensor out;
  Timings t = run_reps(a, [&] { out = torch::matmul(A, Bm); });
  t.info = {{"n", n}};
  return t;
}

// ---- 6: greedy copy-task decoding without a cache (nn::Transformer has none) --------------
Timings decoding(const Args& a) {
  torch::manual_seed(1);
  ltb::Seq2Seq model(kVocab, 64, 4, 2, 256);
  model->eval();
  const int64_t n = 1000, steps = kLen - 1;
  torch::manual_seed(12345);
  auto src = copy_src(n);
  Timings t = run_reps(a, [&] { model->greedy_decode(src, steps); });
  t.info = {{"sequences", n}, {"steps", steps}, {"tokens", n * steps}};
  return t;
}

// ---- 7: GPT training step (AdamW 3e-3, betas 0.9/0.99, decay 0.1, clip 1) -----------------
// --autocast bf16: the forward and the loss under CPU autocast, as Python's
// `with torch.autocast("cpu", dtype=torch.bfloat16):` does it (enable, nesting count; on
// leaving, drop the cache of the weights' bf16 copies and restore the state found).
class CpuAutocast {
 public:
  explicit CpuAutocast(bool on) : on_(on) {
    if (!on_) return;
    prev_enabled_ = at::autocast::is_cpu_enabled();
    prev_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~CpuAutocast() {
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(prev_enabled_);
    at::autocast::set_autocast_cpu_dtype(prev_dtype_);
  }
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;

 private:
  bool on_, prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kBFloat16;
};

constexpr int64_t kGptVocab = 65, kContext = 64, kGptE = 128, kGptHeads = 4, kGptLayers = 4, kGptBatch = 32;

Timings gpt_training(const Args& a) {
  torch::manual_seed(1);
  ltb::GPT model(kGptVocab, kContext, kGptE, kGptHeads, kGptLayers, 0.1);
  model->train();
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(3e-3).betas({0.9, 0.99}).weight_decay(0.1));
  auto step = [&] {
    auto w = torch::randint(0, kGptVocab, {kGptBatch, kContext + 1}, torch::kLong);  // (B, T + 1) windows
    auto x = w.slice(1, 0, kContext), y = w.slice(1, 1);                             // (B, T)
    Tensor loss;
    {
      CpuAutocast guard(a.autocast == "bf16");
      auto logits = model(x);  // (B, T, V)
      loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kGptVocab}), y.reshape({-1}));
    }
    opt.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
  };
  Timings t = run_reps(a, step);
  t.info = {{"vocab", kGptVocab},   {"context", kContext}, {"d_model", kGptE}, {"heads", kGptHeads},
            {"layers", kGptLayers}, {"batch", kGptBatch},  {"dropout", 0.1},   {"autocast", a.autocast}};
  return t;
}

// ---- 8, 9: GPT greedy decoding, B sequences from one start token to the full context ----
// Without a cache: every new token runs the model over the whole prefix (B, t).
Timings gpt_decoding(const Args& a, int64_t B) {
  torch::manual_seed(1);
  ltb::GPT model(kGptVocab, kContext, kGptE, kGptHeads, kGptLayers, 0.1);
  model->eval();
  const int64_t steps = kContext - 1;
  Timings t = run_reps(a, [&] {
    torch::NoGradGuard no_grad;
    auto ids = torch::ones({B, 1}, torch::kLong);  // (B, 1)
    for (int64_t i = 0; i < steps; ++i) {
      auto logits = model(ids);                                        // (B, t, V)
      auto next = logits.select(1, ids.size(1) - 1).argmax(-1, true);  // (B, 1)
      ids = torch::cat({ids, next}, 1);
    }
  });
  t.info = {{"batch", B}, {"steps", steps}, {"tokens", B * steps}, {"context", kContext}};
  return t;
}

// ---- 11: grouped-query attention forward + backward (ltb::GQA, causal) ------------------
Timings gqa(const Args& a, int64_t B, int64_t L, int64_t E, int64_t heads, int64_t kv_heads) {
  torch::manual_seed(0);
  ltb::GQA attn(E, heads, kv_heads, true);
  auto x = torch::randn({B, L, E}).requires_grad_();  // (B, L, E)
  auto dout = torch::ones({B, L, E});
  auto mask = ltb::causal_mask(L);  // (L, L) additive
  Timings t = run_reps(a, [&] {
    attn->zero_grad();
    x.mutable_grad() = Tensor();
    attn(x, mask).backward(dout);
  });
  t.info = {{"B", B},
            {"L", L},
            {"E", E},
            {"heads", heads},
            {"kv_heads", kv_heads},
            {"causal", true},
            {"parameters", ltb::num_parameters(*attn)}};
  return t;
}

// ---- 12: greedy decoding with the LLaMA-style model, recomputing the prefix ------------------
Timings llama_decoding(const Args& a, int64_t B) {
  torch::manual_seed(1);
  ltb::Llama model(kGptVocab, kContext, kGptE, 8, 2, kGptLayers);
  model->eval();
  const int64_t steps = kContext - 1;
  Timings t = run_reps(a, [&] {
    torch::NoGradGuard no_grad;
    auto ids = torch::ones({B, 1}, torch::kLong);  // (B, 1)
    for (int64_t i = 0; i < steps; ++i) {
      auto logits = model(ids);                                        // (B, t, V)
      auto next = logits.select(1, ids.size(1) - 1).argmax(-1, true);  // (B, 1)
      ids = torch::cat({ids, next}, 1);
    }
  });
  t.info = {{"batch", B},
            {"steps", steps},
            {"tokens", B * steps},
            {"context", kContext},
            {"parameters", ltb::num_parameters(*model)}};
  return t;
}

// ---- 16: CNN training step (the Fashion-MNIST example's classifier, ltb::FashionCNN) ------
// One fixed random batch (B, 1, 28, 28) with random labels; cross entropy; SGD as the
// example's (Nesterov momentum 0.9, weight decay 5e-4 on the >= 2-d weights only) at lr 0.008;
// --autocast bf16: the forward and the loss under CPU autocast.
Timings cnn_training(const Args& a) {
  const int64_t B = a.batch > 0 ? a.batch : 128;
  torch::manual_seed(1);
  ltb::FashionCNN model;
  model->train();
  std::vector<Tensor> decay, no_decay;
  for (const auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = [](double wd) {
    return std::make_unique<torch::optim::SGDOptions>(
        torch::optim::SGDOptions(0.008).momentum(0.9).nesterov(true).weight_decay(wd));
  };
  torch::optim::SGD opt({torch::optim::OptimizerParamGroup(decay, options(5e-4)),
                         torch::optim::OptimizerParamGroup(no_decay, options(0.0))},
                        torch::optim::SGDOptions(0.008));
  torch::manual_seed(7920);
  auto x = torch::randn({B, 1, 28, 28});              // (B, 1, 28, 28)
  auto y = torch::randint(0, 10, {B}, torch::kLong);  // (B,)
  auto step = [&](bool amp) {
    Tensor loss;
    {
      CpuAutocast guard(amp);
      loss = torch::nn::functional::cross_entropy(model(x), y);  // logits (B, 10)
    }
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  // Under --autocast the f32 step is timed too, interleaved ("extra.f32"), as ag_bench does.
  Timings t = a.autocast == "none" ? run_reps(a, [&] { step(false); })
                                   : run_reps(a, [&] { step(true); }, {{"f32", [&] { step(false); }}});
  t.info = {{"batch", B}, {"parameters", ltb::num_parameters(*model)}, {"autocast", a.autocast}};
  return t;
}

// ---- 17: conv2d forward + backward (a ResNet stage's 3x3 layer) --------------------------
// N batch, C = 64 channels in and out, 56 x 56 pixels.
Timings conv_layer(const Args& a) {
  const int64_t N = a.batch > 0 ? a.batch : 8, C = 64, H = 56;
  torch::manual_seed(0);
  auto x = torch::randn({N, C, H, H}).requires_grad_();                                 // (N, C, H, W)
  auto w = (torch::randn({C, C, 3, 3}) * (1.0 / std::sqrt(9.0 * C))).requires_grad_();  // (C, C, 3, 3)
  auto dout = torch::ones({N, C, H, H});                                                // (N, C, H, W)
  Timings t = run_reps(a, [&] {
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    torch::conv2d(x, w, {}, 1, 1).backward(dout);  // (N, C, H, W)
  });
  t.info = {{"batch", N}, {"channels", C}, {"size", H}, {"kernel", 3}, {"padding", 1}};
  return t;
}

// ---- 18: LSTM forward + backward (T 100, B 32, I = H = 512, 2 layers, time-major) ------
// x (T, B, I) not requiring grad; backward from out.sum() to every parameter; the
// gradients dropped (set to none) before each repetition, as ag_bench.
Timings lstm_training(const Args& a) {
  const int64_t T = 100, B = a.batch > 0 ? a.batch : 32, H = 512, L = 2;
  torch::manual_seed(0);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(H, H).num_layers(L));
  auto x = torch::randn({T, B, H});  // (T, B, I)
  Timings t = run_reps(a, [&] {
    lstm->zero_grad(true);
    auto out = std::get<0>(lstm->forward(x));  // (T, B, H)
    out.sum().backward();
  });
  t.info = {{"steps", T},       {"batch", B},  {"input_size", H},
            {"hidden_size", H}, {"layers", L}, {"parameters", ltb::num_parameters(*lstm)}};
  return t;
}

// ---- 19: GRU inference at B 1, one step per call (a streaming decoder) -------------------
// Each call takes x_t (1, 1, I) and the hidden state (L, 1, H) of the previous call; a
// repetition is a new stream of T calls from zeros, under NoGradGuard.
Timings gru_streaming(const Args& a) {
  const int64_t T = 100, H = 512, L = 2;
  torch::manual_seed(0);
  torch::nn::GRU gru(torch::nn::GRUOptions(H, H).num_layers(L));
  gru->eval();
  auto x = torch::randn({T, 1, H});  // (T, 1, I)
  Tensor h;                          // (L, 1, H)
  Timings t = run_reps(a, [&] {
    torch::NoGradGuard no_grad;
    h = torch::zeros({L, 1, H});
    for (int64_t s = 0; s < T; ++s) h = std::get<1>(gru->forward(x.narrow(0, s, 1), h));  // out (1, 1, H) unused
  });
  t.info = {{"steps", T},       {"batch", 1},  {"input_size", H},
            {"hidden_size", H}, {"layers", L}, {"parameters", ltb::num_parameters(*gru)}};
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  // LibTorch 1.13's CPU autocast supports bf16 only (Python's torch.autocast("cpu",
  // dtype=torch.float16) warns and disables itself).
  if (a.autocast == "f16") usage("--autocast f16: LibTorch 1.13's CPU autocast supports bf16 only");
  torch::set_num_threads(a.threads);
  long rss_before = current_rss_kb();
  Timings t;
  switch (a.workload) {
    case 1: t = copy_training(a, 64, 4, 256); break;
    case 2: t = copy_training(a, 512, 8, 2048); break;
    case 3: t = mha(a, 16, 256, 256, 8, false); break;
    case 4: t = mha(a, 1, 4096, 256, 4, true); break;
    case 5: t = matmul(a); break;
    case 6: t = decoding(a); break;
    case 7: t = gpt_training(a); break;
    case 8: t = gpt_decoding(a, 1); break;
    case 9: t = gpt_decoding(a, 32); break;
    case 10: t = mha(a, a.B, a.L, a.E, a.heads, a.causal != 0); break;
    case 11: t = gqa(a, 16, 256, 256, 8, 2); break;
    case 12: t = llama_decoding(a, 32); break;
    case 16: t = cnn_training(a); break;
    case 17: t = conv_layer(a); break;
    case 18: t = lstm_training(a); break;
    case 19: t = gru_streaming(a); break;
  }
  long peak = peak_rss_kb();
  t.info["torch_version"] = TORCH_VERSION;
  nlohmann::json j = {{"framework", "libtorch"},
                      {"workload", a.workload},
                      {"threads", a.threads},
                      {"reps", a.reps},
                      {"warmup", a.warmup},
                      {"times", t.times},
                      {"extra", t.extra},
                      {"info", t.info},
                      {"rss_before_kb", rss_before},
                      {"peak_rss_kb", peak},
                      {"peak_delta_kb", peak - rss_before}};
  std::cout << j.dump() << std::endl;
}
