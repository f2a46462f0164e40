// Joining and indexing: cat, stack, split, chunk, index_select, gather, embedding.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_vector(v); }

}  // namespace

// ---- cat / stack ----------------------------------------------------------------------

TEST_CASE("cat: along dim 0, dim 1 and a negative dim") {
  Tensor a = tc::iota(6).view({2, 3});
  Tensor b = Tensor::from_vector(std::vector<float>{10, 11, 12}, {1, 3});
  Tensor c0 = ag::cat({a, b}, 0);
  CHECK(str(c0.shape()) == "[3, 3]");
  CHECK(diff(c0, {0, 1, 2, 3, 4, 5, 10, 11, 12}) == "");
  CHECK_FALSE(c0.shares_storage(a));

  Tensor d = Tensor::from_vector(std::vector<float>{20, 21}, {2, 1});
  Tensor c1 = ag::cat({d, a, d}, -1);
  CHECK(str(c1.shape()) == "[2, 5]");
  CHECK(diff(c1, {20, 0, 1, 2, 20, 21, 3, 4, 5, 21}) == "");
  CHECK(diff(ag::cat({a}, 1), a) == "");
}

TEST_CASE("cat: non-contiguous inputs and integer / bool dtypes") {
  Tensor a = tc::iota(6).view({2, 3}).t();             // [3, 2]: [[0, 3], [1, 4], [2, 5]]
  Tensor b = tc::iota(6).view({3, 2}).slice(1, 1, 2);  // [3, 1]: 1, 3, 5
  CHECK(diff(ag::cat({a, b}, 1), {0, 3, 1, 1, 4, 3, 2, 5, 5}) == "");
  Tensor i = ag::cat({i64({1, 2}), i64({3})});
  CHECK(i.dtype() == DType::i64);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});
  Tensor bb = ag::cat({Tensor::from_vector(std::vector<bool>{true}), Tensor::from_vector(std::vector<bool>{false})});
  CHECK(bb.dtype() == DType::b8);
  CHECK(bb.to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("cat: errors on mismatched shapes and dtypes") {
  Tensor a = ag::zeros({2, 3});
  CHECK_THROWS_MSG(ag::cat({a, ag::zeros({2, 4})}, 0), ag::ShapeError,
                   "cat: shapes [2, 3] and [2, 4] (tensor 1) differ outside dim 0");
  CHECK_THROWS_MSG(ag::cat({a, a, ag::zeros({3})}, 0), ag::ShapeError, "cat: shapes [2, 3] and [3] (tensor 2)");
  CHECK_THROWS_MSG(ag::cat({a, ag::zeros({2, 3}, DType::f64)}), ag::DTypeError,
                   "cat: tensor 1 has dtype f64, tensor 0 has f32");
  CHECK_THROWS_MSG(ag::cat({}), ag::ValueError, "cat: needs at least one tensor");
  CHECK_THROWS_MSG(ag::cat({ag::scalar_tensor(1.0), ag::scalar_tensor(2.0)}), ag::ShapeError,
                   "cat: zero-dimensional tensors cannot be concatenated");
  CHECK_THROWS_MSG(ag::cat({a, a}, 2), ag::IndexError, "cat: dim 2 is out of range");
}

TEST_CASE("stack: adds a new dim at any position") {
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2});
  Tensor b = Tensor::from_vector(std::vector<float>{3, 4});
  Tensor c = Tensor::from_vector(std::vector<float>{5, 6});
  Tensor s0 = ag::stack({a, b, c});
  CHECK(str(s0.shape()) == "[3, 2]");
  CHECK(diff(s0, {1, 2, 3, 4, 5, 6}) == "");
  Tensor s1 = ag::stack({a, b, c}, 1);
  CHECK(str(s1.shape()) == "[2, 3]");
  CHECK(diff(s1, {1, 3, 5, 2, 4, 6}) == "");
  CHECK(diff(ag::stack({a, b, c}, -1), s1) == "");
  CHECK(str(ag::stack({ag::scalar_tensor(1.0), ag::scalar_tensor(2.0)}).shape()) == "[2]");
  CHECK_THROWS_MSG(ag::stack({a, ag::zeros({3})}), ag::ShapeError, "stack: tensor 1 has shape [3], tensor 0 has [2]");
  CHECK_THROWS_MSG(ag::stack({}), ag::ValueError, "stack: needs at least one tensor");
  CHECK_THROWS_MSG(ag::stack({a, b}, 2), ag::IndexError, "stack: dim 2 is out of range");
}

