// Reductions, scans and sorting against PyTorch 1.13 at the cases the op table cannot
// reach by central differences: ties, NaN, zeros, empty dims, -inf. Expected values are
// literals printed by torch 1.13 (CPU, float64) for the expression in each comment.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "tensor_checks.h"

using namespace ag;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 1e-12;

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }
Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }
std::vector<bool> bits(const Tensor& t) { return t.to_vector<bool>(); }

// Backward of sum(y * [1, 2, ..., n]) (the torch scripts use the same weights, so each
// output slot's share of a gradient is visible); returns y.
Tensor weighted_backward(const Tensor& y) {
  std::vector<double> w(static_cast<std::size_t>(y.numel()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(i + 1);
  y.backward(Tensor::from_vector(w, y.shape()));
  return y;
}

}  // namespace

// ---- ties and NaN ---------------------------------------------------------------------
TEST_CASE("maximum / minimum split the gradient on ties; NaN gives both sides all of it") {
  // torch 1.13: a = [1, 2, 3, nan, nan], b = [1, 1, 4, 1, nan]; maximum(a, b).sum().backward()
  Tensor a = leaf({1, 2, 3, kNan, kNan}), b = leaf({1, 1, 4, 1, kNan});
  Tensor y = maximum(a, b);
  CHECK(tc::diff(y, {1, 2, 4, kNan, kNan}) == "");
  y.sum().backward();
  CHECK(tc::diff(a.grad(), {0.5, 1, 0, 1, 1}) == "");
  CHECK(tc::diff(b.grad(), {0.5, 0, 1, 1, 1}) == "");

  Tensor c = leaf({1, 2, 3, kNan, kNan}), d = leaf({1, 1, 4, 1, kNan});
  Tensor z = minimum(c, d);
  CHECK(tc::diff(z, {1, 1, 3, kNan, kNan}) == "");
  z.sum().backward();
  CHECK(tc::diff(c.grad(), {0.5, 0, 1, 1, 1}) == "");
  CHECK(tc::diff(d.grad(), {0.5, 1, 0, 1, 1}) == "");

  // Broadcast: a (2, 1) against b (3); the halves add up through sum_to.
  // torch: maximum([[1.], [2.]], [1., 2., 3.]).sum().backward() -> [[0.5], [1.5]], [0.5, 1.5, 2]
  Tensor p = leaf({1, 2}, {2, 1}), q = leaf({1, 2, 3});
  maximum(p, q).sum().backward();
  CHECK(tc::diff(p.grad(), {0.5, 1.5}) == "");
  CHECK(tc::diff(q.grad(), {0.5, 1.5, 2}) == "");
}

TEST_CASE("max() / min() over all elements split g evenly among the tied extremes") {
  // torch: x = [1, 3, 3, 0, 3]; x.max().backward() -> [0, 1/3, 1/3, 0, 1/3]
  Tensor x = leaf({1, 3, 3, 0, 3});
  Tensor m = max(x);
  CHECK(m.item<double>() == 3);
  m.backward();
  CHECK(tc::diff(x.grad(), {0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3}, kTol) == "");

  // A NaN max: g goes evenly to the NaN elements. torch: [1, nan, 3, nan] -> [0, .5, 0, .5]
  for (bool is_max : {true, false}) {
    Tensor n = leaf({1, kNan, 3, kNan});
    Tensor r = is_max ? max(n) : min(n);
    CHECK(std::isnan(r.item<double>()));
    r.backward();
    CHECK(tc::diff(n.grad(), {0, 0.5, 0, 0.5}) == "");
  }

  // min over a 2-D tensor with two tied minima (as a 0-d result).
  Tensor y = leaf({2, -1, 5, -1}, {2, 2});
  Tensor lo = min(y);
  CHECK(lo.dim() == 0);
  lo.backward();
  CHECK(tc::diff(y.grad(), {0, 0.5, 0, 0.5}) == "");
}

TEST_CASE("max(x, dim) / min(x, dim): first index on ties, first NaN wins; g goes to it") {
  // torch: x = [[1, 3, 3, 0, 3], [2, nan, 5, nan, 1]]; x.max(1) -> values [3, nan], indices [1, 1]
  Tensor x = leaf({1, 3, 3, 0, 3, 2, kNan, 5, kNan, 1}, {2, 5});
  auto [v, i] = max(x, 1);
  CHECK(tc::diff(v, {3, kNan}) == "");
  CHECK(ints(i) == std::vector<int64_t>{1, 1});
  v.sum().backward();
  CHECK(tc::diff(x.grad(), {0, 1, 0, 0, 0, 0, 1, 0, 0, 0}) == "");
  // torch: x.min(1).indices -> [3, 1] (NaN is also the min); argmax / argmin agree
  CHECK(ints(min(x, 1).second) == std::vector<int64_t>{3, 1});
  CHECK(ints(argmax(x, 1)) == std::vector<int64_t>{1, 1});
  CHECK(ints(argmin(x, 1)) == std::vector<int64_t>{3, 1});
  // ties in min: torch [[1, 0, 0]].min(1).indices -> [1]
  CHECK(ints(argmin(f64({1, 0, 0}, {1, 3}), 1)) == std::vector<int64_t>{1});
}

TEST_CASE("amax / amin split g among ties along the reduced dims; a NaN slice gets NaN") {
  // torch: x = [[1, 3, 3], [2, nan, nan]]; amax(x, 1) -> [3, nan]; .sum().backward()
  //   -> [[0, .5, .5], [nan, nan, nan]]
  Tensor x = leaf({1, 3, 3, 2, kNan, kNan}, {2, 3});
  Tensor y = amax(x, {1});
  CHECK(tc::diff(y, {3, kNan}) == "");
  y.sum().backward();
  CHECK(tc::diff(x.grad(), {0, 0.5, 0.5, kNan, kNan, kNan}) == "");

  // torch: amin([[1, 3, 1], [2, 1, 5]], (0, 1)) -> 1; gradient 1/3 at each 1
  Tensor z = leaf({1, 3, 1, 2, 1, 5}, {2, 3});
  Tensor lo = amin(z, {0, 1});
  CHECK(lo.item<double>() == 1);
  lo.backward();
  CHECK(tc::diff(z.grad(), {1.0 / 3, 0, 1.0 / 3, 0, 1.0 / 3, 0}, kTol) == "");

  // keepdim and the all-dims default
  CHECK(amax(f64({1, 5, 2, 4}, {2, 2}), {0}, true).shape() == Shape{1, 2});
  CHECK(amin(f64({1, 5, 2, 4}, {2, 2})).item<double>() == 1);
  CHECK(tc::diff(amax(Tensor::from_vector(std::vector<int64_t>{3, 9, 4}, {3})), {9}) == "");
}

// ---- empty tensors ----------------------------------------------------------------------
TEST_CASE("empty reductions: sum 0, prod 1, max raises") {
  // torch: zeros(0).sum() -> 0; zeros(0).prod() -> 1; zeros(2, 0).prod(1) -> [1, 1]
  CHECK(sum(zeros({0}, DType::f64)).item<double>() == 0);
  CHECK(prod(zeros({0}, DType::f64)).item<double>() == 1);
  CHECK(tc::diff(prod(zeros({2, 0}, DType::f64), 1), {1, 1}) == "");
  CHECK(tc::diff(sum(zeros({2, 0}, DType::f64), {1}), {0, 0}) == "");
  CHECK(amax(zeros({0, 3}, DType::f64), {1}).shape() == Shape{0});
  CHECK(cumsum(zeros({0, 3}, DType::f64), 0).shape() == Shape{0, 3});
  CHECK(sort(zeros({0}, DType::f64)).first.shape() == Shape{0});
  CHECK(bits(all(zeros({2, 0}, DType::f64), 1)) == std::vector<bool>{true, true});
  // prod of an empty leaf still backpropagates (an empty gradient)
  Tensor e = zeros({2, 0}, DType::f64).requires_grad_();
  prod(e, 1).sum().backward();
  CHECK(e.grad().shape() == Shape{2, 0});

  // torch: zeros(0).max() -> RuntimeError "Expected reduction dim to be specified";
  //        zeros(2, 0).max(1) and amax(.., 1) -> IndexError "to have non-zero size"
  CHECK_THROWS_MSG(max(zeros({0}, DType::f64)), ValueError, "max: cannot reduce an empty tensor");
  CHECK_THROWS_MSG(min(zeros({2, 0}, DType::f64)), ValueError, "min: cannot reduce an empty tensor");
  CHECK_THROWS_MSG(max(zeros({2, 0}, DType::f64), 1), IndexError, "max: cannot reduce over dim 1 of size 0");
  CHECK_THROWS_MSG(amax(zeros({2, 0}, DType::f64), {1}), IndexError,
                   "amax: expected reduction dim 1 to have non-zero size");
  CHECK_THROWS_MSG(amin(zeros({0}, DType::f64)), ValueError, "amin: cannot reduce an empty tensor");
}

// ---- prod and cumprod with zeros -----------------------------------------------------
TEST_CASE("prod: gradient with no, one and two zeros") {
  // torch: x = [2, 0, 3]; x.prod().backward() -> [0, 6, 0]
  Tensor x = leaf({2, 0, 3});
  Tensor p = prod(x);
  CHECK(p.item<double>() == 0);
  p.backward();
  CHECK(tc::diff(x.grad(), {0, 6, 0}) == "");
  // torch: [2, 0, 3, 0] -> all zeros
  Tensor y = leaf({2, 0, 3, 0});
  prod(y).backward();
  CHECK(tc::diff(y.grad(), {0, 0, 0, 0}) == "");
  // no zeros: prod / x. torch: [2, 3, 4] -> [12, 8, 6]
  Tensor z = leaf({2, 3, 4});
  prod(z).backward();
  CHECK(tc::diff(z.grad(), {12, 8, 6}, kTol) == "");

  // Along a dim, rows with none, one and two zeros, weights [1, 2, 3].
  // torch: x.prod(1) with x = [[2, 0, 3], [0, 0, 1], [1, 2, 3]] -> [0, 0, 6];
  //   grad -> [[0, 6, 0], [0, 0, 0], [18, 9, 6]]
  Tensor m = leaf({2, 0, 3, 0, 0, 1, 1, 2, 3}, {3, 3});
  CHECK(tc::diff(weighted_backward(prod(m, 1)), {0, 0, 6}) == "");
  CHECK(tc::diff(m.grad(), {0, 6, 0, 0, 0, 0, 18, 9, 6}) == "");
  // torch: x.prod(0, keepdim=True) -> [[0, 0, 9]]; grad -> [[0, 0, 9], [2, 0, 27], [0, 0, 9]]
  Tensor k = leaf({2, 0, 3, 0, 0, 1, 1, 2, 3}, {3, 3});
  Tensor pk = weighted_backward(prod(k, 0, true));
  CHECK(pk.shape() == Shape{1, 3});
  CHECK(tc::diff(pk, {0, 0, 9}) == "");
  CHECK(tc::diff(k.grad(), {0, 0, 9, 2, 0, 27, 0, 0, 9}) == "");
  // integers: an i64 product, no gradient. torch: tensor([2, 3]).prod() -> 6 (int64)
  Tensor pi = prod(Tensor::from_vector(std::vector<int64_t>{2, 3}, {2}));
  CHECK(pi.dtype() == DType::i64);
  CHECK(pi.item<int64_t>() == 6);
}

TEST_CASE("cumprod: exact gradient with zeros") {
  // torch: x = [2, 0, 3, 0, 5]; (x.cumprod(0) * [1..5]).sum().backward() -> [1, 22, 0, 0, 0]
  Tensor x = leaf({2, 0, 3, 0, 5});
  CHECK(tc::diff(weighted_backward(cumprod(x, 0)), {2, 0, 0, 0, 0}) == "");
  CHECK(tc::diff(x.grad(), {1, 22, 0, 0, 0}) == "");
  // torch: [2, 3, 0, 4] -> values [2, 6, 0, 0], grad [7, 4, 114, 0]
  Tensor y = leaf({2, 3, 0, 4});
  CHECK(tc::diff(weighted_backward(cumprod(y, 0)), {2, 6, 0, 0}) == "");
  CHECK(tc::diff(y.grad(), {7, 4, 114, 0}) == "");
  // Along dim 0 of a (3, 2): torch x = [[2, 1], [0, 3], [4, 0]] -> grad [[1, 14], [46, 4], [0, 18]]
  Tensor z = leaf({2, 1, 0, 3, 4, 0}, {3, 2});
  CHECK(tc::diff(weighted_backward(cumprod(z, 0)), {2, 1, 0, 3, 0, 0}) == "");
  CHECK(tc::diff(z.grad(), {1, 14, 46, 4, 0, 18}) == "");
}

// ---- scans ---------------------------------------------------------------------------------
TEST_CASE("cumsum: values, reverse-cumsum gradient, integer and bool inputs give i64") {
  // torch: x = [[1, 2, 3], [4, 5, 6]]; weighted x.cumsum(1) -> grad [[6, 5, 3], [15, 11, 6]]
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(tc::diff(weighted_backward(cumsum(x, -1)), {1, 3, 6, 4, 9, 15}) == "");
  CHECK(tc::diff(x.grad(), {6, 5, 3, 15, 11, 6}) == "");
  // torch: tensor([[1, 2], [3, 4]]).cumsum(1) -> [[1, 3], [3, 7]]; [True, False, True] -> [1, 1, 2]
  Tensor ci = cumsum(Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4}, {2, 2}), 1);
  CHECK(ci.dtype() == DType::i64);
  CHECK(ints(ci) == std::vector<int64_t>{1, 3, 3, 7});
  Tensor cb = cumsum(ne(f64({1, 0, 1}), 0.0), 0);
  CHECK(cb.dtype() == DType::i64);
  CHECK(ints(cb) == std::vector<int64_t>{1, 1, 2});
  // 0-d: the value itself
  CHECK(cumsum(scalar_tensor(3.0, DType::f64), 0).item<double>() == 3);
}

