// op_overhead: the cost of one small op outside its math (issue 14), for attograd and,
// built with -DAG_OVERHEAD_TORCH (target op_overhead_torch), for LibTorch C++ from the
// same source so both sides time the same calls the same way.
//
//   op_overhead [--reps R] [--threads T]   (T omitted: 1 and 2)
//
// Per call, 800x64 f32 operands (a, b):
//   add_nograd   c = a + b, nobody requires grad (allocation + kernel + handle)
//   add_grad     c = a + b with a.requires_grad: one graph node built and freed
//   backward100  backward of a chain x = x + b of 100 adds (chain built outside the timing)
//   empty        empty({800, 64}) (the allocator's fast path)
//   zeros        zeros({800, 64}) (allocation + fill)
//   reshape      a.reshape({64, 800}) (a view)
//   transpose    a.transpose(0, 1) (a view)
//   add_small    c = a + b of 8x8: pure overhead, no math to speak of
//   add_1600     c = a + b of 1600x64, the smallest size attograd splits over threads
//   region0      a parallel region of 2 parts that do nothing (at::parallel_for for
//                LibTorch; attograd's internal pool): the hand-off alone
//   region512    the same, each part summing 512 floats (a decoding product's half is
//                a few times that): hand-off plus a little work on both cores
// Each figure is the median over R repetitions of the mean of an inner loop, in
// microseconds. One JSON line per thread setting.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#ifdef AG_OVERHEAD_TORCH
#include <ATen/Parallel.h>
#include <torch/torch.h>
namespace be {
using T = torch::Tensor;
constexpr const char* kSide = "libtorch";
inline T randn(int64_t r, int64_t c) { return torch::randn({r, c}); }
inline T empty(int64_t r, int64_t c) { return torch::empty({r, c}); }
inline T zeros(int64_t r, int64_t c) { return torch::zeros({r, c}); }
inline T ones_like(const T& t) { return torch::ones_like(t); }
inline T add(const T& a, const T& b) { return a + b; }
inline T reshape(const T& a, int64_t r, int64_t c) { return a.reshape({r, c}); }
inline T transpose(const T& a) { return a.transpose(0, 1); }
inline void requires_grad(T& a) { a.requires_grad_(true); }
inline void backward(const T& y, const T& g) { y.backward(g); }
inline void zero_grad(T& a) { a.mutable_grad().reset(); }
inline void set_threads(int n) { torch::set_num_threads(n); }
template <class F>
inline void parallel_for(int64_t n, F f) {
  at::parallel_for(0, n, 1, f);
}
}  // namespace be
#else
#include "attograd/attograd.h"
#include "attograd/detail/parallel.h"
namespace be {
using T = ag::Tensor;
constexpr const char* kSide = "attograd";
inline T randn(int64_t r, int64_t c) { return ag::randn({r, c}); }
inline T empty(int64_t r, int64_t c) { return ag::empty({r, c}); }
inline T zeros(int64_t r, int64_t c) { return ag::zeros({r, c}); }
inline T ones_like(const T& t) { return ag::ones_like(t); }
inline T add(const T& a, const T& b) { return ag::add(a, b); }
inline T reshape(const T& a, int64_t r, int64_t c) { return a.reshape({r, c}); }
inline T transpose(const T& a) { return a.transpose(0, 1); }
inline void requires_grad(T& a) { a.requires_grad_(true); }
inline void backward(const T& y, const T& g) { y.backward(g); }
inline void zero_grad(T& a) { a.zero_grad(); }
inline void set_threads(int n) { ag::set_num_threads(n); }
template <class F>
inline void parallel_for(int64_t n, F f) {
  ag::detail::parallel_for(n, 1, f);
}
}  // namespace be
#endif