// ---- split / chunk --------------------------------------------------------------------

TEST_CASE("split: by size and by sizes; the parts are views") {
  Tensor x = tc::iota(10).view({5, 2});
  std::vector<Tensor> p = ag::split(x, 2);
  REQUIRE(p.size() == 3);
  CHECK(str(p[0].shape()) == "[2, 2]");
  CHECK(str(p[2].shape()) == "[1, 2]");
  CHECK(p[1].offset() == 4);
  CHECK(p[2].offset() == 8);
  for (const Tensor& t : p) CHECK(t.shares_storage(x));
  CHECK(diff(p[1], {4, 5, 6, 7}) == "");

  std::vector<Tensor> q = ag::split(x, std::vector<int64_t>{1, 4});
  REQUIRE(q.size() == 2);
  CHECK(diff(q[0], {0, 1}) == "");
  CHECK(str(q[1].shape()) == "[4, 2]");

  std::vector<Tensor> cols = ag::split(x, 1, -1);
  REQUIRE(cols.size() == 2);
  CHECK(diff(cols[1], {1, 3, 5, 7, 9}) == "");

  CHECK_THROWS_MSG(ag::split(x, std::vector<int64_t>{1, 3}), ag::ShapeError,
                   "split: sizes add up to 4 but dim 0 of shape [5, 2] has 5");
  CHECK_THROWS_MSG(ag::split(x, 0), ag::ValueError, "split: split_size must be positive, got 0");
}

TEST_CASE("chunk: ceil(n / chunks) per part, as PyTorch") {
  std::vector<Tensor> a = ag::chunk(tc::iota(5), 3);
  REQUIRE(a.size() == 3);
  CHECK(a[0].numel() == 2);
  CHECK(a[1].numel() == 2);
  CHECK(diff(a[2], {4}) == "");
  std::vector<Tensor> b = ag::chunk(tc::iota(6), 4);  // size 2 each: only 3 chunks
  CHECK(b.size() == 3);
  std::vector<Tensor> c = ag::chunk(tc::iota(12).view({2, 6}), 2, 1);
  REQUIRE(c.size() == 2);
  CHECK(diff(c[1], {3, 4, 5, 9, 10, 11}) == "");
  CHECK_THROWS_MSG(ag::chunk(tc::iota(6), 0), ag::ValueError, "chunk: chunks must be positive, got 0");
}

// ---- index_select / gather --------------------------------------------------------------

TEST_CASE("index_select: rows and columns, repeated indices, strided input") {
  Tensor x = tc::iota(12).view({3, 4});
  Tensor r = ag::index_select(x, 0, i64({2, 0, 2}));
  CHECK(str(r.shape()) == "[3, 4]");
  CHECK(diff(r, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}) == "");
  Tensor c = ag::index_select(x, -1, i64({3, 1}));
  CHECK(diff(c, {3, 1, 7, 5, 11, 9}) == "");
  Tensor t = ag::index_select(x.t(), 0, i64({1}));  // row 1 of the transpose = column 1
  CHECK(diff(t, {1, 5, 9}) == "");
  CHECK(ag::index_select(x, 0, i64({})).numel() == 0);
}

TEST_CASE("index_select: errors") {
  Tensor x = ag::zeros({3, 4});
  CHECK_THROWS_MSG(ag::index_select(x, 0, i64({3})), ag::IndexError,
                   "index_select: index 3 is out of bounds for dimension 0 with size 3");
  CHECK_THROWS_MSG(ag::index_select(x, 1, i64({0, -5})), ag::IndexError, "index_select: index -5 is out of bounds");
  CHECK_THROWS_MSG(ag::index_select(x, 0, i64({0, 1}, {1, 2})), ag::ShapeError,
                   "index_select: index must be a 1-D i64 tensor, got shape [1, 2]");
  CHECK_THROWS_MSG(ag::index_select(x, 0, Tensor::from_vector(std::vector<int32_t>{0})), ag::DTypeError,
                   "index_select: index must be a 1-D i64 tensor, got shape [1] i32");
  CHECK_THROWS_MSG(ag::index_select(x, 2, i64({0})), ag::IndexError, "index_select: dim 2 is out of range");
}