TEST_CASE("logcumsumexp: stable, -inf entries, gradient as PyTorch's (NaN at a leading -inf)") {
  // torch: x = [-inf, 0, 1, -inf]; weighted x.logcumsumexp(0)
  //   -> [-inf, 0, 1.3132616875182228, 1.3132616875182228], grad [nan, 3.8826.., 5.1174.., 0]
  Tensor x = leaf({-kInf, 0, 1, -kInf});
  CHECK(tc::diff(weighted_backward(logcumsumexp(x, 0)), {-kInf, 0, 1.3132616875182228, 1.3132616875182228}, kTol) ==
        "");
  CHECK(tc::diff(x.grad(), {kNan, 3.882589949589966, 5.117410050410034, 0}, 1e-10) == "");
  // Large values stay finite. torch: [1000, 1000, -1000] -> [1000, 1000.6931471805599, same];
  //   grad [3.5, 2.5, 0]
  Tensor big = leaf({1000, 1000, -1000});
  CHECK(tc::diff(weighted_backward(logcumsumexp(big, 0)), {1000, 1000.6931471805599, 1000.6931471805599}, kTol) == "");
  CHECK(tc::diff(big.grad(), {3.5, 2.5, 0}, 1e-10) == "");
  // -inf after a finite entry. torch: [[0, -inf, 1], [2, -inf, -inf]] along 1
  //   -> [[0, 0, 1.3132..], [2, 2, 2]], grad [[3.8068242641099856, 0, 2.193175735890015], [15, 0, 0]]
  Tensor m = leaf({0, -kInf, 1, 2, -kInf, -kInf}, {2, 3});
  CHECK(tc::diff(weighted_backward(logcumsumexp(m, 1)), {0, 0, 1.3132616875182228, 2, 2, 2}, kTol) == "");
  CHECK(tc::diff(m.grad(), {3.8068242641099856, 0, 2.193175735890015, 15, 0, 0}, 1e-10) == "");
  // Mixed-sign upstream gradients g = [1, -4, 9]. torch: x = [0.5, -1, 2];
  //   (x.logcumsumexp(0) * [1, -2, 3] * [1, 2, 3]).sum().backward()
  //   -> grad [-0.6926843755142436, -0.3776889357892382, 7.0703733113034835]
  Tensor s = leaf({0.5, -1, 2});
  weighted_backward(logcumsumexp(s, 0) * f64({1, -2, 3}));
  CHECK(tc::diff(s.grad(), {-0.6926843755142436, -0.3776889357892382, 7.0703733113034835}, 1e-10) == "");
  // All -inf stays -inf (gradient NaN in PyTorch); +inf and NaN propagate.
  // torch: [-inf, -inf] -> [-inf, -inf]; [1, inf, 2] -> [1, inf, inf], grad [1, nan, 0]
  Tensor ni = leaf({-kInf, -kInf});
  CHECK(tc::diff(weighted_backward(logcumsumexp(ni, 0)), {-kInf, -kInf}) == "");
  CHECK(tc::diff(ni.grad(), {kNan, kNan}) == "");
  Tensor pi = leaf({1, kInf, 2});
  CHECK(tc::diff(weighted_backward(logcumsumexp(pi, 0)), {1, kInf, kInf}) == "");
  CHECK(tc::diff(pi.grad(), {1, kNan, 0}) == "");
  CHECK(tc::diff(logcumsumexp(f64({1, kNan, 2}), 0), {1, kNan, kNan}) == "");
  CHECK_THROWS_MSG(logcumsumexp(Tensor::from_vector(std::vector<int64_t>{1, 2}, {2}), 0), DTypeError,
                   "logcumsumexp: expected a floating tensor");
}

