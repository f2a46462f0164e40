// Normalization over channels: the fused batch_norm against its composite formula, and
// the modules (BatchNorm1d / 2d, InstanceNorm1d / 2d, GroupNorm, SyncBatchNorm in a world
// of one, convert_sync_batchnorm): running statistics over several steps against values
// worked out here from PyTorch's formulas, train / eval, state dicts, printing, errors.
// SyncBatchNorm on two ranks: tests/dist/test_sync_batchnorm.cpp.
//
// N batch, C channels, S spatial size; per-channel statistics are over N and S.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using test_util::max_abs_diff;

namespace {

std::string str(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

// The batch norm formula from primitives: batch statistics (biased variance) when mean
// is undefined, else the given mean and var.
Tensor batch_norm_composite(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& mean, const Tensor& var,
                            double eps) {
  Shape cs = Shape::filled(x.dim(), 1);
  cs[1] = x.size(1);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor y;
  if (mean.defined()) {
    y = (x - reshape(mean, cs)) * rsqrt(reshape(var, cs) + eps);
  } else {
    Tensor xc = x - ag::mean(x, dims, true);
    y = xc * rsqrt(ag::mean(square(xc), dims, true) + eps);
  }
  if (w.defined()) y = y * reshape(w, cs);
  return b.defined() ? y + reshape(b, cs) : y;
}

// Per-channel mean and variance (divided by n - correction) of x (N, C, *), by loops.
struct ChannelStats {
  std::vector<double> mean, var;
};
ChannelStats channel_stats(const Tensor& x, int correction) {
  const int64_t n = x.size(0), c = x.size(1), s = x.numel() / (n * c);
  const std::vector<double> v = x.contiguous().to_vector<double>();
  ChannelStats r{std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
  for (int64_t k = 0; k < c; ++k) {
    double sum = 0, ss = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) sum += v[static_cast<std::size_t>((i * c + k) * s + j)];
    const double m = sum / static_cast<double>(n * s);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) ss += std::pow(v[static_cast<std::size_t>((i * c + k) * s + j)] - m, 2);
    r.mean[k] = m;
    r.var[k] = ss / static_cast<double>(n * s - correction);
  }
  return r;
}

// max |a - b| / (1 + |b|) over two vectors of equal length.
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]) / (1 + std::abs(b[i])));
  return m;
}

std::vector<std::string> keys(const TensorMap& m) {
  std::vector<std::string> k;
  for (const auto& [name, t] : m) k.push_back(name);
  return k;
}

}  // namespace

// ---- the op ---------------------------------------------------------------------------

