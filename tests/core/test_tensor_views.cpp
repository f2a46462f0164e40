// Views: storage sharing, strides and offsets after each view op, reshape vs view,
// contiguous(), and the error messages of the shape ops.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <vector>

#include "tensor_checks.h"

using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

// [2, 3, 4] f32 holding 0..23, so element (i, j, k) is 12 i + 4 j + k.
Tensor base234() { return tc::iota(24).reshape({2, 3, 4}); }

}  // namespace

// ---- sharing and writes -------------------------------------------------------------

TEST_CASE("views: a write through a view shows in the base, and the reverse") {
  Tensor base = tc::iota(12);
  Tensor v = base.view({3, 4});
  CHECK(v.shares_storage(base));

  // data<float>() of a view points at its first element
  Tensor row1 = v.select(0, 1);  // elements 4..7
  row1.data<float>()[2] = 100.0f;
  CHECK(base.to_vector<float>()[6] == 100.0f);

  // fill_ on a strided view (column 3) writes base elements 3, 7, 11
  v.select(1, 3).fill_(-1.0);
  CHECK(diff(base, {0, 1, 2, -1, 4, 5, 100, -1, 8, 9, 10, -1}) == "");

  // copy_ into the base is seen by the (transposed) view
  Tensor vt = v.t();  // [4, 3]
  base.copy_(Tensor::from_vector(std::vector<float>(12, 7.0f)));
  CHECK(diff(vt, std::vector<double>(12, 7.0)) == "");

  // copy_ into a transposed view lands in the transposed places of the base
  vt.copy_(Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}));
  // base(i, j) = vt(j, i) = 3 j + i
  CHECK(diff(base, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}) == "");
}

TEST_CASE("views: copy_ broadcasts the source into a view") {
  Tensor base = ag::zeros({3, 4});
  base.narrow(1, 1, 2).copy_(Tensor::from_vector(std::vector<float>{5, 6}));  // [2] -> [3, 2]
  CHECK(diff(base, {0, 5, 6, 0, 0, 5, 6, 0, 0, 5, 6, 0}) == "");
  CHECK_THROWS_MSG(base.copy_(ag::zeros({3})), ag::ShapeError, "copy_: shapes [3] and [3, 4]");
}

// ---- layout after each view op ------------------------------------------------------

TEST_CASE("views: reshape of a contiguous tensor is a view with contiguous strides") {
  Tensor x = tc::iota(24);
  Tensor r = x.reshape({2, 3, 4});
  CHECK(r.shares_storage(x));
  CHECK(str(r.shape()) == "[2, 3, 4]");
  CHECK(str(r.strides()) == "[12, 4, 1]");
  CHECK(r.offset() == 0);
  CHECK(r.is_contiguous());

  Tensor inferred = r.reshape({4, -1});  // -1 -> 6
  CHECK(str(inferred.shape()) == "[4, 6]");
  CHECK(str(inferred.strides()) == "[6, 1]");
  CHECK(inferred.shares_storage(x));

  // a view of a row block keeps its offset through reshape
  Tensor rows = x.view({6, 4}).narrow(0, 2, 2);  // elements 8..15, offset 8
  Tensor rr = rows.reshape({8});
  CHECK(rr.offset() == 8);
  CHECK(rr.shares_storage(x));
  CHECK(diff(rr, {8, 9, 10, 11, 12, 13, 14, 15}) == "");
}

TEST_CASE("views: view splits dims of a strided tensor when memory allows") {
  Tensor x = tc::iota(24).view({4, 6});
  Tensor left = x.narrow(1, 0, 3);  // [4, 3] strides [6, 1]: rows are not adjacent
  CHECK_FALSE(left.is_contiguous());
  Tensor split = left.view({2, 2, 3});  // only dim 0 is split: still a view
  CHECK(split.shares_storage(x));
  CHECK(str(split.strides()) == "[12, 6, 1]");
  // (a, b, c) = left(2 a + b, c) = 6 (2 a + b) + c
  CHECK(diff(split, {0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20}) == "");
}