// ---- sorting ---------------------------------------------------------------------------------
TEST_CASE("sort is stable with ties; NaN sorts as the largest; -0 and 0 keep their order") {
  // torch: x = [3, 1, nan, 2, 1, -inf, 3, nan, inf, -0., 0.]; torch.sort(x) (stable or not)
  Tensor x = f64({3, 1, kNan, 2, 1, -kInf, 3, kNan, kInf, -0.0, 0.0});
  auto [v, i] = sort(x);
  CHECK(tc::diff(v, {-kInf, -0.0, 0, 1, 1, 2, 3, 3, kInf, kNan, kNan}) == "");
  CHECK(ints(i) == std::vector<int64_t>{5, 9, 10, 1, 4, 3, 0, 6, 8, 2, 7});
  // torch: torch.sort(x, descending=True)
  auto [vd, id] = sort(x, -1, true, true);
  CHECK(tc::diff(vd, {kNan, kNan, kInf, 3, 3, 2, 1, 1, -0.0, 0, -kInf}) == "");
  CHECK(ints(id) == std::vector<int64_t>{2, 7, 8, 0, 6, 3, 1, 4, 9, 10, 5});
  CHECK(ints(argsort(x, 0, true)) == ints(id));
  // torch: argsort([1, 3, 2, 3, 1, 3]) -> [0, 4, 2, 1, 3, 5]; descending -> [1, 3, 5, 2, 0, 4]
  Tensor y = f64({1, 3, 2, 3, 1, 3});
  CHECK(ints(argsort(y)) == std::vector<int64_t>{0, 4, 2, 1, 3, 5});
  CHECK(ints(argsort(y, -1, true)) == std::vector<int64_t>{1, 3, 5, 2, 0, 4});
  // Along dim 0 of integers. torch: sort([[3, 1, 2], [1, 1, 0]], dim=0)
  //   -> values [[1, 1, 0], [3, 1, 2]], indices [[1, 0, 1], [0, 1, 0]]
  auto [vi, ii] = sort(Tensor::from_vector(std::vector<int64_t>{3, 1, 2, 1, 1, 0}, {2, 3}), 0);
  CHECK(ints(vi) == std::vector<int64_t>{1, 1, 0, 3, 1, 2});
  CHECK(ints(ii) == std::vector<int64_t>{1, 0, 1, 0, 1, 0});
  // The gradient of the values goes back to where each came from.
  Tensor s = leaf({3, 1, 2});
  weighted_backward(sort(s).first);  // sorted [1, 2, 3] from indices [1, 2, 0]
  CHECK(tc::diff(s.grad(), {3, 1, 2}) == "");
  CHECK_THROWS_MSG(sort(x, 1), IndexError, "sort: dim 1 is out of range");
}

