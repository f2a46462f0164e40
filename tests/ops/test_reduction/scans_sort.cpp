// Scans and sorting against PyTorch 1.13 at ties, NaN, zeros and -inf: cumprod, cumsum,
// logcumsumexp, sort, argsort, topk. Expected values are literals printed by torch 1.13
// (CPU, float64) for the expression in each comment. Part of the test_reduction program.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "../reduction_test_util.h"
#include "tensor_checks.h"

using namespace ag;
using namespace reduction_test;

// ---- scans ---------------------------------------------------------------------------------
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
