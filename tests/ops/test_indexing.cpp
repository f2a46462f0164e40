// scatter, scatter_add, index_add, masked_select, masked_scatter and one_hot: values and
// gradients by hand and from PyTorch 1.13 (literals; the tests never call Python), special
// values, error types and messages, and backward closures that are themselves recorded.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <functional>
#include <string>
#include <limits>
#include <vector>

#include "tensor_checks.h"

using namespace ag;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor bools(const std::vector<int64_t>& v, const Shape& s) { return ne(i64(v, s), 0.0); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }
Tensor iota(int64_t n, const Shape& s, double start = 0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[size_t(k)] = start + double(k);
  return f64(v, s);
}
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Calls y's backward closure on a g that requires grad: a closure made of differentiable
// ops returns gradients that are recorded (so double backward can run through them).
std::vector<Tensor> closure_grads(const Tensor& y) {
  REQUIRE(y.grad_fn());
  Tensor g = ones_like(y).requires_grad_();
  std::vector<bool> need(y.grad_fn()->inputs.size(), true);
  return y.grad_fn()->backward(g, NeedsGrad(need));
}

}  // namespace

TEST_CASE("scatter: values and gradients (torch 1.13)") {
  // torch.scatter(zeros(3, 4), 0, [[0,1,2,0],[2,0,0,1]], [[1..4],[5..8]]); backward with
  // g = arange(12).view(3, 4): x.grad is g zeroed where written, src.grad = g.gather(0, index).
  Tensor x = zeros({3, 4}, DType::f64).requires_grad_();
  Tensor src = iota(8, {2, 4}, 1).requires_grad_();
  Tensor index = i64({0, 1, 2, 0, 2, 0, 0, 1}, {2, 4});
  Tensor y = scatter(x, 0, index, src);
  CHECK(tc::diff(y, {1, 6, 7, 4, 0, 2, 0, 8, 5, 0, 3, 0}) == "");
  y.backward(iota(12, {3, 4}));
  CHECK(tc::diff(x.grad(), {0, 0, 0, 0, 4, 0, 6, 0, 0, 9, 0, 11}) == "");
  CHECK(tc::diff(src.grad(), {0, 5, 10, 3, 8, 1, 2, 7}) == "");
}

TEST_CASE("scatter: value form, src larger than index, repeats, special values, empty") {
  // torch.scatter(zeros(3, 4), 1, [[0],[3],[1]], 2.5)
  Tensor y = scatter(zeros({3, 4}, DType::f64), 1, i64({0, 3, 1}, {3, 1}), 2.5);
  CHECK(tc::diff(y, {2.5, 0, 0, 0, 0, 0, 0, 2.5, 0, 2.5, 0, 0}) == "");
  // src (2, 3) but index (2, 1): only src's first column is read; the rest gets zero
  // gradient (PyTorch 1.13 errors in backward here instead).
  Tensor src = iota(6, {2, 3}, 1).requires_grad_();
  Tensor z = scatter(zeros({2, 2}, DType::f64), 1, i64({1, 0}, {2, 1}), src);
  CHECK(tc::diff(z, {0, 1, 4, 0}) == "");
  z.backward(f64({10, 20, 30, 40}, {2, 2}));
  CHECK(tc::diff(src.grad(), {20, 0, 0, 30, 0, 0}) == "");
  // Repeated indices are undefined in PyTorch; the last in row-major order wins here, as
  // on PyTorch's CPU: torch.scatter(zeros(4), 0, [1,1,1,3], [1,2,3,4]) = [0, 3, 0, 4].
  CHECK(tc::diff(scatter(zeros({4}, DType::f64), 0, i64({1, 1, 1, 3}, {4}), f64({1, 2, 3, 4}, {4})), {0, 3, 0, 4}) ==
        "");
  // torch.scatter([nan, 1, -inf], 0, [0], [-0.]) = [-0., 1., -inf]
  Tensor s = scatter(f64({kNaN, 1, -kInf}, {3}), 0, i64({0}, {1}), f64({-0.0}, {1}));
  CHECK(tc::diff(s, {0.0, 1, -kInf}) == "");
  CHECK(std::signbit(s.to_vector<double>()[0]));
  // An empty index leaves x as it is.
  CHECK(tc::diff(scatter(ones({2, 3}, DType::f64), 1, zeros({2, 0}, DType::i64), ones({2, 0}, DType::f64)),
                 std::vector<double>(6, 1.0)) == "");
  // 0-d: torch.scatter(tensor(1.), 0, tensor(0), tensor(5.)) = 5
  CHECK(scatter(f64({1}, {}), 0, i64({0}, {}), f64({5}, {})).item<double>() == 5.0);
  // Integer tensors scatter too (no gradient).
  CHECK(scatter(zeros({3}, DType::i64), 0, i64({2}, {1}), 7.0).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 7});
}