TEST_CASE("views: transpose and t() swap shape and strides, negative dims count from the end") {
  Tensor x = base234();
  Tensor t = x.transpose(0, 2);
  CHECK(t.shares_storage(x));
  CHECK(str(t.shape()) == "[4, 3, 2]");
  CHECK(str(t.strides()) == "[1, 4, 12]");
  CHECK(t.offset() == 0);
  CHECK_FALSE(t.is_contiguous());
  Tensor tn = x.transpose(-1, -3);
  CHECK(str(tn.shape()) == "[4, 3, 2]");
  CHECK(str(tn.strides()) == "[1, 4, 12]");
  // t(k, j, i) = x(i, j, k) = 12 i + 4 j + k
  std::vector<double> want;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) want.push_back(12 * i + 4 * j + k);
  CHECK(diff(t, want) == "");

  Tensor m = tc::iota(6).view({2, 3}).t();
  CHECK(str(m.shape()) == "[3, 2]");
  CHECK(str(m.strides()) == "[1, 3]");
  CHECK(diff(m, {0, 3, 1, 4, 2, 5}) == "");
}

TEST_CASE("views: permute reorders shape and strides") {
  Tensor x = base234();
  Tensor p = x.permute({2, 0, 1});
  CHECK(p.shares_storage(x));
  CHECK(str(p.shape()) == "[4, 2, 3]");
  CHECK(str(p.strides()) == "[1, 12, 4]");
  Tensor pn = x.permute({-1, 0, -2});
  CHECK(str(pn.shape()) == "[4, 2, 3]");
  CHECK(str(pn.strides()) == "[1, 12, 4]");
  // p(k, i, j) = 12 i + 4 j + k
  std::vector<double> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(12 * i + 4 * j + k);
  CHECK(diff(p, want) == "");
}

TEST_CASE("views: unsqueeze inserts a size-1 dim at every position") {
  Tensor x = tc::iota(6).view({2, 3});
  Tensor a = x.unsqueeze(0), b = x.unsqueeze(1), c = x.unsqueeze(2), d = x.unsqueeze(-1), e = x.unsqueeze(-3);
  CHECK(str(a.shape()) == "[1, 2, 3]");
  CHECK(str(a.strides()) == "[6, 3, 1]");
  CHECK(str(b.shape()) == "[2, 1, 3]");
  CHECK(str(b.strides()) == "[3, 3, 1]");
  CHECK(str(c.shape()) == "[2, 3, 1]");
  CHECK(str(c.strides()) == "[3, 1, 1]");
  CHECK(str(d.shape()) == "[2, 3, 1]");
  CHECK(str(e.shape()) == "[1, 2, 3]");
  for (const Tensor& v : {a, b, c, d, e}) {
    CHECK(v.shares_storage(x));
    CHECK(v.is_contiguous());
    CHECK(diff(v, {0, 1, 2, 3, 4, 5}) == "");
  }
  // of a transposed tensor: the new dim's stride spans the dim after it
  Tensor tu = x.t().unsqueeze(1);  // [3, 1, 2]
  CHECK(str(tu.strides()) == "[1, 6, 3]");
  CHECK(diff(tu, {0, 3, 1, 4, 2, 5}) == "");
}

TEST_CASE("views: squeeze removes all size-1 dims, or one dim when it has size 1") {
  Tensor x = tc::iota(6).view({1, 3, 1, 2});
  Tensor all = x.squeeze();
  CHECK(str(all.shape()) == "[3, 2]");
  CHECK(str(all.strides()) == "[2, 1]");
  CHECK(all.shares_storage(x));
  CHECK(str(x.squeeze(0).shape()) == "[3, 1, 2]");
  CHECK(str(x.squeeze(0).strides()) == "[2, 2, 1]");
  CHECK(str(x.squeeze(-2).shape()) == "[1, 3, 2]");
  CHECK(str(x.squeeze(-2).strides()) == "[6, 2, 1]");
  CHECK(str(x.squeeze(1).shape()) == "[1, 3, 1, 2]");  // size 3: unchanged, like PyTorch
  CHECK(ag::scalar_tensor(2.0).squeeze().dim() == 0);
}

