#pragma once
// gradcheck across the ranks of ag::dist: central differences of one global scalar
// against the gradients each rank's backward produces.
//
// Every input and the output is either
//   replicated: the same tensor on every rank (one value of the global function), or
//   sharded:    each rank's own tensor (the global value is the tuple over ranks).
// The scalar checked is  sum over ranks of <w_r, y_r>  for a sharded output (w_r drawn
// per rank), or  <w, y>  counted once for a replicated output (w drawn alike on every
// rank). Each rank's backward starts from its own <w_r, y_r> (or <w, y>): Megatron's
// convention (the loss is computed alike on every rank) for replicated outputs, and
// torch.distributed.nn's (the loss is the sum over ranks) for sharded ones.
// Numerically, a replicated input is perturbed on every rank together (same element);
// a sharded one on one rank at a time, the others holding theirs. A replicated input's
// gradient must then be the full derivative on every rank; a sharded input's, on each
// rank, the derivative with respect to that rank's shard.
//
// Every rank must call it together with the same fn, placements and shapes of the
// replicated tensors; the result (ok or not) is the same on every rank, so a CHECK on it
// never makes a later collective conditional.
#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace dist_test {

enum class Placement { replicated, sharded };

inline const char* to_string(Placement p) { return p == Placement::replicated ? "replicated" : "sharded"; }

// `value` reduced over ranks with op (every rank gets it).
inline double all_reduce_scalar(double value, ag::dist::ReduceOp op = ag::dist::ReduceOp::SUM) {
  ag::Tensor t = ag::Tensor::from_vector(std::vector<double>{value});
  ag::dist::all_reduce(t, op);
  return t.item<double>();
}

namespace detail {

// max |t - rank 0's t|, the same on every rank (t's shape must agree).
inline double spread_across_ranks(const ag::Tensor& t) {
  ag::Tensor root = t.detach().clone();
  ag::dist::broadcast(root, 0);
  return all_reduce_scalar(test_util::max_abs_diff(t, root), ag::dist::ReduceOp::MAX);
}

}  // namespace detail

using Fn = std::function<ag::Tensor(const std::vector<ag::Tensor>&)>;