TEST_CASE("scatter_add: repeated indices add up (torch 1.13)") {
  // torch.scatter_add(zeros(3, 4), 0, [[0,0,2,0],[0,1,2,2]], [[1..4],[5..8]])
  Tensor x = zeros({3, 4}, DType::f64).requires_grad_();
  Tensor src = iota(8, {2, 4}, 1).requires_grad_();
  Tensor y = scatter_add(x, 0, i64({0, 0, 2, 0, 0, 1, 2, 2}, {2, 4}), src);
  CHECK(tc::diff(y, {6, 2, 0, 4, 0, 6, 0, 0, 0, 0, 10, 8}) == "");
  y.backward(iota(12, {3, 4}));
  CHECK(tc::diff(x.grad(), iota(12, {3, 4})) == "");
  CHECK(tc::diff(src.grad(), {0, 1, 10, 3, 0, 5, 10, 11}) == "");
}

TEST_CASE("index_add: alpha and repeated indices (torch 1.13)") {
  // torch.index_add(ones(3, 4), 1, [3, 0], [[1,2],[3,4],[5,6]], alpha=0.5)
  Tensor x = ones({3, 4}, DType::f64).requires_grad_();
  Tensor src = iota(6, {3, 2}, 1).requires_grad_();
  Tensor y = index_add(x, 1, i64({3, 0}, {2}), src, 0.5);
  CHECK(tc::diff(y, {2, 1, 1, 1.5, 3, 1, 1, 2.5, 4, 1, 1, 3.5}) == "");
  y.backward(iota(12, {3, 4}));
  CHECK(tc::diff(x.grad(), iota(12, {3, 4})) == "");
  CHECK(tc::diff(src.grad(), {1.5, 0, 3.5, 2, 5.5, 4}) == "");
  // alpha = -2, both columns into column 3: 1 - 2 (1 + 2) = -5, 1 - 2 (3 + 4) = -13, ...
  CHECK(tc::diff(index_add(ones({3, 4}, DType::f64), 1, i64({3, 3}, {2}), iota(6, {3, 2}, 1), -2.0),
                 {1, 1, 1, -5, 1, 1, 1, -13, 1, 1, 1, -21}) == "");
  // i32 indices, and 0-d: torch.index_add(tensor(1.), 0, [0], tensor(5.)) = 6
  CHECK(tc::diff(index_add(zeros({3}, DType::f64), 0, i64({2, 2}, {2}).to(DType::i32), f64({1, 2}, {2})), {0, 0, 3}) ==
        "");
  CHECK(index_add(f64({1}, {}), 0, i64({0}, {1}), f64({5}, {})).item<double>() == 6.0);
}