TEST_CASE("views: expand gives broadcast dims stride 0 and sees writes to the base") {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3, 1});
  Tensor e = x.expand({2, 3, 4});
  CHECK(e.shares_storage(x));
  CHECK(str(e.shape()) == "[2, 3, 4]");
  CHECK(str(e.strides()) == "[0, 1, 0]");
  CHECK_FALSE(e.is_contiguous());
  Tensor keep = x.expand({2, -1, 4});  // -1 keeps the dim
  CHECK(str(keep.shape()) == "[2, 3, 4]");
  CHECK(str(keep.strides()) == "[0, 1, 0]");

  x.data<float>()[1] = 20.0f;
  std::vector<double> want;
  for (int b = 0; b < 2; ++b)
    for (double v : {1.0, 20.0, 3.0})
      for (int k = 0; k < 4; ++k) want.push_back(v);
  CHECK(diff(e, want) == "");
  CHECK(e.sum().item<float>() == doctest::Approx(2 * 4 * 24.0));
}

TEST_CASE("views: slice with a step, negative and out-of-range bounds") {
  Tensor x = tc::iota(10);
  Tensor s = x.slice(0, 1, 8, 3);
  CHECK(s.shares_storage(x));
  CHECK(str(s.shape()) == "[3]");
  CHECK(str(s.strides()) == "[3]");
  CHECK(s.offset() == 1);
  CHECK(diff(s, {1, 4, 7}) == "");

  Tensor neg = x.slice(0, -4, -1);  // Python's x[-4:-1]
  CHECK(neg.offset() == 6);
  CHECK(diff(neg, {6, 7, 8}) == "");
  CHECK(diff(x.slice(-1, 7, 100), {7, 8, 9}) == "");  // end clamps
  CHECK(diff(x.slice(0, -100, 2), {0, 1}) == "");     // start clamps
  CHECK(x.slice(0, 6, 2).numel() == 0);               // start past end: empty
  CHECK(diff(x.slice(0, 0, 10, 4), {0, 4, 8}) == "");

  Tensor m = tc::iota(15).view({3, 5});
  Tensor cols = m.slice(1, 0, 5, 2);  // [3, 3]
  CHECK(str(cols.strides()) == "[5, 2]");
  CHECK(diff(cols, {0, 2, 4, 5, 7, 9, 10, 12, 14}) == "");
  Tensor rows = m.slice(-2, 1, 3);  // rows 1, 2
  CHECK(rows.offset() == 5);
  CHECK(str(rows.strides()) == "[5, 1]");
  CHECK(rows.is_contiguous());

  cols.fill_(-1.0);  // writes columns 0, 2, 4 of m
  CHECK(diff(m.select(0, 1), {-1, 6, -1, 8, -1}) == "");
}

TEST_CASE("views: select drops a dim and moves the offset") {
  Tensor x = base234();
  Tensor a = x.select(1, 2);
  CHECK(str(a.shape()) == "[2, 4]");
  CHECK(str(a.strides()) == "[12, 1]");
  CHECK(a.offset() == 8);
  CHECK(diff(a, {8, 9, 10, 11, 20, 21, 22, 23}) == "");
  Tensor b = x.select(-1, -1);  // last element of the last dim
  CHECK(str(b.shape()) == "[2, 3]");
  CHECK(str(b.strides()) == "[12, 4]");
  CHECK(b.offset() == 3);
  CHECK(diff(b, {3, 7, 11, 15, 19, 23}) == "");
  Tensor c = x.select(0, 1).select(0, 1);  // x[1][1]
  CHECK(c.offset() == 16);
  CHECK(diff(c, {16, 17, 18, 19}) == "");
  CHECK(c.shares_storage(x));
}

