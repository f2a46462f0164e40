#pragma once
// Helpers of test_tensor_parallel.cpp: the single-process module against its
// tensor-parallel form on the same inputs, with errors taken over all ranks.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist_gradcheck.h"
#include "test_util.h"

namespace tp_test {

using namespace ag;

inline constexpr double kTol = 1e-12;
using Run = std::function<Tensor(const std::vector<Tensor>&)>;

// The same on every rank: the worst value over ranks (NaN counts as infinite).
inline double worst(double e) {
  return dist_test::all_reduce_scalar(std::isnan(e) ? INFINITY : e, dist::ReduceOp::MAX);
}

inline double diff(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined() ? 0.0 : INFINITY;
  return test_util::max_abs_diff(a, b);
}

inline Tensor randn_seeded(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, DType::f64, &g);
}

// A bool mask (B, h, L, S), true where allowed, key 0 always allowed (no empty row).
inline Tensor random_head_mask(int64_t B, int64_t h, int64_t L, int64_t S, uint64_t seed) {
  Generator g(seed);
  std::vector<bool> v;
  for (int64_t i = 0; i < B * h * L * S; ++i) v.push_back(i % S == 0 || g.uniform() > 0.3);
  return Tensor::from_vector(v, {B, h, L, S});
}

// Moves every parameter off its initial value (zero biases, unit norm weights would hide
// a bias added twice or a norm weight left out), alike on every rank.
inline void randomize(nn::Module& m, uint64_t seed) {
  NoGradGuard no_grad;
  Generator g(seed);
  for (Tensor& p : m.parameters()) p.add_(randn(p.shape(), p.dtype(), &g), 0.2);
}

struct Errors {
  double output = 0, inputs = 0, params = 0;
};

// Runs the single-process module and the tensor-parallel one on copies of `inputs`
// (replicated: the same on every rank), backpropagates <w, y> with the same w into both
// and returns the worst errors over ranks: output, input gradients, and the parameter
// gradients (the tensor-parallel ones gathered by nn::full_grads, matched by name).
inline Errors compare(const std::string& what, nn::Module& single, nn::Module& tp, const std::vector<Tensor>& inputs,
                      const Run& run_single, const Run& run_tp) {
  single.zero_grad();
  tp.zero_grad();
  auto leaves = [&] {
    std::vector<Tensor> v;
    for (const Tensor& x : inputs) v.push_back(x.detach().clone().requires_grad_());
    return v;
  };
  std::vector<Tensor> xs = leaves(), xt = leaves();
  Tensor ys = run_single(xs), yt = run_tp(xt);
  const Tensor w = randn_seeded(ys.shape(), 77);
  (ys * w).sum().backward();
  (yt * w).sum().backward();
  Errors e;
  e.output = diff(ys, yt);
  for (std::size_t i = 0; i < xs.size(); ++i) e.inputs = std::max(e.inputs, diff(xs[i].grad(), xt[i].grad()));
  const TensorMap gathered = nn::full_grads(tp);
  std::size_t n = 0;
  for (auto& [name, p] : single.named_parameters()) {
    if (!p.grad().defined()) continue;
    ++n;
    e.params = std::max(e.params, gathered.contains(name) ? diff(p.grad(), gathered.at(name)) : INFINITY);
  }
  if (n == 0 || n != gathered.size()) e.params = INFINITY;  // every gradient, and only those
  e = {worst(e.output), worst(e.inputs), worst(e.params)};
  if (dist::rank() == 0)
    std::printf("[tp np%d] %-58s output %.1e  input grads %.1e  param grads %.1e (%zu)\n", dist::world_size(),
                what.c_str(), e.output, e.inputs, e.params, n);
  return e;
}

inline void check(const Errors& e) {
  CHECK(e.output < kTol);
  CHECK(e.inputs < kTol);
  CHECK(e.params < kTol);
}

// Two named children, to compare a chain of layers with its tensor-parallel form.
struct Pair : nn::Module {
  Pair(const std::string& a_name, std::shared_ptr<nn::Module> a, const std::string& b_name,
       std::shared_ptr<nn::Module> b)
      : Module("Pair") {
    register_module(a_name, std::move(a));
    register_module(b_name, std::move(b));
  }
};

inline Tensor flat_pair(const std::pair<Tensor, Tensor>& yw) { return cat({yw.first.flatten(), yw.second.flatten()}); }

}  // namespace tp_test