TEST_CASE("masked_select: broadcasting and gradient (torch 1.13)") {
  // torch.masked_select([[1],[2],[3]], [T, F, T, T]) -> [1,1,1,2,2,2,3,3,3]
  Tensor x = leaf({1, 2, 3}, {3, 1});
  Tensor y = masked_select(x, bools({1, 0, 1, 1}, {4}));
  CHECK(y.shape() == Shape{9});
  CHECK(tc::diff(y, {1, 1, 1, 2, 2, 2, 3, 3, 3}) == "");
  y.backward(iota(9, {9}));  // each row of x sums its three selected slots
  CHECK(tc::diff(x.grad(), {3, 12, 21}) == "");
  // -0, NaN and inf pass through: torch gives [-0., nan, inf]
  Tensor s = masked_select(f64({-0.0, kNaN, kInf, 1}, {4}), bools({1, 1, 1, 0}, {4}));
  CHECK(tc::diff(s, {-0.0, kNaN, kInf}) == "");
  CHECK(std::signbit(s.to_vector<double>()[0]));
  // No true: an empty 1-D result; a 0-d x with a 0-d mask.
  CHECK(masked_select(ones({2, 2}, DType::f64), bools({0}, {1})).shape() == Shape{0});
  CHECK(tc::diff(masked_select(f64({4}, {}), bools({1}, {})), {4}) == "");
}

TEST_CASE("masked_scatter: row-major source, broadcasting and gradients (torch 1.13)") {
  // torch.masked_scatter(arange(3.), [[T,F,T],[F,T,T]], arange(6.).view(2,3) + 10)
  Tensor x = iota(3, {3}).requires_grad_();
  Tensor src = iota(6, {2, 3}, 10).requires_grad_();
  Tensor y = masked_scatter(x, bools({1, 0, 1, 0, 1, 1}, {2, 3}), src);
  CHECK(tc::diff(y, {10, 1, 11, 0, 12, 13}) == "");
  y.backward(iota(6, {2, 3}, 1));
  CHECK(tc::diff(x.grad(), {4, 2, 0}) == "");             // g where the mask is false, summed over rows
  CHECK(tc::diff(src.grad(), {1, 3, 5, 6, 0, 0}) == "");  // g's masked elements, then zeros
}

TEST_CASE("one_hot: values, inferred classes, empty and 0-d (torch 1.13)") {
  // F.one_hot([[0,2],[1,0]]) -> 3 classes
  Tensor h = one_hot(i64({0, 2, 1, 0}, {2, 2}));
  CHECK(h.dtype() == DType::i64);
  CHECK(h.shape() == Shape{2, 2, 3});
  CHECK(h.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0});
  CHECK(one_hot(i64({0, 2}, {2}), 4).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 0, 0, 0, 1, 0});
  CHECK(one_hot(i64({2}, {}), -1).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 1});  // 0-d -> [3]
  CHECK(one_hot(zeros({0}, DType::i64), 3).shape() == Shape{0, 3});
}