TEST_CASE("topk: PyTorch 1.13's order on ties, NaN largest, sorted and unsorted") {
  // torch: y = [1, 3, 2, 3, 1, 3]; topk(y, k) / topk(y, k, largest=False)
  Tensor y = f64({1, 3, 2, 3, 1, 3});
  CHECK(ints(topk(y, 1).second) == std::vector<int64_t>{3});
  CHECK(ints(topk(y, 2).second) == std::vector<int64_t>{3, 5});
  CHECK(ints(topk(y, 3).second) == std::vector<int64_t>{3, 5, 1});
  CHECK(ints(topk(y, 4).second) == std::vector<int64_t>{3, 5, 1, 2});
  CHECK(ints(topk(y, 6).second) == std::vector<int64_t>{3, 5, 1, 2, 4, 0});
  CHECK(ints(topk(y, 2, -1, false).second) == std::vector<int64_t>{4, 0});
  CHECK(ints(topk(y, 3, -1, false).second) == std::vector<int64_t>{4, 0, 2});
  CHECK(ints(topk(y, 6, -1, false).second) == std::vector<int64_t>{0, 4, 2, 3, 5, 1});
  CHECK(tc::diff(topk(y, 4).first, {3, 3, 3, 2}) == "");
  // NaN is the largest. torch: topk([1, nan, 2, nan], 3) -> [nan, nan, 2] at [1, 3, 2];
  //   largest=False -> [1, 2, nan] at [0, 2, 3]
  Tensor n = f64({1, kNan, 2, kNan});
  CHECK(ints(topk(n, 3).second) == std::vector<int64_t>{1, 3, 2});
  CHECK(ints(topk(n, 3, 0, false).second) == std::vector<int64_t>{0, 2, 3});
  // 42 equal values. torch: topk(full([42], 5.), 3).indices -> [29, 27, 28] (both directions)
  Tensor fives = full({42}, 5.0, DType::f64);
  CHECK(ints(topk(fives, 3).second) == std::vector<int64_t>{29, 27, 28});
  CHECK(ints(topk(fives, 3, -1, false).second) == std::vector<int64_t>{29, 27, 28});

  // 40 values in 0..4 with NaN at 7 and 21 (random.seed(3) in the torch script).
  Tensor v = f64({1, 4,    4, 1, 2, 4, 3, kNan, 0, 4, 0, 3, 2, 4, 1, 1, 3, 4, 4, 3,
                  3, kNan, 1, 1, 4, 3, 0, 0,    1, 4, 0, 2, 0, 2, 3, 4, 3, 3, 3, 4});
  CHECK(ints(topk(v, 3).second) == std::vector<int64_t>{7, 21, 18});
  CHECK(ints(topk(v, 5, 0, false).second) == std::vector<int64_t>{30, 32, 8, 26, 27});
  CHECK(ints(topk(v, 9).second) == std::vector<int64_t>{7, 21, 13, 1, 17, 18, 35, 39, 24});
  CHECK(ints(topk(v, 9, 0, true, false).second) == std::vector<int64_t>{13, 1, 17, 7, 18, 21, 35, 39, 24});
  CHECK(ints(topk(v, 9, 0, false).second) == std::vector<int64_t>{10, 27, 26, 30, 8, 32, 23, 15, 22});
  CHECK(ints(topk(v, 9, 0, false, false).second) == std::vector<int64_t>{23, 10, 27, 26, 30, 15, 8, 32, 22});

  // The gradient routes to the picked indices; k = 0 and 0-d inputs work.
  Tensor x = leaf({1, 5, 3, 4});
  weighted_backward(topk(x, 2).first);  // [5, 4] from [1, 3]
  CHECK(tc::diff(x.grad(), {0, 1, 0, 2}) == "");
  CHECK(topk(y, 0).first.shape() == Shape{0});
  auto [v0, i0] = topk(scalar_tensor(3.0, DType::f64), 1);
  CHECK(v0.dim() == 0);
  CHECK(i0.item<int64_t>() == 0);
  // torch: topk(zeros(3), 4) -> RuntimeError "selected index k out of range"
  CHECK_THROWS_MSG(topk(y, 7), IndexError, "topk: k = 7 is out of range for dim 0 of size 6");
  CHECK_THROWS_MSG(topk(y, -1), IndexError, "topk: k = -1 is out of range");
}

