// nn::SyncBatchNorm on the ranks of the job (one process: a world of one, where it is
// BatchNorm; np2: two ranks). Every rank builds the whole global batch from the same
// seed and runs BatchNorm on it in one process as the reference; its SyncBatchNorm sees
// only its own block of rows (block sizes differ between ranks). Outputs, running
// statistics and num_batches_tracked must equal the reference's, and so must the input
// gradients of each block and the parameter gradients summed over the ranks (the loss
// being the sum of the ranks' losses), in f64.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::max_abs_diff;

namespace {

int W() { return dist::world_size(); }
int R() { return dist::rank(); }

// Rank r holds rows [first(r), first(r + 1)) of the global batch: r + 2 rows each.
int64_t first_row(int r) { return static_cast<int64_t>(r) * (r + 3) / 2; }

void report(const std::string& what, double diff) {
  if (R() == 0) std::printf("sync_batchnorm: %s: max abs diff %.3g (world size %d)\n", what.c_str(), diff, W());
}

// Gradients of sum(y * up) summed over the ranks (what DDP would average instead).
Tensor summed(Tensor g) {
  Tensor t = g.detach().clone();
  dist::all_reduce(t, dist::ReduceOp::SUM);
  return t;
}

// `steps` training steps of a reference BatchNorm on the global batch and of this rank's
// SyncBatchNorm on its block; x_shape[0] is replaced by the global batch size.
template <class Ref>
void against_one_process(Ref ref, nn::SyncBatchNorm sync, Shape x_shape, int steps) {
  const int64_t c = x_shape[1], n = first_row(W()), r0 = first_row(R()), r1 = first_row(R() + 1);
  x_shape[0] = n;
  Generator g(77);  // the same draws on every rank
  ref->to(DType::f64);
  sync->to(DType::f64);
  {
    NoGradGuard no_grad;
    Tensor w = randn({c}, DType::f64, &g), b = randn({c}, DType::f64, &g);
    ref->weight.copy_(w);
    ref->bias.copy_(b);
    sync->weight.copy_(w);
    sync->bias.copy_(b);
  }
  double dy = 0, dstats = 0, dgx = 0, dgp = 0;
  for (int step = 0; step < steps; ++step) {
    Tensor x = (randn(x_shape, DType::f64, &g) * (1.0 + step) + 0.5 * step).requires_grad_();
    Tensor up = randn(x_shape, DType::f64, &g);
    for (Tensor p : {ref->weight, ref->bias, sync->weight, sync->bias}) p.zero_grad();
    Tensor y_ref = ref(x);
    sum(y_ref * up).backward();

    Tensor xr = x.detach().slice(0, r0, r1).clone().requires_grad_();
    Tensor y = sync(xr);
    sum(y * up.slice(0, r0, r1)).backward();

    dy = std::max(dy, max_abs_diff(y, y_ref.detach().slice(0, r0, r1)));
    dstats = std::max({dstats, max_abs_diff(sync->running_mean, ref->running_mean),
                       max_abs_diff(sync->running_var, ref->running_var)});
    CHECK(sync->num_batches_tracked.item<int64_t>() == step + 1);
    dgx = std::max(dgx, max_abs_diff(xr.grad(), x.grad().slice(0, r0, r1)));
    dgp = std::max({dgp, max_abs_diff(summed(sync->weight.grad()), ref->weight.grad()),
                    max_abs_diff(summed(sync->bias.grad()), ref->bias.grad())});
  }
  report("output", dy);
  report("running stats", dstats);
  report("input gradient", dgx);
  report("weight and bias gradients", dgp);
  CHECK(dy < 1e-12);
  CHECK(dstats < 1e-12);
  CHECK(dgx < 1e-12);
  CHECK(dgp < 1e-11);
  // Eval normalizes with the (equal) running statistics, locally.
  ref->eval();
  sync->eval();
  Tensor x = randn(x_shape, DType::f64, &g);
  CHECK(max_abs_diff(sync(x.slice(0, r0, r1)), ref(x).slice(0, r0, r1)) < 1e-12);
}

}  // namespace

TEST_CASE("SyncBatchNorm on W ranks = BatchNorm2d on the whole batch: output, running stats, gradients (f64)") {
  against_one_process(nn::BatchNorm2d(3), nn::SyncBatchNorm(3), {0, 3, 4, 5}, 3);
}

TEST_CASE("SyncBatchNorm with the cumulative average (momentum nullopt), (N, C) input = BatchNorm1d") {
  nn::BatchNormOptions o = nn::BatchNormOptions(4).momentum(std::nullopt).eps(1e-3);
  against_one_process(nn::BatchNorm1d(o), nn::SyncBatchNorm(o), {0, 4}, 3);
}

TEST_CASE("SyncBatchNorm: one value per channel on each rank is enough when there are several ranks") {
  nn::SyncBatchNorm sync(2);
  Tensor x = randn({1, 2});
  if (W() > 1) {
    CHECK_NOTHROW(sync(x));
  } else {
    CHECK_THROWS_AS(sync(x), ValueError);
  }
}

TEST_CASE("convert_sync_batchnorm: a converted model trains as one process on the whole batch") {
  manual_seed(5);
  nn::Sequential ref(nn::Linear(4, 3), nn::BatchNorm1d(3));
  manual_seed(5);
  nn::Sequential net(nn::Linear(4, 3), nn::BatchNorm1d(3));
  nn::convert_sync_batchnorm(net);
  CHECK(net->named_children()[1].second->type_name() == "SyncBatchNorm");
  ref->to(DType::f64);
  net->to(DType::f64);
  Generator g(9);
  const int64_t n = first_row(W()), r0 = first_row(R()), r1 = first_row(R() + 1);
  Tensor x = randn({n, 4}, DType::f64, &g);
  Tensor up = randn({n, 3}, DType::f64, &g);
  sum(ref(x) * up).backward();
  Tensor y = net(x.slice(0, r0, r1));
  sum(y * up.slice(0, r0, r1)).backward();
  auto pr = ref->parameters(), pn = net->parameters();
  double d = 0;
  for (std::size_t i = 0; i < pr.size(); ++i) d = std::max(d, max_abs_diff(summed(pn[i].grad()), pr[i].grad()));
  report("converted model, parameter gradients", d);
  CHECK(d < 1e-11);
  const TensorMap a = ref->state_dict(), b = net->state_dict();
  for (const auto& [k, t] : a) CHECK(max_abs_diff(b.at(k), t) < 1e-12);
}