TEST_CASE("batch_norm: the fused op equals its composite formula, values and gradients (f64)") {
  struct Case {
    Shape x;
    bool training, affine, transposed;
  };
  const Case cases[] = {{{6, 4}, true, true, false},       {{3, 4, 5}, true, false, false},
                        {{2, 3, 4, 5}, true, true, false}, {{2, 3, 4, 5}, false, true, false},
                        {{3, 4, 5}, false, false, false},  {{5, 4}, true, true, true},
                        {{2, 3, 5, 4}, true, true, true}};
  for (const auto& c : cases) {
    INFO("x " << c.x << " training " << c.training << " affine " << c.affine << " transposed " << c.transposed);
    Generator g(11);
    const int64_t ch = c.x[1];
    Shape stored = c.x;
    if (c.transposed) std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
    Tensor x = (randn(stored, DType::f64, &g) * 2.0 + 0.5).detach().requires_grad_();
    Tensor xin = c.transposed ? x.transpose(-1, -2) : x;
    Tensor w = c.affine ? randn({ch}, DType::f64, &g).requires_grad_() : Tensor{};
    Tensor b = c.affine ? randn({ch}, DType::f64, &g).requires_grad_() : Tensor{};
    Tensor rm = randn({ch}, DType::f64, &g), rv = uniform({ch}, 0.5, 2.0, DType::f64, &g);
    Tensor up = randn(xin.shape(), DType::f64, &g);
    std::vector<Tensor> wrt{x};
    if (c.affine) wrt.insert(wrt.end(), {w, b});
    Tensor y1 = batch_norm(xin, rm.clone(), rv.clone(), w, b, c.training, 0.1, 1e-5);
    Tensor y2 =
        c.training ? batch_norm_composite(xin, w, b, {}, {}, 1e-5) : batch_norm_composite(xin, w, b, rm, rv, 1e-5);
    CHECK(y1.grad_fn()->name == std::string("batch_norm"));
    CHECK(max_abs_diff(y1, y2) < 1e-12);
    auto g1 = grad({sum(y1 * up)}, wrt, {}, true, true), g2 = grad({sum(y2 * up)}, wrt, {}, true, true);
    for (std::size_t i = 0; i < wrt.size(); ++i) CHECK(max_abs_diff(g1[i], g2[i]) < 1e-12);
    // Second derivatives: create_graph differentiates the composite (eval without affine
    // is linear in x: its gradient is a constant).
    if (!c.training && !c.affine) continue;
    auto gg1 = grad({sum(square(g1[0]))}, wrt, {}, true, false, true);
    auto gg2 = grad({sum(square(g2[0]))}, wrt, {}, {}, false, true);
    for (std::size_t i = 0; i < wrt.size(); ++i)
      if (gg2[i].defined()) CHECK(max_abs_diff(gg1[i], gg2[i]) < 1e-10);
  }
}

TEST_CASE("batch_norm: gradcheck and gradgradcheck of the fused op, training and eval (f64)") {
  Generator g(5);
  Tensor x = randn({3, 2, 4}, DType::f64, &g).requires_grad_();
  Tensor w = randn({2}, DType::f64, &g).requires_grad_(), b = randn({2}, DType::f64, &g).requires_grad_();
  for (bool training : {true, false}) {
    INFO("training " << training);
    auto fn = [training](const std::vector<Tensor>& in) {
      Tensor rm = Tensor::from_vector(std::vector<double>{0.3, -0.2}),
             rv = Tensor::from_vector(std::vector<double>{1.5, 0.7});
      return batch_norm(in[0], rm, rv, in[1], in[2], training, 0.1, 1e-5);
    };
    GradcheckResult r1 = gradcheck(fn, {x, w, b});
    CHECK_MESSAGE(r1.ok, r1.message);
    GradcheckResult r2 = gradgradcheck(fn, {x, w, b});
    CHECK_MESSAGE(r2.ok, r2.message);
  }
}

TEST_CASE("batch_norm: running statistics update in place, outside the graph, by PyTorch's rule") {
  Generator g(2);
  Tensor x = randn({4, 3, 5}, DType::f64, &g).requires_grad_();
  Tensor rm = Tensor::from_vector(std::vector<double>{0.5, -1.0, 2.0});
  Tensor rv = Tensor::from_vector(std::vector<double>{2.0, 0.5, 1.0});
  Tensor y = batch_norm(x, rm, rv, {}, {}, true, 0.3);
  const ChannelStats s = channel_stats(x.detach(), 1);  // unbiased variance for the running stats
  const std::vector<double> m0{0.5, -1.0, 2.0}, v0{2.0, 0.5, 1.0};
  std::vector<double> want_m, want_v;
  for (int k = 0; k < 3; ++k) {
    want_m.push_back(0.7 * m0[k] + 0.3 * s.mean[k]);
    want_v.push_back(0.7 * v0[k] + 0.3 * s.var[k]);
  }
  CHECK(rel_diff(rm.to_vector<double>(), want_m) < 1e-14);
  CHECK(rel_diff(rv.to_vector<double>(), want_v) < 1e-14);
  CHECK_FALSE(rm.requires_grad());
  // The output's graph does not depend on the (since changed) running stats.
  Tensor y2 = batch_norm(x, rm, rv, {}, {}, true, 0.3);  // updates them again
  (sum(y) + sum(y2)).backward();
  CHECK(x.grad().defined());
  // Eval saves this call's mean and 1/std: changing the running stats before backward is fine.
  Tensor x2 = randn({4, 3, 5}, DType::f64, &g).requires_grad_();
  Tensor w = ones({3}, DType::f64).requires_grad_();
  Tensor ye = batch_norm(x2, rm, rv, w, {}, false);
  Tensor want_dw = sum((x2.detach() - reshape(rm, {1, 3, 1})) * rsqrt(reshape(rv, {1, 3, 1}) + 1e-5), {0, 2});
  batch_norm(x2.detach(), rm, rv, {}, {}, true);  // a training call moves them
  sum(ye).backward();
  CHECK(max_abs_diff(w.grad(), want_dw) < 1e-12);
}