// fn: f64 inputs -> one f64 output. Inputs that require grad are checked (their
// placement in `placements`); `output` is the output's placement; `seed` draws w.
inline ag::GradcheckResult gradcheck_across_ranks(const Fn& fn, const std::vector<ag::Tensor>& inputs,
                                                  const std::vector<Placement>& placements, Placement output,
                                                  const ag::GradcheckOptions& opt = {}, uint64_t seed = 1234) {
  using namespace ag;
  const int p = dist::world_size(), rank = dist::rank();
  std::ostringstream failure;  // this rank's first failure
  auto fail = [&](const std::string& why) {
    if (failure.tellp() == 0) failure << opt.name << " (rank " << rank << " of " << p << "): " << why;
  };
  if (placements.size() != inputs.size()) throw ValueError("gradcheck_across_ranks: one placement per input");
  // Fresh leaves that own their storage: perturbed in place below.
  std::vector<Tensor> xs, checked;
  std::vector<std::size_t> checked_index;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != DType::f64) throw ValueError("gradcheck_across_ranks: inputs must be f64");
    xs.push_back(inputs[i].detach().clone().requires_grad_(inputs[i].requires_grad()));
    if (inputs[i].requires_grad()) checked.push_back(xs.back()), checked_index.push_back(i);
    if (placements[i] == Placement::replicated && detail::spread_across_ranks(xs[i]) != 0.0)
      fail("input " + std::to_string(i) + " is declared replicated but differs across ranks");
  }

  // Analytic: each rank's backward of its own <w_r, y_r> (or <w, y>).
  Tensor y = fn(xs);
  Generator gen(output == Placement::replicated ? seed : seed + 1 + static_cast<uint64_t>(rank));
  const Tensor w = randn(y.shape(), DType::f64, &gen);
  if (output == Placement::replicated && detail::spread_across_ranks(y) != 0.0)
    fail("the output is declared replicated but differs across ranks");
  // An output with no graph (a backward that was not differentiable) has zero gradients.
  std::vector<Tensor> analytic(checked.size());
  if (y.requires_grad()) analytic = grad({(y * w).sum()}, checked, {}, false, false, /*allow_unused=*/true);

  // The global scalar; every rank evaluates fn together (it may call collectives).
  auto global = [&]() {
    Tensor yv = fn(xs);
    const double local = (yv.detach() * w).sum().item<double>();
    return output == Placement::sharded ? all_reduce_scalar(local) : local;
  };

  for (std::size_t c = 0; c < checked.size(); ++c) {
    const std::size_t i = checked_index[c];
    Tensor& x = xs[i];
    double* data = x.data<double>();  // contiguous clone
    const Tensor a = analytic[c].defined() ? analytic[c].contiguous() : zeros_like(x);
    const std::vector<double> av = a.to_vector<double>();
    // Replicated: one round, all ranks perturb. Sharded: one round per owner rank.
    const int rounds = placements[i] == Placement::replicated ? 1 : p;
    for (int owner = 0; owner < rounds; ++owner) {
      const bool replicated = placements[i] == Placement::replicated;
      const bool mine = replicated || owner == rank;
      // The owner's element count (shards may differ in shape).
      const int64_t n =
          replicated ? x.numel() : static_cast<int64_t>(all_reduce_scalar(mine ? double(x.numel()) : 0.0));
      for (int64_t j = 0; j < n; ++j) {
        const double keep = mine ? data[j] : 0.0;
        if (mine) data[j] = keep + opt.eps;
        const double plus = global();
        if (mine) data[j] = keep - opt.eps;
        const double minus = global();
        if (mine) data[j] = keep;
        const double numeric = (plus - minus) / (2 * opt.eps);
        if (!mine) continue;
        const double an = av[static_cast<std::size_t>(j)];
        if (!(std::abs(an - numeric) <= opt.atol + opt.rtol * std::abs(numeric))) {
          std::ostringstream s;
          s << "input " << i << " (" << to_string(placements[i]) << ") element " << j << ": analytic " << an
            << " vs numeric " << numeric;
          fail(s.str());
        }
      }
    }
  }
  GradcheckResult r;
  const bool ok_here = failure.tellp() == 0;
  r.ok = all_reduce_scalar(ok_here ? 1.0 : 0.0, dist::ReduceOp::MIN) == 1.0;
  r.message = ok_here ? (r.ok ? "" : std::string(opt.name) + ": failed on another rank") : failure.str();
  return r;
}

// Second derivatives, as PyTorch's gradgradcheck: gradcheck_across_ranks of the map
// (x, v) -> grad(fn(x), x, v, create_graph) for a one-input fn, so that the backward
// closures' own backward (the differentiable collectives they call) meets central
// differences. x keeps its placement, v has fn's output placement, and the map's output
// has x's placement.
inline ag::GradcheckResult gradgradcheck_across_ranks(const Fn& fn, const ag::Tensor& x, Placement input,
                                                      Placement output, const ag::GradcheckOptions& opt = {},
                                                      uint64_t seed = 4321) {
  using namespace ag;
  const Tensor y = fn({x.detach().clone()});
  Generator gen(output == Placement::replicated ? seed : seed + 1 + static_cast<uint64_t>(dist::rank()));
  const Tensor v = randn(y.shape(), DType::f64, &gen).requires_grad_();
  auto backward_map = [&](const std::vector<Tensor>& in) {
    return grad({fn({in[0]})}, {in[0]}, {in[1]}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  };
  const Tensor xg = x.detach().clone().requires_grad_();
  return gradcheck_across_ranks(backward_map, {xg, v}, {input, output}, input, opt, seed + 7);
}

}  // namespace dist_test