TEST_CASE("views: narrow keeps a range of one dim, with a negative start") {
  Tensor x = tc::iota(20).view({4, 5});
  Tensor a = x.narrow(1, 1, 3);
  CHECK(str(a.shape()) == "[4, 3]");
  CHECK(str(a.strides()) == "[5, 1]");
  CHECK(a.offset() == 1);
  CHECK_FALSE(a.is_contiguous());
  Tensor b = x.narrow(0, -2, 2);  // the last two rows
  CHECK(b.offset() == 10);
  CHECK(b.is_contiguous());
  CHECK(diff(b, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19}) == "");
  Tensor c = x.narrow(-1, 4, 1);
  CHECK(diff(c, {4, 9, 14, 19}) == "");
}

TEST_CASE("views: flatten merges a range of dims") {
  Tensor x = base234();
  CHECK(str(x.flatten().shape()) == "[24]");
  CHECK(x.flatten().shares_storage(x));
  CHECK(str(x.flatten(1).shape()) == "[2, 12]");
  CHECK(str(x.flatten(0, 1).shape()) == "[6, 4]");
  CHECK(str(x.flatten(0, 1).strides()) == "[4, 1]");
  CHECK(str(x.flatten(-2, -1).shape()) == "[2, 12]");
  CHECK(str(x.flatten(1, 1).shape()) == "[2, 3, 4]");
  CHECK(str(ag::scalar_tensor(1.0).flatten().shape()) == "[1]");

  Tensor t = x.transpose(0, 1).flatten(0, 1);  // [6, 4] but not viewable: a copy
  CHECK_FALSE(t.shares_storage(x));
  // rows of t: x[0][0], x[1][0], x[0][1], x[1][1], ...
  CHECK(diff(t.select(1, 0), {0, 12, 4, 16, 8, 20}) == "");
}

// ---- reshape vs view on non-contiguous input; contiguous() --------------------------

TEST_CASE("views: reshape of a non-contiguous tensor copies, view refuses") {
  Tensor base = tc::iota(6).view({2, 3});
  Tensor t = base.t();  // [3, 2] strides [1, 3]
  Tensor r = t.reshape({6});
  CHECK_FALSE(r.shares_storage(base));
  CHECK(r.is_contiguous());
  CHECK(diff(r, {0, 3, 1, 4, 2, 5}) == "");
  r.fill_(9.0);  // the copy is independent
  CHECK(diff(base, {0, 1, 2, 3, 4, 5}) == "");

  CHECK_THROWS_MSG(t.view({6}), ag::ShapeError,
                   "view: shape [6] is not compatible with input shape [3, 2] and strides [1, 3]; "
                   "use reshape");
  CHECK_THROWS_MSG(base.slice(1, 0, 3, 2).view({4}), ag::ShapeError,
                   "view: shape [4] is not compatible with input shape [2, 2] and strides [3, 2]");
}

TEST_CASE("views: contiguous() returns the same tensor when contiguous, a copy otherwise") {
  Tensor x = tc::iota(6).view({2, 3});
  Tensor same = x.contiguous();
  CHECK(same.impl() == x.impl());
  CHECK(same.shares_storage(x));

  Tensor t = x.t();
  Tensor c = t.contiguous();
  CHECK_FALSE(c.shares_storage(x));
  CHECK(c.is_contiguous());
  CHECK(str(c.strides()) == "[2, 1]");
  CHECK(c.offset() == 0);
  CHECK(diff(c, {0, 3, 1, 4, 2, 5}) == "");

  Tensor cl = x.clone();  // clone always copies
  CHECK_FALSE(cl.shares_storage(x));
  CHECK(diff(cl, x) == "");
}