TEST_CASE("batch_norm: errors name the op and the shapes") {
  Tensor rm = zeros({3}, DType::f64), rv = ones({3}, DType::f64);
  CHECK_THROWS_MSG(batch_norm(randn({1, 3}, DType::f64), rm, rv, {}, {}, true), ValueError,
                   "batch_norm: Expected more than 1 value per channel when training, got input size [1, 3]");
  CHECK_THROWS_MSG(batch_norm(randn({1, 3, 1, 1}, DType::f64), {}, {}, {}, {}, true), ValueError,
                   "got input size [1, 3, 1, 1]");
  CHECK_NOTHROW(batch_norm(randn({1, 3}, DType::f64), rm, rv));  // eval: one value is fine
  CHECK_THROWS_MSG(batch_norm(randn({2, 3}, DType::f64), {}, {}), ValueError, "must be defined in evaluation mode");
  CHECK_THROWS_MSG(batch_norm(randn({2, 4}, DType::f64), rm, rv), ShapeError,
                   "batch_norm: running_mean should contain 4 elements not 3");
  CHECK_THROWS_MSG(batch_norm(randn({4}, DType::f64), {}, {}, {}, {}, true), ShapeError, "at least 2 dims");
  CHECK_THROWS_AS(batch_norm(randn({2, 3}), rm, rv), DTypeError);  // f32 input, f64 stats
  // An empty batch, as PyTorch: an empty output, the running statistics untouched.
  Tensor w = full({3}, 2.0, DType::f64).requires_grad_();
  Tensor y = batch_norm(zeros({0, 3, 4}, DType::f64), rm, rv, w, {}, true);
  CHECK(tc::str(y.shape()) == "[0, 3, 4]");
  CHECK(tc::diff(rm, {0, 0, 0}) == "");
  sum(y).backward();
  CHECK(tc::diff(w.grad(), {0, 0, 0}) == "");
}

TEST_CASE("batch_norm: bf16 and f16 compute in f32 and round once; autocast gives f32") {
  Generator g(9);
  Tensor x = randn({4, 3, 6}, DType::f32, &g);
  Tensor w = randn({3}, DType::f32, &g), b = randn({3}, DType::f32, &g);
  for (DType half : {DType::bf16, DType::f16}) {
    Tensor xh = x.to(half);
    Tensor want = batch_norm(xh.to(DType::f32), {}, {}, w, b, true).to(half);
    // weight and bias in f32 beside a 16-bit input (PyTorch's mixed batch norm), or in its dtype
    Tensor got = batch_norm(xh, {}, {}, w, b, true);
    CHECK(got.dtype() == half);
    CHECK(max_abs_diff(got, want) == 0);
    Tensor got2 = batch_norm(xh, {}, {}, w.to(half), b.to(half), true);
    CHECK(max_abs_diff(got2,
                       batch_norm(xh.to(DType::f32), {}, {}, w.to(half).to(DType::f32), b.to(half).to(DType::f32), true)
                           .to(half)) == 0);
    Tensor rm = zeros({3}), rv = ones({3});  // f32 running stats updated from the f32 statistics
    batch_norm(xh, rm, rv, {}, {}, true);
    Tensor rm32 = zeros({3}), rv32 = ones({3});
    batch_norm(xh.to(DType::f32), rm32, rv32, {}, {}, true);
    CHECK(max_abs_diff(rm, rm32) == 0);
    CHECK(max_abs_diff(rv, rv32) == 0);
    autocast guard(half);
    CHECK(batch_norm(xh, {}, {}, {}, {}, true).dtype() == DType::f32);
  }
}