TEST_CASE("topk: the partial-sort path (k * 64 <= n) keeps PyTorch's tie order") {
  // 200 values in 0..2 (random.seed(3) after the 40 above); torch topk(w, 3).indices ->
  // [14, 11, 9]; largest=False -> [4, 1, 3]
  std::vector<double> w = {1, 0, 1, 0, 0, 0, 1, 0, 1, 2, 1, 2, 1, 1, 2, 1, 2, 1, 2, 2, 1, 2, 0, 1, 2, 0, 1, 2, 2,
                           2, 0, 2, 1, 2, 2, 2, 0, 2, 2, 0, 2, 2, 1, 1, 0, 0, 1, 2, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1,
                           0, 0, 2, 2, 0, 1, 2, 2, 1, 2, 1, 2, 0, 0, 1, 0, 0, 0, 2, 2, 0, 0, 1, 1, 2, 1, 0, 2, 0,
                           1, 1, 1, 0, 1, 1, 1, 2, 1, 2, 2, 2, 2, 0, 2, 2, 1, 1, 2, 2, 2, 0, 1, 1, 1, 2, 1, 2, 1,
                           0, 1, 2, 1, 0, 1, 2, 2, 2, 0, 0, 2, 2, 1, 1, 1, 2, 1, 2, 2, 1, 2, 1, 0, 2, 0, 2, 0, 1,
                           1, 2, 1, 1, 2, 2, 1, 0, 1, 0, 1, 1, 2, 1, 1, 1, 0, 0, 2, 2, 2, 0, 1, 2, 0, 2, 1, 0, 1,
                           0, 2, 1, 2, 2, 0, 0, 2, 1, 1, 2, 0, 1, 0, 0, 1, 2, 2, 0, 2, 1, 1, 0, 0, 0, 2};
  Tensor t = f64(w);
  CHECK(ints(topk(t, 3).second) == std::vector<int64_t>{14, 11, 9});
  CHECK(ints(topk(t, 3, 0, false).second) == std::vector<int64_t>{4, 1, 3});
}