TEST_CASE("scatter family: errors name the op, the index and the sizes") {
  Tensor x = zeros({3, 4}, DType::f64);
  // PyTorch: "index -1 is out of bounds for dimension 0 with size 3" (no wrapping).
  CHECK_THROWS_MSG(scatter(x, 0, i64({-1, 0, 0, 0}, {1, 4}), ones({1, 4}, DType::f64)), IndexError,
                   "scatter: index -1 is out of bounds for dimension 0 with size 3");
  CHECK_THROWS_MSG(scatter(x, 1, i64({0, 4}, {1, 2}), 1.0), IndexError,
                   "scatter: index 4 is out of bounds for dimension 1 with size 4");
  CHECK_THROWS_MSG(scatter_add(x, 0, i64({3, 0, 0, 0}, {1, 4}), ones({1, 4}, DType::f64)), IndexError,
                   "scatter_add: index 3 is out of bounds for dimension 0 with size 3");
  CHECK_THROWS_MSG(index_add(x, 0, i64({-1}, {1}), ones({1, 4}, DType::f64)), IndexError,
                   "index_add: index -1 is out of bounds for dimension 0 with size 3");
  CHECK_THROWS_MSG(index_add(x, 1, i64({0, 4}, {2}), ones({3, 2}, DType::f64)), IndexError,
                   "index_add: index 4 is out of bounds for dimension 1 with size 4");
  // Shapes and dtypes.
  CHECK_THROWS_MSG(scatter(x, 0, i64({0, 0}, {2}), ones({1, 4}, DType::f64)), ShapeError,
                   "scatter: index shape [2] must have as many dims as the input shape [3, 4]");
  CHECK_THROWS_MSG(scatter(x, 0, zeros({1, 5}, DType::i64), ones({1, 5}, DType::f64)), ShapeError,
                   "scatter: expected index [1, 5] to be no larger than the input [3, 4] apart from dim 0");
  CHECK_THROWS_MSG(scatter(x, 0, zeros({1, 4}, DType::i64), ones({1, 3}, DType::f64)), ShapeError,
                   "scatter: expected index [1, 4] to be no larger than src [1, 3]");
  CHECK_THROWS_MSG(scatter(x, 0, zeros({1, 4}, DType::i32), ones({1, 4}, DType::f64)), DTypeError,
                   "scatter: index must be i64, got i32");
  CHECK_THROWS_MSG(scatter(x, 0, zeros({1, 4}, DType::i64), ones({1, 4}, DType::f32)), DTypeError,
                   "scatter: src dtype f32 differs from the input dtype f64");
  CHECK_THROWS_MSG(scatter(x, 2, zeros({1, 4}, DType::i64), 1.0), IndexError, "scatter: dim 2 is out of range");
  CHECK_THROWS_MSG(index_add(x, 0, i64({1, 2}, {2}), ones({1, 4}, DType::f64)), ShapeError,
                   "index_add: 2 indices given for source.size(0) = 1");
  CHECK_THROWS_MSG(index_add(x, 0, i64({1}, {1}), ones({1, 3}, DType::f64)), ShapeError,
                   "index_add: source shape [1, 3] must match the input shape [3, 4] apart from dim 0");
  CHECK_THROWS_MSG(index_add(x, 0, i64({1}, {1, 1}), ones({1, 4}, DType::f64)), ShapeError,
                   "index_add: index must be 1-D, got shape [1, 1]");
  CHECK_THROWS_MSG(index_add(x, 0, i64({1}, {1}), ones({4}, DType::f64)), ShapeError,
                   "index_add: source shape [4] must have as many dims as the input shape [3, 4]");
  // masked ops
  CHECK_THROWS_MSG(masked_select(x, i64({1, 0, 1, 0}, {4})), DTypeError,
                   "masked_select: mask must be b8 (bool), got i64");
  CHECK_THROWS_AS(masked_select(x, bools({1, 0}, {2})), ShapeError);
  CHECK_THROWS_MSG(masked_scatter(zeros({2, 3}, DType::f64), bools({1, 0, 1, 0, 1, 1}, {2, 3}), ones({3}, DType::f64)),
                   ShapeError, "masked_scatter: source shape [3] has 3 elements, fewer than the 4 true");
  CHECK_THROWS_MSG(masked_scatter(zeros({3}, DType::f64), bools({1, 0, 1}, {3}), ones({3}, DType::f32)), DTypeError,
                   "masked_scatter: source dtype f32 differs from the input dtype f64");
  // one_hot: PyTorch's "Class values must be non-negative." / "... smaller than num_classes."
  CHECK_THROWS_MSG(one_hot(i64({0, -1}, {2}), 4), IndexError, "one_hot: class value -1 is negative");
  CHECK_THROWS_MSG(one_hot(i64({0, 4}, {2}), 4), IndexError, "one_hot: class value 4 is out of range for 4 classes");
  CHECK_THROWS_MSG(one_hot(i64({0}, {1}), 0), IndexError, "one_hot: class value 0 is out of range for 0 classes");
  CHECK_THROWS_MSG(one_hot(i64({0, 2}, {2}).to(DType::i32)), DTypeError, "one_hot: indices must be i64, got i32");
  CHECK_THROWS_MSG(one_hot(zeros({0}, DType::i64)), ValueError,
                   "one_hot: cannot infer the number of classes from an empty tensor");
  CHECK_THROWS_MSG(one_hot(i64({0}, {1}), -2), ValueError, "one_hot: num_classes must be -1");
}