TEST_CASE("group_norm and instance_norm: values by hand, errors") {
  Generator g(4);
  Tensor x = randn({2, 6, 5}, DType::f64, &g) * 3.0;
  // group_norm with 3 groups: each sample's channels {0,1}, {2,3}, {4,5} together.
  Tensor w = randn({6}, DType::f64, &g), b = randn({6}, DType::f64, &g);
  Tensor y = group_norm(x, 3, w, b, 1e-5);
  Tensor xg = reshape(x, {2, 3, 10});
  Tensor want =
      reshape((xg - mean(xg, {2}, true)) * rsqrt(var(xg, {2}, 0, true) + 1e-5), {2, 6, 5}) * reshape(w, {1, 6, 1}) +
      reshape(b, {1, 6, 1});
  CHECK(max_abs_diff(y, want) < 1e-12);
  CHECK_THROWS_MSG(group_norm(x, 4), ShapeError,
                   "group_norm: Expected number of channels in input to be divisible by num_groups, but got input of "
                   "shape [2, 6, 5] and num_groups=4");
  CHECK_THROWS_MSG(group_norm(x, 3, ones({5}, DType::f64)), ShapeError, "weight of shape [5]");
  // instance_norm: each (sample, channel) over its 5 values.
  Tensor yi = instance_norm(x);
  CHECK(max_abs_diff(yi, (x - mean(x, {2}, true)) * rsqrt(var(x, {2}, 0, true) + 1e-5)) < 1e-12);
  // Running stats: the per-channel statistics averaged over the batch.
  Tensor rm = zeros({6}, DType::f64), rv = ones({6}, DType::f64);
  instance_norm(x, rm, rv, {}, {}, true, 0.2);
  Tensor want_rm = 0.2 * mean(mean(x, {2}), {0}), want_rv = 0.8 + 0.2 * mean(var(x, {2}, 1), {0});
  CHECK(max_abs_diff(rm, want_rm) < 1e-14);
  CHECK(max_abs_diff(rv, want_rv) < 1e-14);
  // Without the input's statistics the running ones normalize.
  Tensor ye = instance_norm(x, rm, rv, {}, {}, false);
  CHECK(max_abs_diff(ye, (x - reshape(rm, {1, 6, 1})) * rsqrt(reshape(rv, {1, 6, 1}) + 1e-5)) < 1e-12);
  CHECK_THROWS_MSG(instance_norm(x, {}, {}, {}, {}, false), ValueError, "must be defined when use_input_stats");
  CHECK_THROWS_MSG(instance_norm(randn({2, 3, 1}, DType::f64)), ValueError,
                   "Expected more than 1 spatial element when training, got input size [2, 3, 1]");
}

// ---- BatchNorm modules ------------------------------------------------------------------