TEST_CASE("views: is_contiguous") {
  Tensor x = tc::iota(24).view({2, 3, 4});
  CHECK(x.is_contiguous());
  CHECK_FALSE(x.transpose(1, 2).is_contiguous());
  CHECK(x.transpose(1, 2).transpose(1, 2).is_contiguous());
  CHECK_FALSE(x.slice(2, 0, 4, 2).is_contiguous());
  CHECK_FALSE(x.narrow(2, 0, 2).is_contiguous());
  CHECK(x.narrow(0, 1, 1).is_contiguous());  // a block of whole rows
  CHECK(x.select(0, 1).is_contiguous());
  CHECK_FALSE(x.select(2, 0).is_contiguous());
  CHECK(x.unsqueeze(1).is_contiguous());
  CHECK_FALSE(ag::ones({3, 1}).expand({3, 2}).is_contiguous());
  CHECK(ag::ones({1, 3}).expand({1, 3}).is_contiguous());
  CHECK(ag::zeros({0, 3}).is_contiguous());
  CHECK(ag::scalar_tensor(1.0).is_contiguous());
}

TEST_CASE("views: views of views compose offsets and strides") {
  Tensor x = base234();
  Tensor v = x.transpose(0, 2).slice(0, 1, 4, 2).select(1, 2);  // [2 (k=1,3), 2 (i)]
  CHECK(str(v.shape()) == "[2, 2]");
  CHECK(str(v.strides()) == "[2, 12]");
  CHECK(v.offset() == 1 + 8);
  // v(a, i) = x(i, 2, 1 + 2 a) = 12 i + 8 + 1 + 2 a
  CHECK(diff(v, {9, 21, 11, 23}) == "");
}

// ---- errors of the shape ops --------------------------------------------------------

TEST_CASE("views: reshape and view reject bad sizes") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(x.reshape({4}), ag::ShapeError,
                   "reshape: shape [4] is invalid for input of shape [2, 3] (6 elements)");
  CHECK_THROWS_MSG(x.reshape({4, -1}), ag::ShapeError,
                   "reshape: shape [4, -1] is invalid for input of shape [2, 3] (6 elements)");
  CHECK_THROWS_MSG(x.reshape({-1, -1}), ag::ShapeError, "reshape: only one dim can be -1 in [-1, -1]");
  CHECK_THROWS_MSG(x.reshape({-2, -3}), ag::ShapeError, "reshape: invalid size -2 in shape [-2, -3]");
  CHECK_THROWS_MSG(x.view({5}), ag::ShapeError, "view: shape [5] is invalid for input of shape [2, 3] (6 elements)");
  CHECK_THROWS_MSG(x.view({-1, 2, -1}), ag::ShapeError, "view: only one dim can be -1");
  CHECK_THROWS_MSG(x.reshape({0, -1}), ag::ShapeError, "reshape: shape [0, -1] is invalid");
}

TEST_CASE("views: permute rejects a wrong count or a repeated dim") {
  Tensor x = ag::zeros({2, 3, 4});
  CHECK_THROWS_MSG(x.permute({0, 1}), ag::ShapeError, "permute: 2 dims given for a tensor of shape [2, 3, 4]");
  CHECK_THROWS_MSG(x.permute({0, 0, 1}), ag::IndexError, "permute: dim 0 repeats in the permutation (shape [2, 3, 4])");
  CHECK_THROWS_MSG(x.permute({2, 1, -1}), ag::IndexError, "permute: dim -1 repeats");
  CHECK_THROWS_MSG(x.permute({0, 1, 3}), ag::IndexError, "permute: dim 3 is out of range");
}

TEST_CASE("views: expand rejects a size mismatch, fewer dims and a new -1 dim") {
  Tensor x = ag::zeros({3, 1});
  CHECK_THROWS_MSG(x.expand({4, 2}), ag::ShapeError,
                   "expand: input shape [3, 1] cannot be expanded to [4, 2] (dim 0: 3 vs 4)");
  CHECK_THROWS_MSG(x.expand({3}), ag::ShapeError, "expand: shape [3] has fewer dims than the input shape [3, 1]");
  CHECK_THROWS_MSG(x.expand({-1, 3, 1}), ag::ShapeError, "expand: new leading dim 0 cannot be -1 (input shape [3, 1])");
  CHECK_THROWS_MSG(x.expand({3, -2}), ag::ShapeError,
                   "expand: invalid size -2 at dim 1 of [3, -2] (input shape [3, 1])");
}