namespace {

using Clock = std::chrono::steady_clock;

// Median over `reps` of the mean time of `inner` calls of f, in microseconds. `setup`
// runs before each repetition, outside the timing.
double median_us(
    int reps, int inner, const std::function<void()>& f, const std::function<void()>& setup = [] {}) {
  std::vector<double> t;
  for (int r = 0; r < reps + 2; ++r) {  // the first two warm caches and the allocator
    setup();
    auto t0 = Clock::now();
    for (int i = 0; i < inner; ++i) f();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / inner;
    if (r >= 2) t.push_back(us);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// Keeps results alive past the timed call so the compiler cannot drop it; cleared outside.
std::vector<be::T> g_sink;

std::string measure(int threads, int reps) {
  be::set_threads(threads);
  be::T a = be::randn(800, 64), b = be::randn(800, 64);
  be::T sa = be::randn(8, 8), sb = be::randn(8, 8);
  be::T la = be::randn(1600, 64), lb = be::randn(1600, 64);
  char buf[1024];
  const int inner = 200;
  double add_nograd = median_us(
      reps, inner, [&] { g_sink.front() = be::add(a, b); }, [] { g_sink.assign(1, be::T()); });
  double add_small = median_us(
      reps, inner * 10, [&] { g_sink.front() = be::add(sa, sb); }, [] { g_sink.assign(1, be::T()); });
  double add_1600 = median_us(
      reps, inner, [&] { g_sink.front() = be::add(la, lb); }, [] { g_sink.assign(1, be::T()); });
  double empty = median_us(
      reps, inner * 10, [&] { g_sink.front() = be::empty(800, 64); }, [] { g_sink.assign(1, be::T()); });
  double zeros = median_us(
      reps, inner, [&] { g_sink.front() = be::zeros(800, 64); }, [] { g_sink.assign(1, be::T()); });
  double reshape = median_us(
      reps, inner * 10, [&] { g_sink.front() = be::reshape(a, 64, 800); }, [] { g_sink.assign(1, be::T()); });
  double transpose = median_us(
      reps, inner * 10, [&] { g_sink.front() = be::transpose(a); }, [] { g_sink.assign(1, be::T()); });

  // Two parts; each writes its own cache line of `out` so neither waits on the other.
  std::vector<float> xs(1024, 1.0f);
  alignas(64) float out[32] = {};
  auto region = [&](int64_t work) {
    be::parallel_for(2, [&, work](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        float acc = 0;
        for (int64_t j = 0; j < work; ++j) acc += xs[p * work + j];
        out[p * 16] += acc;
      }
    });
  };
  double region0 = median_us(reps, inner * 10, [&] { region(0); });
  double region512 = median_us(reps, inner * 10, [&] { region(512); });

  be::T ag = be::randn(800, 64);
  be::requires_grad(ag);
  double add_grad = median_us(
      reps, inner, [&] { g_sink.front() = be::add(ag, b); }, [] { g_sink.assign(1, be::T()); });

  // backward through 100 adds: one chain per timed call, built in setup.
  const int chains = 5;
  std::vector<be::T> ys;
  be::T g = be::ones_like(a);
  double backward = median_us(
      reps, chains,
      [&] {
        be::backward(ys.back(), g);
        ys.pop_back();
      },
      [&] {
        be::zero_grad(ag);
        ys.clear();
        for (int c = 0; c < chains; ++c) {
          be::T x = ag;
          for (int i = 0; i < 100; ++i) x = be::add(x, b);
          ys.push_back(x);
        }
      });
  g_sink.clear();
  std::snprintf(buf, sizeof buf,
                "{\"side\": \"%s\", \"threads\": %d, \"reps\": %d, \"add_nograd_us\": %.3f, "
                "\"add_grad_us\": %.3f, \"backward100_us\": %.1f, \"empty_us\": %.3f, \"zeros_us\": %.3f, "
                "\"reshape_us\": %.3f, \"transpose_us\": %.3f, \"add_small_us\": %.3f, \"add_1600_us\": %.3f, "
                "\"region0_us\": %.3f, \"region512_us\": %.3f}",
                be::kSide, threads, reps, add_nograd, add_grad, backward, empty, zeros, reshape, transpose, add_small,
                add_1600, region0, region512);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 51, only = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--threads")
      only = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::cerr << "usage: op_overhead [--reps R] [--threads T]\n";
      return 2;
    }
  }
  for (int t : {1, 2})
    if (!only || t == only) std::cout << measure(t, reps) << std::endl;
  return 0;
}