TEST_CASE("scatter family: backward closures are recorded ops (double backward ready)") {
  Tensor x = iota(12, {3, 4}).requires_grad_();
  Tensor s = iota(8, {2, 4}).requires_grad_();
  Tensor idx = i64({0, 1, 2, 0, 2, 0, 0, 1}, {2, 4});
  Tensor m = bools({1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0}, {3, 4});
  for (const Tensor& y : {scatter(x, 0, idx, s), scatter(x, 1, i64({3}, {1, 1}), 2.0), scatter_add(x, 0, idx, s),
                          index_add(x, 0, i64({2, 0}, {2}), s, 2.0), masked_select(x, m), masked_scatter(x, m, s)}) {
    INFO("op: ", y.grad_fn()->name);
    for (const Tensor& g : closure_grads(y))
      if (g.defined()) CHECK(g.requires_grad());
  }
}

TEST_CASE("index_select and gather backwards: recorded, repeated indices accumulate") {
  // x = [0, 1, 2, 3]; ids [3, 0, 3].
  Tensor x = iota(4, {4}).requires_grad_();
  Tensor y = index_select(x, 0, i64({3, 0, 3}, {3}));
  CHECK(tc::diff(y, {3, 0, 3}) == "");
  y.backward(f64({1, 2, 4}, {3}));
  CHECK(tc::diff(x.grad(), {2, 0, 0, 5}) == "");
  Tensor z = iota(6, {2, 3}).requires_grad_();
  Tensor w = gather(z, 1, i64({2, 0, 1, 0}, {2, 2}));
  CHECK(tc::diff(w, {2, 0, 4, 3}) == "");
  w.backward(f64({1, 2, 4, 8}, {2, 2}));
  CHECK(tc::diff(z.grad(), {2, 0, 1, 8, 4, 0}) == "");
  for (const Tensor& t : {index_select(x, 0, i64({1}, {1})), gather(z, 0, i64({1, 0}, {1, 2}))})
    CHECK(closure_grads(t)[0].requires_grad());
}