TEST_CASE("BatchNorm2d: running statistics over several steps, momentum 0.1 and cumulative (nullopt)") {
  for (std::optional<double> momentum : {std::optional<double>(0.1), std::optional<double>()}) {
    INFO("momentum " << (momentum ? std::to_string(*momentum) : "None"));
    nn::BatchNorm2d bn(nn::BatchNormOptions(3).momentum(momentum));
    bn->to(DType::f64);
    Generator g(7);
    std::vector<double> rm(3, 0.0), rv(3, 1.0);
    for (int step = 1; step <= 4; ++step) {
      Tensor x = randn({2 + step, 3, 2, 3}, DType::f64, &g) * (1.0 + step) + step;
      Tensor y = bn(x);
      const ChannelStats biased = channel_stats(x, 0), unbiased = channel_stats(x, 1);
      const double f = momentum ? *momentum : 1.0 / step;  // cumulative: 1 / num_batches_tracked
      for (int k = 0; k < 3; ++k) {
        rm[k] = (1 - f) * rm[k] + f * biased.mean[k];
        rv[k] = (1 - f) * rv[k] + f * unbiased.var[k];
      }
      CHECK(rel_diff(bn->running_mean.to_vector<double>(), rm) < 1e-13);
      CHECK(rel_diff(bn->running_var.to_vector<double>(), rv) < 1e-13);
      CHECK(bn->num_batches_tracked.item<int64_t>() == step);
      // Training normalizes with the batch's own statistics (weight 1, bias 0).
      Tensor mean_t = reshape(Tensor::from_vector(biased.mean), {1, 3, 1, 1});
      Tensor var_t = reshape(Tensor::from_vector(biased.var), {1, 3, 1, 1});
      CHECK(max_abs_diff(y, (x - mean_t) * rsqrt(var_t + 1e-5)) < 1e-12);
    }
    if (!momentum) {  // the cumulative average is the plain mean of the four batch means
      Generator g2(7);
      std::vector<double> avg(3, 0.0);
      for (int step = 1; step <= 4; ++step) {
        const ChannelStats s = channel_stats(randn({2 + step, 3, 2, 3}, DType::f64, &g2) * (1.0 + step) + step, 0);
        for (int k = 0; k < 3; ++k) avg[k] += s.mean[k] / 4;
      }
      CHECK(rel_diff(bn->running_mean.to_vector<double>(), avg) < 1e-13);
    }
    // Eval: the running statistics normalize, nothing is updated.
    bn->eval();
    const std::vector<double> rm_before = bn->running_mean.to_vector<double>();
    Tensor x = randn({2, 3, 2, 3}, DType::f64, &g);
    Tensor y = bn(x);
    Tensor want = (x - reshape(Tensor::from_vector(rm), {1, 3, 1, 1})) *
                  rsqrt(reshape(Tensor::from_vector(rv), {1, 3, 1, 1}) + 1e-5);
    CHECK(max_abs_diff(y, want) < 1e-12);
    CHECK(bn->num_batches_tracked.item<int64_t>() == 4);
    CHECK(bn->running_mean.to_vector<double>() == rm_before);
  }
}