// ---- std, var_mean, std_mean ---------------------------------------------------------------
TEST_CASE("std with correction 0, 1, 2 and its dims forms") {
  // torch: x = [[1, 2, 4], [0, 1, 5]]; torch.std(x, 1, correction=c), weighted backward
  struct Case {
    int64_t c;
    std::vector<double> y, g;
  };
  const std::vector<Case> cases = {
      {0,
       {1.247219128924647, 2.160246899469287},
       {-0.35634832254989923, -0.08908708063747484, 0.44543540318737396, -0.6172133998483675, -0.30860669992418377,
        0.9258200997725513}},
      {1,
       {1.5275252316519465, 2.6457513110645907},
       {-0.43643578047198484, -0.10910894511799625, 0.5455447255899809, -0.7559289460184544, -0.3779644730092272,
        1.1338934190276815}},
      {2,
       {2.1602468994692865, 3.7416573867739413},
       {-0.6172133998483678, -0.154303349962092, 0.7715167498104596, -1.0690449676496976, -0.5345224838248488,
        1.6035674514745464}},
  };
  for (const Case& c : cases) {
    INFO("correction ", c.c);
    Tensor x = leaf({1, 2, 4, 0, 1, 5}, {2, 3});
    CHECK(tc::diff(weighted_backward(ag::std(x, {1}, c.c)), c.y, kTol) == "");
    CHECK(tc::diff(x.grad(), c.g, 1e-10) == "");
  }
  Tensor x = f64({1, 2, 4, 0, 1, 5}, {2, 3});
  // torch: std(x) -> 1.9407902170679516; std(x, (0, 1), correction=0, keepdim=True) -> [[1.7716909687891083]]
  CHECK(tc::diff(ag::std(x), {1.9407902170679516}, kTol) == "");
  Tensor k = ag::std(x, {0, 1}, 0, true);
  CHECK(k.shape() == Shape{1, 1});
  CHECK(tc::diff(k, {1.7716909687891083}, kTol) == "");
  // torch: std(x, 0, keepdim=True) -> [[0.7071067811865476] * 3]
  CHECK(tc::diff(ag::std(x, {-2}, 1, true), {0.7071067811865476, 0.7071067811865476, 0.7071067811865476}, kTol) == "");
  // torch: var with n - correction <= 0 divides by 0: var([1, 2], 0, correction=2) -> inf
  CHECK(std::isinf(ag::std(f64({1, 2}), {0}, 2).item<double>()));
  CHECK_THROWS_MSG(ag::std(Tensor::from_vector(std::vector<int64_t>{1, 2}, {2})), DTypeError,
                   "std: expected a floating tensor");
}

