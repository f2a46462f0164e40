// Reductions against PyTorch 1.13 at the cases the op table cannot reach by central
// differences: ties, NaN, zeros, empty dims; std / var, any / all, f32. Expected values are
// literals printed by torch 1.13 (CPU, float64). Scans and sorting: test_reduction/scans_sort.cpp.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "reduction_test_util.h"
#include "tensor_checks.h"

using namespace ag;
using namespace reduction_test;

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

// ---- prod with zeros -----------------------------------------------------------------
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