TEST_CASE("gather: PyTorch's out[i][j] = x[i][index[i][j]] (dim 1) and x[index[i][j]][j] (dim 0)") {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g1 = ag::gather(x, 1, i64({2, 0, 1, 1}, {2, 2}));
  CHECK(str(g1.shape()) == "[2, 2]");
  CHECK(diff(g1, {3, 1, 5, 5}) == "");
  Tensor g0 = ag::gather(x, 0, i64({1, 0, 1}, {1, 3}));
  CHECK(diff(g0, {4, 2, 6}) == "");
  CHECK(diff(ag::gather(x, -1, i64({2, 0}, {2, 1})), {3, 4}) == "");  // a negative dim
  // a transposed input: xt = [[1, 4], [2, 5], [3, 6]]
  Tensor gt = ag::gather(x.t(), 1, i64({1, 0, 1}, {3, 1}));
  CHECK(diff(gt, {4, 2, 6}) == "");
}

TEST_CASE("gather: errors") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(ag::gather(x, 1, i64({3}, {1, 1})), ag::IndexError,
                   "gather: index 3 is out of bounds for dimension 1 with size 3");
  CHECK_THROWS_MSG(ag::gather(x, 1, Tensor::from_vector(std::vector<int32_t>{0}, {1, 1})), ag::DTypeError,
                   "gather: index must be i64, got i32");
  CHECK_THROWS_MSG(ag::gather(x, 1, i64({0})), ag::ShapeError,
                   "gather: index shape [1] must have as many dims as the input shape [2, 3]");
  CHECK_THROWS_MSG(ag::gather(x, 1, i64({0, 0, 0}, {3, 1})), ag::ShapeError,
                   "gather: index shape [3, 1] is larger than input shape [2, 3] at dim 0");
}

// ---- embedding ------------------------------------------------------------------------

TEST_CASE("embedding: rows of the weight for ids of any shape") {
  Tensor w = tc::iota(15).view({5, 3});  // row r = 3r, 3r+1, 3r+2
  Tensor e = ag::embedding(i64({1, 4, 0, 1}, {2, 2}), w);
  CHECK(str(e.shape()) == "[2, 2, 3]");
  CHECK(diff(e, {3, 4, 5, 12, 13, 14, 0, 1, 2, 3, 4, 5}) == "");
  Tensor e32 = ag::embedding(Tensor::from_vector(std::vector<int32_t>{2}), w);  // i32 ids work too
  CHECK(diff(e32, {6, 7, 8}) == "");
  Tensor wt = tc::iota(15).view({3, 5}).t();  // a transposed weight [5, 3]: row r = r, r+5, r+10
  CHECK(diff(ag::embedding(i64({4, 0}), wt), {4, 9, 14, 0, 5, 10}) == "");
  Tensor scalar_id = ag::embedding(Tensor::from_vector(std::vector<int64_t>{3}, Shape{}), w);
  CHECK(str(scalar_id.shape()) == "[3]");
}

TEST_CASE("embedding: an out-of-range id names the id and the vocabulary size") {
  Tensor w = ag::zeros({5, 3});
  CHECK_THROWS_WITH_AS(ag::embedding(i64({0, 5}), w),
                       "embedding: id 5 is out of range for a vocabulary of 5 rows (weight shape [5, 3])",
                       ag::IndexError);
  CHECK_THROWS_MSG(ag::embedding(i64({-1}), w), ag::IndexError,
                   "embedding: id -1 is out of range for a vocabulary of 5");
  CHECK_THROWS_MSG(ag::embedding(ag::zeros({2}), w), ag::DTypeError, "embedding: ids must be integer (i64), got f32");
  CHECK_THROWS_MSG(ag::embedding(i64({0}), ag::zeros({5})), ag::ShapeError,
                   "embedding: weight must be 2-D (V, E), got shape [5]");
}