TEST_CASE("std has a zero gradient where the spread is zero (not NaN)") {
  // torch: x = [[1, 1], [0, 1]]; torch.std(x, 1).sum().backward() -> std [0, .7071..],
  //   grad [[0, 0], [-0.7071.., 0.7071..]]
  Tensor x = leaf({1, 1, 0, 1}, {2, 2});
  Tensor s = ag::std(x, {1});
  CHECK(tc::diff(s, {0, 0.7071067811865476}, kTol) == "");
  s.sum().backward();
  CHECK(tc::diff(x.grad(), {0, 0, -0.7071067811865476, 0.7071067811865476}, kTol) == "");
  // torch: std([2, 2, 2]).backward() -> [0, 0, 0]
  Tensor c = leaf({2, 2, 2});
  ag::std(c).backward();
  CHECK(tc::diff(c.grad(), {0, 0, 0}) == "");
}

TEST_CASE("var_mean and std_mean") {
  // torch: var_mean(x, 1) -> ([2.333.., 7], [2.333.., 2]); std_mean(x, 0, correction=0)
  //   -> ([.5, .5, .5], [.5, 1.5, 4.5]) for x = [[1, 2, 4], [0, 1, 5]]
  Tensor x = f64({1, 2, 4, 0, 1, 5}, {2, 3});
  auto [v, m] = var_mean(x, {1});
  CHECK(tc::diff(v, {7.0 / 3, 7}, kTol) == "");
  CHECK(tc::diff(m, {7.0 / 3, 2}, kTol) == "");
  auto [s, m0] = std_mean(x, {0}, 0);
  CHECK(tc::diff(s, {0.5, 0.5, 0.5}, kTol) == "");
  CHECK(tc::diff(m0, {0.5, 1.5, 4.5}, kTol) == "");
  auto [sk, mk] = std_mean(x, {1}, 1, true);
  CHECK(sk.shape() == Shape{2, 1});
  CHECK(mk.shape() == Shape{2, 1});
}