TEST_CASE("views: select, narrow and slice reject out-of-range arguments") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(x.select(1, 3), ag::IndexError,
                   "select: index 3 is out of range for dim 1 of size 3 (shape [2, 3])");
  CHECK_THROWS_MSG(x.select(-1, -4), ag::IndexError, "select: index -4 is out of range for dim 1");
  CHECK_THROWS_MSG(ag::scalar_tensor(1.0).select(0, 0), ag::ShapeError, "select: cannot select from a 0-d tensor");
  CHECK_THROWS_MSG(x.narrow(1, 2, 2), ag::IndexError,
                   "narrow: start 2 and length 2 do not fit in dim 1 of size 3 (shape [2, 3])");
  CHECK_THROWS_MSG(x.narrow(0, 0, -1), ag::IndexError, "narrow: start 0 and length -1 do not fit");
  CHECK_THROWS_MSG(x.narrow(0, -3, 1), ag::IndexError, "narrow: start -1 and length 1");
  CHECK_THROWS_MSG(ag::scalar_tensor(1.0).narrow(0, 0, 1), ag::ShapeError, "narrow: cannot narrow a 0-d tensor");
  CHECK_THROWS_MSG(x.slice(1, 0, 3, 0), ag::ValueError, "slice: step must be positive, got 0");
  CHECK_THROWS_MSG(x.slice(1, 0, 3, -1), ag::ValueError, "slice: step must be positive, got -1");
  CHECK_THROWS_MSG(ag::scalar_tensor(1.0).slice(0, 0, 1), ag::ShapeError, "slice: cannot slice a 0-d tensor");
}

TEST_CASE("views: dims out of range throw IndexError naming the op and the valid range") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(x.transpose(0, 2), ag::IndexError,
                   "transpose: dim 2 is out of range for a tensor with 2 dims (expected -2 to 1)");
  CHECK_THROWS_MSG(x.transpose(-3, 0), ag::IndexError, "transpose: dim -3 is out of range");
  CHECK_THROWS_MSG(x.unsqueeze(3), ag::IndexError,
                   "unsqueeze: dim 3 is out of range for a tensor with 3 dims (expected -3 to 2)");
  CHECK_THROWS_MSG(x.squeeze(2), ag::IndexError, "squeeze: dim 2 is out of range");
  CHECK_THROWS_MSG(x.select(2, 0), ag::IndexError, "select: dim 2 is out of range");
  CHECK_THROWS_MSG(x.slice(-3, 0, 1), ag::IndexError, "slice: dim -3 is out of range");
  CHECK_THROWS_MSG(x.narrow(5, 0, 1), ag::IndexError, "narrow: dim 5 is out of range");
  CHECK_THROWS_MSG(x.flatten(0, 2), ag::IndexError, "flatten: dim 2 is out of range");
  CHECK_THROWS_MSG(x.size(2), ag::IndexError,
                   "size: dim 2 is out of range for a tensor with 2 dims (expected -2 to 1)");
  CHECK(x.size(-1) == 3);
  CHECK_THROWS_MSG(x.sum({2}), ag::IndexError, "sum: dim 2 is out of range");
  CHECK_THROWS_MSG(x.sum({1, -1}), ag::IndexError, "sum: dim -1 appears more than once");
}

TEST_CASE("views: flatten with start after end and t() of a 3-D tensor throw") {
  Tensor x = ag::zeros({2, 3, 4});
  CHECK_THROWS_MSG(x.flatten(2, 1), ag::ValueError, "flatten: start_dim 2 is after end_dim 1");
  CHECK_THROWS_MSG(x.t(), ag::ShapeError, "t: expected a 2-D tensor, got shape [2, 3, 4]");
}