TEST_CASE("BatchNorm: state dict keys, shapes and dtypes as PyTorch's; parameters") {
  nn::BatchNorm2d bn(16);
  TensorMap sd = bn->state_dict();
  CHECK(keys(sd) == std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  for (const char* k : {"weight", "bias", "running_mean", "running_var"}) CHECK(tc::str(sd.at(k).shape()) == "[16]");
  CHECK(sd.at("num_batches_tracked").dim() == 0);
  CHECK(sd.at("num_batches_tracked").dtype() == DType::i64);
  CHECK(bn->parameters().size() == 2);
  CHECK(tc::diff(bn->weight, std::vector<double>(16, 1.0)) == "");
  CHECK(tc::diff(bn->bias, std::vector<double>(16, 0.0)) == "");
  CHECK(tc::diff(bn->running_var, std::vector<double>(16, 1.0)) == "");
  bn->to(DType::f64);  // the counter stays i64
  CHECK(bn->num_batches_tracked.dtype() == DType::i64);
  CHECK(bn->running_mean.dtype() == DType::f64);
  // load_state_dict round trip
  nn::BatchNorm2d other(16);
  other->running_mean.fill_(3.0);
  other->num_batches_tracked.fill_(7);
  bn->load_state_dict(other->state_dict());
  CHECK(bn->num_batches_tracked.item<int64_t>() == 7);
  CHECK(bn->running_mean.to_vector<double>()[5] == 3.0);
  bn->reset_running_stats();
  CHECK(bn->num_batches_tracked.item<int64_t>() == 0);
  CHECK(bn->running_mean.to_vector<double>()[5] == 0.0);
  // affine false: buffers only; track_running_stats false: parameters only
  nn::BatchNorm1d plain(nn::BatchNormOptions(4).affine(false));
  CHECK(keys(plain->state_dict()) == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(plain->parameters().empty());
  nn::BatchNorm1d untracked(nn::BatchNormOptions(4).track_running_stats(false));
  CHECK(keys(untracked->state_dict()) == std::vector<std::string>{"weight", "bias"});
}

TEST_CASE("BatchNorm: affine false, track_running_stats false (batch statistics in eval too)") {
  Generator g(3);
  Tensor x = randn({5, 4}, DType::f64, &g) * 2.0 + 1.0;
  nn::BatchNorm1d plain(nn::BatchNormOptions(4).affine(false));
  plain->to(DType::f64);
  const ChannelStats s = channel_stats(x, 0);
  Tensor want = (x - Tensor::from_vector(s.mean)) * rsqrt(Tensor::from_vector(s.var) + 1e-5);
  CHECK(max_abs_diff(plain(x), want) < 1e-12);
  nn::BatchNorm1d untracked(nn::BatchNormOptions(4).track_running_stats(false));
  untracked->to(DType::f64);
  Tensor y_train = untracked(x);
  untracked->eval();
  CHECK(max_abs_diff(untracked(x), y_train) == 0);
  CHECK(max_abs_diff(y_train, want) < 1e-12);
  CHECK_THROWS_MSG(untracked(randn({1, 4}, DType::f64)), ValueError, "Expected more than 1 value per channel");
}

TEST_CASE("BatchNorm: input checks name the module and the shape; one value per channel") {
  nn::BatchNorm1d bn1(3);
  CHECK_NOTHROW(bn1(randn({4, 3})));
  CHECK_NOTHROW(bn1(randn({4, 3, 5})));
  CHECK_THROWS_MSG(bn1(randn({2, 3, 4, 5})), ShapeError, "BatchNorm1d: expected a 2-D (N, C) or 3-D (N, C, L) input");
  CHECK_THROWS_MSG(bn1(randn({4, 5})), ShapeError,
                   "BatchNorm1d: expected 3 channels (dim 1 of (N, C, *)), got input "
                   "shape [4, 5]");
  nn::BatchNorm2d bn2(3);
  CHECK_THROWS_MSG(bn2(randn({4, 3, 5})), ShapeError,
                   "BatchNorm2d: expected a 4-D (N, C, H, W) input, got 3-D input "
                   "of shape [4, 3, 5]");
  const int64_t before = bn1->num_batches_tracked.item<int64_t>();
  CHECK_THROWS_MSG(bn1(randn({1, 3})), ValueError,
                   "batch_norm: Expected more than 1 value per channel when training, got input size [1, 3]");
  CHECK(bn1->num_batches_tracked.item<int64_t>() == before);  // a failed call counts nothing
  bn1->eval();
  CHECK_NOTHROW(bn1(randn({1, 3})));
  CHECK_THROWS_AS(nn::BatchNorm2d(0), ValueError);
}

TEST_CASE("BatchNorm: gradients through the module equal the composite's (f64)") {
  Generator g(8);
  nn::BatchNorm2d bn(3);
  bn->to(DType::f64);
  {
    NoGradGuard ng;
    bn->weight.copy_(randn({3}, DType::f64, &g));
    bn->bias.copy_(randn({3}, DType::f64, &g));
  }
  Tensor x = randn({2, 3, 3, 2}, DType::f64, &g).requires_grad_();
  Tensor up = randn({2, 3, 3, 2}, DType::f64, &g);
  auto gm = grad({sum(bn(x) * up)}, {x, bn->weight, bn->bias});
  auto gc = grad({sum(batch_norm_composite(x, bn->weight, bn->bias, {}, {}, 1e-5) * up)}, {x, bn->weight, bn->bias});
  for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(gm[i], gc[i]) < 1e-12);
}

TEST_CASE("BatchNorm: printing as PyTorch's repr") {
  CHECK(str(*nn::BatchNorm2d(16)) == "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  CHECK(str(*nn::BatchNorm1d(nn::BatchNormOptions(8).momentum(std::nullopt).affine(false).eps(1e-3))) ==
        "BatchNorm1d(8, eps=0.001, momentum=None, affine=false, track_running_stats=true)");
  CHECK(str(*nn::SyncBatchNorm(4)) ==
        "SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  CHECK(str(*nn::InstanceNorm2d(16)) ==
        "InstanceNorm2d(16, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false)");
  CHECK(str(*nn::GroupNorm(4, 16)) == "GroupNorm(4, 16, eps=1e-05, affine=true)");
}

// ---- InstanceNorm and GroupNorm modules ----------------------------------------------------

TEST_CASE("InstanceNorm1d / 2d: PyTorch's defaults, unbatched input, running statistics when tracked") {
  Generator g(6);
  nn::InstanceNorm2d in2(4);
  CHECK(in2->state_dict().size() == 0);  // affine false, track_running_stats false
  Tensor x = randn({2, 4, 3, 3}, DType::f32, &g);
  CHECK(max_abs_diff(in2(x), instance_norm(x)) == 0);
  in2->eval();  // not tracking: the input's statistics in eval too
  CHECK(max_abs_diff(in2(x), instance_norm(x)) == 0);
  // unbatched (C, H, W)
  Tensor one = select(x, 0, 1);
  CHECK(max_abs_diff(in2(one), select(instance_norm(x), 0, 1)) < 1e-6);
  CHECK_THROWS_MSG(in2(randn({4, 3})), ShapeError, "InstanceNorm2d: expected a 3-D (C, *) or 4-D (N, C, *) input");

  nn::InstanceNorm1d in1(nn::InstanceNormOptions(3).affine(true).track_running_stats(true).momentum(0.25));
  in1->to(DType::f64);
  CHECK(keys(in1->state_dict()) ==
        std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  Tensor xs = randn({4, 3, 6}, DType::f64, &g) + 1.0;
  in1(xs);
  CHECK(max_abs_diff(in1->running_mean, 0.25 * mean(mean(xs, {2}), {0})) < 1e-14);
  CHECK(max_abs_diff(in1->running_var, 0.75 + 0.25 * mean(var(xs, {2}, 1), {0})) < 1e-14);
  CHECK(in1->num_batches_tracked.item<int64_t>() == 0);  // PyTorch keeps it at 0 for InstanceNorm
  in1->eval();
  Tensor ye = in1(xs);
  CHECK(max_abs_diff(ye, (xs - reshape(in1->running_mean, {1, 3, 1})) *
                             rsqrt(reshape(in1->running_var, {1, 3, 1}) + 1e-5)) < 1e-12);
  CHECK_THROWS_MSG(in1(randn({4, 5, 6}, DType::f64)), ShapeError, "InstanceNorm1d: expected 3 channels");
}

TEST_CASE("GroupNorm: values, parameters, train and eval agree, errors") {
  Generator g(12);
  nn::GroupNorm gn(nn::GroupNormOptions(2, 6).eps(1e-3));
  gn->to(DType::f64);
  CHECK(keys(gn->state_dict()) == std::vector<std::string>{"weight", "bias"});
  Tensor x = randn({3, 6, 4, 2}, DType::f64, &g);
  Tensor y = gn(x);
  Tensor xg = reshape(x, {3, 2, 24});
  CHECK(max_abs_diff(y, reshape((xg - mean(xg, {2}, true)) * rsqrt(var(xg, {2}, 0, true) + 1e-3), x.shape())) < 1e-12);
  gn->eval();
  CHECK(max_abs_diff(gn(x), y) == 0);
  CHECK_THROWS_MSG(nn::GroupNorm(4, 6), ValueError, "GroupNorm: num_channels (6) must be divisible by num_groups (4)");
  CHECK_THROWS_MSG(gn(randn({3, 4, 2}, DType::f64)), ShapeError, "GroupNorm: expected an (N, 6, *) input");
  nn::GroupNorm plain(nn::GroupNormOptions(3, 6).affine(false));
  CHECK(plain->parameters().empty());
}

// ---- SyncBatchNorm in a world of one, convert_sync_batchnorm ---------------------------

namespace {
// A module that calls its BatchNorm through a typed member, as user code does.
struct BlockImpl : nn::Module {
  BlockImpl() : nn::Module("Block") {
    fc = register_module("fc", nn::Linear(4, 3));
    bn = register_module("bn", nn::BatchNorm1d(3));
  }
  Tensor forward(const Tensor& x) { return bn(fc(x)); }
  nn::Linear fc{nullptr};
  nn::BatchNorm1d bn{nullptr};
};
AG_MODULE(Block);
}  // namespace

TEST_CASE("SyncBatchNorm in a world of one is BatchNorm") {
  Generator g(13);
  nn::SyncBatchNorm sbn(3);
  nn::BatchNorm2d bn(3);
  Tensor x = randn({2, 3, 4, 4}, DType::f32, &g);
  CHECK(max_abs_diff(sbn(x), bn(x)) == 0);
  CHECK(max_abs_diff(sbn->running_var, bn->running_var) == 0);
  CHECK(sbn->num_batches_tracked.item<int64_t>() == 1);
  CHECK(keys(sbn->state_dict()) == keys(bn->state_dict()));
  CHECK_NOTHROW(sbn(randn({2, 3})));  // any rank >= 2
  CHECK_THROWS_MSG(sbn(randn({3})), ShapeError, "SyncBatchNorm: expected an input of at least 2 dims");
}

TEST_CASE("convert_sync_batchnorm: BatchNorms become SyncBatchNorms sharing their tensors") {
  Block block;
  nn::Sequential seq(nn::Linear(4, 3), nn::BatchNorm1d(3), nn::ReLU());
  seq->eval();
  const TensorMap before = seq->state_dict();
  Tensor w = seq->named_children()[1].second->as<nn::BatchNorm1d>()->weight;
  std::shared_ptr<nn::Module> out = nn::convert_sync_batchnorm(seq);
  CHECK(out == seq.ptr());
  auto* sync = seq->named_children()[1].second->as<nn::SyncBatchNorm>();
  REQUIRE(sync != nullptr);
  CHECK(sync->weight.impl() == w.impl());  // the same handle: optimizers keep working
  CHECK_FALSE(sync->is_training());        // the mode carries over
  CHECK(keys(seq->state_dict()) == keys(before));
  // A BatchNorm at the root is replaced by the returned module.
  nn::BatchNorm2d root(5);
  std::shared_ptr<nn::Module> converted = nn::convert_sync_batchnorm(root);
  CHECK(converted->type_name() == "SyncBatchNorm");
  CHECK(converted != root.ptr());
  // A parent calling its BatchNorm through a typed member reaches the SyncBatchNorm.
  nn::convert_sync_batchnorm(block);
  CHECK(block->named_children()[1].second->type_name() == "SyncBatchNorm");
  auto* bsync = block->named_children()[1].second->as<nn::SyncBatchNorm>();
  REQUIRE(bsync != nullptr);
  block(randn({5, 4}));  // through block->bn, the old module
  CHECK(bsync->num_batches_tracked.item<int64_t>() == 1);
  CHECK(block->bn->num_batches_tracked.item<int64_t>() == 1);  // the same tensor
  block->eval();
  CHECK_FALSE(bsync->is_training());
  std::ostringstream os;
  os << *block;
  CHECK(test_util::contains(os.str(), "(bn): SyncBatchNorm(3, eps=1e-05"));
}