// ---- any / all -------------------------------------------------------------------------------
TEST_CASE("any / all: 0-d bool tensors, along dims, any dtype, NaN is true, -0 is false") {
  // torch: tensor([0., nan]).any() -> True, .all() -> False; tensor([-0.]).any() -> False
  Tensor a = any(f64({0, kNan}));
  CHECK(a.dtype() == DType::b8);
  CHECK(a.dim() == 0);
  CHECK(a.item<bool>());
  CHECK_FALSE(all(f64({0, kNan})).item<bool>());
  CHECK_FALSE(any(f64({-0.0})).item<bool>());
  // torch: empty -> any False, all True
  CHECK_FALSE(any(zeros({0}, DType::f64)).item<bool>());
  CHECK(all(zeros({0}, DType::f64)).item<bool>());
  // torch: tensor([[1, 0], [2, 3]]).all(1) -> [False, True];
  //        tensor([[1, 0], [0, 0]]).any(0, keepdim=True) -> [[True, False]]
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, 0, 2, 3}, {2, 2});
  CHECK(bits(all(i, 1)) == std::vector<bool>{false, true});
  CHECK(bits(any(i, -1)) == std::vector<bool>{true, true});
  Tensor k = any(Tensor::from_vector(std::vector<int64_t>{1, 0, 0, 0}, {2, 2}), 0, true);
  CHECK(k.shape() == Shape{1, 2});
  CHECK(bits(k) == std::vector<bool>{true, false});
  // bool inputs and a 0-d input
  Tensor b = gt(f64({1, -1, 2, 3}, {2, 2}), 0.0);  // [[T, F], [T, T]]
  CHECK(bits(all(b, 0)) == std::vector<bool>{true, false});
  CHECK(any(b).item<bool>());
  CHECK(all(scalar_tensor(2.0, DType::f64), 0).item<bool>());
  CHECK_THROWS_MSG(any(b, 2), IndexError, "any: dim 2 is out of range");
}

TEST_CASE("float32 inputs keep their dtype through values and gradients") {
  Tensor x = Tensor::from_vector(std::vector<float>{2, 0, 3, 1}, {2, 2}).requires_grad_();
  Tensor y = cumsum(x, 1).sum() + cumprod(x, 0).sum() + logcumsumexp(x, 1).sum() + prod(x, 1).sum() +
             amax(x, {0}).sum() + ag::std(x, {1}).sum() + sort(x, 0, true).first.sum() + topk(x, 1).first.sum();
  // torch 1.13 (float32, same expression): y = 50.08228302, x.grad = [[10.58790398, 5.41209602],
  //   [10.58790398, 5.41209650]]
  CHECK(y.dtype() == DType::f32);
  CHECK(tc::diff(y, {50.08228302}, 1e-6) == "");
  y.backward();
  CHECK(x.grad().dtype() == DType::f32);
  CHECK(tc::diff(x.grad(), {10.58790398, 5.41209602, 10.58790398, 5.41209650}, 1e-6) == "");
}

TEST_CASE("var of f32 accumulates in f64, as PyTorch: equal values near 2e30 give 0, not inf") {
  // The f32 mean is off by ~1e23 there; its square overflowed f32 (op fuzzer, regress-var-f32-overflow).
  ag::Tensor x = ag::Tensor::from_vector(std::vector<float>{2e30f, 2e30f, 2e30f});
  CHECK(ag::var(x).item<float>() == 0.0f);
  CHECK(ag::var(x).dtype() == ag::DType::f32);
}