TEST_CASE("every index op: a negative or too large index is an IndexError naming op, index and size") {
  // One rule, as PyTorch: indices are never wrapped (gather and index_select used to wrap
  // -1 silently, issue 23). x (3, 4); the bad index goes along dim 0 (size 3).
  struct Row {
    const char* op;
    std::function<Tensor(int64_t)> call;  // the op with one bad index value
    int64_t size;
  };
  Tensor x = iota(12, {3, 4}), w = iota(12, {3, 4}), logits = iota(8, {2, 4});
  const std::vector<Row> table{
      {"index_select",
       [&](int64_t i) {
         return index_select(x, 0, i64({0, i}, {2}));
       },
       3},
      {"gather",
       [&](int64_t i) {
         return gather(x, 0, i64({0, i, 0, 0}, {1, 4}));
       },
       3},
      {"scatter",
       [&](int64_t i) {
         return scatter(x, 0, i64({i, 0, 0, 0}, {1, 4}), ones({1, 4}, DType::f64));
       },
       3},
      {"scatter",
       [&](int64_t i) {
         return scatter(x, 0, i64({i}, {1, 1}), 2.0);
       },
       3},
      {"scatter_add",
       [&](int64_t i) {
         return scatter_add(x, 0, i64({0, i, 0, 0}, {1, 4}), ones({1, 4}, DType::f64));
       },
       3},
      {"index_add",
       [&](int64_t i) {
         return index_add(x, 0, i64({i}, {1}), ones({1, 4}, DType::f64));
       },
       3},
      {"embedding",
       [&](int64_t i) {
         return embedding(i64({1, i}, {2}), w);
       },
       3},
      {"nll_loss",
       [&](int64_t i) {
         return nll_loss(logits, i64({0, i}, {2}));
       },
       4},
      {"cross_entropy",
       [&](int64_t i) {
         return cross_entropy(logits, i64({i, 0}, {2}));
       },
       4},
      {"one_hot",
       [&](int64_t i) {
         return one_hot(i64({0, i}, {2}), 3);
       },
       3},
  };
  for (const Row& r : table)
    for (int64_t bad : {int64_t(-1), r.size}) {
      INFO(std::string(r.op), " with index ", bad);
      CHECK_THROWS_AS(r.call(bad), IndexError);
      try {
        r.call(bad);
      } catch (const IndexError& e) {
        const std::string m = e.what();
        CHECK(m.rfind(std::string(r.op) + ":", 0) == 0);  // starts with the op's own name
        CHECK(m.find(std::to_string(bad)) != std::string::npos);
        CHECK(m.find(std::to_string(r.size)) != std::string::npos);
      }
    }
  // The PyTorch wording for the two that used to wrap.
  CHECK_THROWS_WITH_AS(index_select(x, 0, i64({-1}, {1})),
                       "index_select: index -1 is out of bounds for dimension 0 with size 3", IndexError);
  CHECK_THROWS_WITH_AS(gather(x, 1, i64({-1}, {1, 1})), "gather: index -1 is out of bounds for dimension 1 with size 4",
                       IndexError);
  // ignore_index is the one target outside [0, C) that the losses take (here -100).
  CHECK(std::isfinite(nll_loss(logits, i64({-100, 1}, {2})).item<double>()));
  CHECK_THROWS_AS(nll_loss(logits, i64({-100, 1}, {2}), /*ignore_index=*/-1), IndexError);
}

TEST_CASE("index_select and gather of a 0-d input (found by tests/fuzz/fuzz_ops)") {
  // A 0-d tensor is one element along dim 0, as in PyTorch: one index (0) gives x
  // back, 0-d; the gradient is 1. (The kernels used to read x's size along dim, which a
  // 0-d tensor does not have, and return uninitialized memory.)
  Tensor x = Tensor::from_vector(std::vector<double>{2.5}, Shape{});
  x.requires_grad_();
  Tensor y = index_select(x, 0, i64({0}, {1}));
  CHECK(y.shape() == Shape{});
  CHECK(y.item<double>() == 2.5);
  y.backward();
  CHECK(x.grad().item<double>() == 1.0);
  CHECK(index_select(x.detach(), -1, i64({0}, {})).item<double>() == 2.5);
  CHECK_THROWS_MSG(index_select(x.detach(), 0, i64({-1}, {})), IndexError, "index -1 is out of bounds");
  Tensor n = Tensor::from_vector(std::vector<int32_t>{7}, Shape{});
  CHECK(index_select(n, 0, i64({0}, {1})).item<int64_t>() == 7);
  CHECK_THROWS_MSG(index_select(x, 0, i64({0, 0}, {2})), IndexError, "a 0-d input takes exactly one index, got 2");
  CHECK_THROWS_MSG(index_select(x, 0, i64({1}, {1})), IndexError,
                   "index 1 is out of bounds for dimension 0 with size 1");
  CHECK_THROWS_MSG(index_select(x, 1, i64({0}, {1})), IndexError, "index_select");

  CHECK(gather(x.detach(), 0, i64({0}, {})).item<double>() == 2.5);
  CHECK_THROWS_MSG(gather(x, 0, i64({0}, {1})), ShapeError, "must have as many dims as the input shape []");
}
