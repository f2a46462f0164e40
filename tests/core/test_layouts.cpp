// Layouts from raw parts, negative dims and memory overlap (issue 23): the Tensor
// constructor checks shape, strides and offset against the storage as PyTorch's
// as_strided does; a negative dim is a ShapeError in every factory and shape op; in-place
// ops and copy_ refuse a written-to tensor that overlaps itself or an input that overlaps
// it partially (PyTorch's messages), and allow an input identical to it.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Strides;
using ag::Tensor;
using tc::diff;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const char* const kInternal =
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.";
const char* const kPartial =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

// A layout over t's storage (f32), as PyTorch's as_strided.
Tensor strided(const Tensor& t, Shape shape, Strides strides, int64_t offset) {
  return Tensor(t.storage(), shape, strides, offset, t.dtype());
}

}  // namespace

// ---- 1. layouts from raw parts ------------------------------------------------------

TEST_CASE("Tensor from raw parts: a layout beyond the storage is refused") {
  Tensor t = tc::iota(4);  // 16 bytes
  CHECK_THROWS_MSG(strided(t, {4}, {1}, 100), ag::IndexError,
                   "Tensor: sizes [4], strides [1], storage offset 100 and itemsize 4 (f32) requiring a storage size "
                   "of 416 bytes are out of bounds for storage of size 16 bytes");
  CHECK_THROWS_MSG(strided(t, {5}, {1}, 0), ag::IndexError, "out of bounds for storage of size 16 bytes");
  CHECK_THROWS_MSG(strided(t, {2, 2}, {3, 1}, 0), ag::IndexError, "requiring a storage size of 20 bytes");
  CHECK_THROWS_MSG(strided(t, {1}, {1}, 4), ag::IndexError, "out of bounds for storage");
  // A reach past int64: (3 - 1) * 2^62 + 1 overflows; so does the byte count of 2^62.
  CHECK_THROWS_MSG(strided(t, {3}, {int64_t{1} << 62}, 0), ag::IndexError,
                   "requiring a storage size of more than int64 bytes are out of bounds for storage");
  CHECK_THROWS_MSG(strided(t, {2}, {kMax}, 0), ag::IndexError, "out of bounds for storage");
  CHECK_THROWS_MSG(strided(t, {1}, {1}, kMax), ag::IndexError, "out of bounds for storage");
  // Read as i64 (8 bytes each) the same 16 bytes hold 2 elements.
  CHECK_THROWS_MSG(Tensor(t.storage(), Shape{3}, Strides{1}, 0, DType::i64), ag::IndexError,
                   "itemsize 8 (i64) requiring a storage size of 24 bytes");
}

TEST_CASE("Tensor from raw parts: negative strides and offsets, mismatched dims") {
  Tensor t = tc::iota(4);
  CHECK_THROWS_MSG(strided(t, {4}, {-1}, 3), ag::ValueError,
                   "Tensor: negative strides are not supported, got strides [-1] (shape [4], storage offset 3)");
  CHECK_THROWS_MSG(strided(t, {2}, {-1}, 0), ag::ValueError, "negative strides are not supported");
  CHECK_THROWS_MSG(strided(t, {4}, {1}, -1), ag::ValueError, "Tensor: invalid storage offset -1");
  CHECK_THROWS_MSG(strided(t, {2, 2}, {1}, 0), ag::ShapeError, "Tensor: shape [2, 2] and strides [1]");
  CHECK_THROWS_MSG(Tensor(nullptr, Shape{1}, Strides{1}, 0, DType::f32), ag::ValueError, "Tensor: null storage");
}

TEST_CASE("Tensor from raw parts: every in-bounds layout is accepted") {
  Tensor t = tc::iota(6);
  CHECK(diff(strided(t, {2, 3}, {3, 1}, 0), {0, 1, 2, 3, 4, 5}) == "");
  CHECK(diff(strided(t, {3, 2}, {1, 3}, 0), {0, 3, 1, 4, 2, 5}) == "");
  CHECK(diff(strided(t, {2}, {5}, 0), {0, 5}) == "");
  CHECK(diff(strided(t, {4}, {0}, 5), {5, 5, 5, 5}) == "");                          // stride 0: read-only broadcast
  CHECK_THROWS_MSG(strided(t, {3, 2}, {1, 1}, 3), ag::IndexError, "out of bounds");  // reaches element 6
  CHECK(diff(strided(t, {2, 2}, {1, 1}, 3), {3, 4, 4, 5}) == "");
  CHECK(diff(strided(t, {1}, {kMax}, 5), {5}) == "");  // a size-1 dim's stride is never used
  // An empty tensor reads nothing: any offset and stride (PyTorch).
  CHECK(strided(t, {0}, {1}, 1000).numel() == 0);
  CHECK(strided(t, {0, 3}, {kMax, kMax}, kMax).numel() == 0);
  // ... and reads as nothing: its offset past the storage is kept at the storage's end
  // (data() computes offset * itemsize).
  CHECK(strided(t, {0}, {1}, kMax).offset() == 6);
  CHECK(strided(t, {0}, {1}, 3).offset() == 3);
  CHECK(strided(t, {0, 3}, {kMax, kMax}, kMax).clone().numel() == 0);
  CHECK(strided(t, {0}, {1}, kMax).sum().item<float>() == 0.0f);
  // Views made by the ops stay valid: slicing to the end, an empty slice past the end.
  CHECK(t.slice(0, 6, 6).numel() == 0);
  CHECK(diff(t.reshape({2, 3}).select(1, 2), {2, 5}) == "");
}

TEST_CASE("views of layouts with huge strides on size-1 or empty dims: no overflow") {
  // Such strides are valid (no element is reached through them); the view ops' offset and
  // stride arithmetic must not overflow (UB; in Release a wrapped, negative offset).
  Tensor t = tc::iota(4);
  Tensor one = strided(t, {1}, {kMax}, 2);          // [2]
  Tensor empty = strided(t, {0, 5}, {1, kMax}, 0);  // no elements
  CHECK(one.slice(0, 1, 1).numel() == 0);
  CHECK(diff(one.unsqueeze(0).unsqueeze(0), {2}) == "");
  CHECK(empty.slice(1, 2, 4).numel() == 0);
  CHECK(strided(t, {0, 5}, {1, int64_t{1} << 62}, 0).slice(1, 0, 5, 2).numel() == 0);
  CHECK(empty.select(1, 3).numel() == 0);
  CHECK(empty.narrow(1, 4, 1).numel() == 0);
  CHECK(tc::str(empty.unsqueeze(1).shape()) == "[0, 1, 5]");
  CHECK(diff(ag::diagonal(strided(t, {1, 1}, {kMax, kMax}, 3)), {3}) == "");
  CHECK(ag::diagonal(strided(t, {0, 3, 3}, {1, kMax, kMax}, 0), 1, 1, 2).numel() == 0);
  CHECK(ag::diagonal(strided(t, {0, 3, 3}, {1, kMax, kMax}, 0), -1, 1, 2).numel() == 0);
  // The strided kernel loop merges dims by stride * size: not for an empty tensor.
  Tensor hollow = strided(t, {3, 5, 0}, {1, kMax, 1}, 0);
  CHECK(ag::add(hollow, 1.0).numel() == 0);
  CHECK(hollow.clone().numel() == 0);
}

// ---- 2. negative dims ----------------------------------------------------------------

TEST_CASE("negative dims are a ShapeError in every factory and shape op") {
  Tensor x = tc::iota(4);
  const Shape neg{-2, -2};  // its product, 4, would fit x
  struct Case {
    const char* name;
    std::function<Tensor()> call;
  };
  const std::vector<Case> cases = {
      {"zeros", [&] { return ag::zeros(neg); }},
      {"ones", [&] { return ag::ones(neg); }},
      {"full", [&] { return ag::full(neg, 1.0); }},
      {"empty", [&] { return ag::empty(neg); }},
      {"rand", [&] { return ag::rand(neg); }},
      {"randn", [&] { return ag::randn(neg); }},
      {"uniform", [&] { return ag::uniform(neg, 0.0, 1.0); }},
      {"randint", [&] { return ag::randint(0, 5, neg); }},
      {"bernoulli", [&] { return ag::bernoulli(neg, 0.5); }},
      {"eye", [&] { return ag::eye(-2); }},
      {"eye m", [&] { return ag::eye(2, -2); }},
      {"from_vector",
       [&] {
         return Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, neg);
       }},
      {"from_vector i64",
       [&] {
         return Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4}, neg);
       }},
      {"Tensor",
       [&] {
         return Tensor(x.storage(), neg, Strides{1, 1}, 0, DType::f32);
       }},
      {"Tensor one dim", [&] { return Tensor(x.storage(), Shape{-1}, Strides{1}, 0, DType::f32); }},
      {"reshape", [&] { return x.reshape(neg); }},
      {"reshape -1 and -2",
       [&] {
         return x.reshape({-1, -2});
       }},
      {"view", [&] { return x.view(neg); }},
      {"expand",
       [&] {
         return x.expand({-2, 4});
       }},
      {"expand inner",
       [&] {
         return x.reshape({4, 1}).expand({4, -3});
       }},
      {"unflatten",
       [&] {
         return ag::unflatten(x, 0, {-2, -2});
       }},
      {"repeat", [&] { return ag::repeat(x, {-1}); }},
      {"tile",
       [&] {
         return ag::tile(x, {2, -1});
       }},
      {"numel", [&] { return ag::full({ag::numel(neg)}, 0.0); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK_THROWS_AS(c.call(), ag::ShapeError);
  }
  CHECK_THROWS_MSG(Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, neg), ag::ShapeError,
                   "from_vector: shape [-2, -2] has a negative dimension -2");
  CHECK_THROWS_MSG(ag::numel(neg, "view"), ag::ShapeError, "view: shape [-2, -2] has a negative dimension -2");
  CHECK_THROWS_MSG(ag::repeat(x, {int64_t{1} << 62}), ag::ShapeError,
                   "repeat: repeats [4611686018427387904] of input shape [4] overflow int64");
  // -1 still infers one dim.
  CHECK(tc::str(x.reshape({-1, 2}).shape()) == "[2, 2]");
  CHECK(tc::str(x.view({2, -1}).shape()) == "[2, 2]");
  CHECK(tc::str(x.reshape({1, 4}).expand({3, -1}).shape()) == "[3, 4]");
}

// ---- 3. overlap ----------------------------------------------------------------------

TEST_CASE("in-place ops refuse a written-to tensor that overlaps itself") {
  struct Case {
    const char* name;
    std::function<void(Tensor&)> call;
  };
  const std::vector<Case> cases = {
      {"add_", [](Tensor& s) { s.add_(ag::ones(s.shape())); }},
      {"add_ scalar", [](Tensor& s) { s.add_(1.0); }},
      {"sub_", [](Tensor& s) { s.sub_(ag::ones(s.shape()), 2.0); }},
      {"sub_ scalar", [](Tensor& s) { s.sub_(1.0); }},
      {"mul_", [](Tensor& s) { s.mul_(ag::ones(s.shape())); }},
      {"mul_ scalar", [](Tensor& s) { s.mul_(2.0); }},
      {"div_", [](Tensor& s) { s.div_(ag::ones(s.shape())); }},
      {"div_ scalar", [](Tensor& s) { s.div_(2.0); }},
      {"neg_", [](Tensor& s) { s.neg_(); }},
      {"exp_", [](Tensor& s) { s.exp_(); }},
      {"relu_", [](Tensor& s) { s.relu_(); }},
      {"sigmoid_", [](Tensor& s) { s.sigmoid_(); }},
      {"tanh_", [](Tensor& s) { s.tanh_(); }},
      {"clamp_", [](Tensor& s) { s.clamp_(0.0, 1.0); }},
      {"masked_fill_", [](Tensor& s) { s.masked_fill_(ag::ones(s.shape(), DType::b8), 3.0); }},
      {"fill_", [](Tensor& s) { s.fill_(2.0); }},
      {"zero_", [](Tensor& s) { s.zero_(); }},
      {"copy_", [](Tensor& s) { s.copy_(ag::ones(s.shape())); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Tensor base = ag::full({3}, 0.5);
    Tensor expanded = base.narrow(0, 0, 1).expand({4});  // one location, four elements
    CHECK_THROWS_MSG(c.call(expanded), ag::ValueError, kInternal);
    const std::string name = std::string(c.name).substr(0, std::string(c.name).find(' ')) + ": ";
    if (name != "zero_: ") CHECK_THROWS_MSG(c.call(expanded), ag::ValueError, name.c_str());  // zero_ is fill_
    Tensor window = strided(base, {2, 2}, {1, 1}, 0);  // elements 0 1 / 1 2: no zero stride
    CHECK_THROWS_MSG(c.call(window), ag::ValueError, kInternal);
    CHECK(diff(base, {0.5, 0.5, 0.5}) == "");  // nothing written
  }
  Tensor w = strided(ag::zeros({4}), {3, 2}, {1, 1}, 0);
  CHECK_THROWS_MSG(w.add_(1.0), ag::ValueError, kInternal);
  CHECK_THROWS_MSG(w.fill_(1.0), ag::ValueError, "fill_: unsupported operation: more than one element");
  // Inside the graph too (a non-leaf, not a view: the overlap is checked first).
  Tensor p = ag::ones({1}).requires_grad_();
  CHECK_THROWS_MSG(ag::mul(p, 2.0).expand({4}).add_(1.0), ag::ValueError, kInternal);
  // No overlap: a plain column of a matrix is fine.
  Tensor m = ag::zeros({3, 3});
  m.select(1, 1).add_(ag::ones({3}));
  CHECK(diff(m, {0, 1, 0, 0, 1, 0, 0, 1, 0}) == "");
}

TEST_CASE("in-place ops refuse an input that partly overlaps the written-to tensor") {
  Tensor a = tc::iota(4);
  CHECK_THROWS_MSG(a.narrow(0, 0, 3).copy_(a.narrow(0, 1, 3)), ag::ValueError,
                   "copy_: unsupported operation: some elements");
  CHECK(diff(a, {0, 1, 2, 3}) == "");
  CHECK_THROWS_MSG(a.narrow(0, 1, 3).add_(a.narrow(0, 0, 3)), ag::ValueError,
                   "add_: unsupported operation: some elements");
  CHECK_THROWS_MSG(a.narrow(0, 1, 3).mul_(a.narrow(0, 0, 3)), ag::ValueError, kPartial);
  Tensor m = tc::iota(16).reshape({4, 4});
  CHECK_THROWS_MSG(m.add_(m.select(0, 0)), ag::ValueError, kPartial);                    // a row broadcast over m
  CHECK_THROWS_MSG(m.copy_(m.t()), ag::ValueError, kPartial);                            // same range, other order
  CHECK_THROWS_MSG(m.slice(1, 0, 3).copy_(m.slice(1, 1, 4)), ag::ValueError, kPartial);  // not dense
  Tensor b = ag::zeros({2}, DType::b8);
  CHECK_THROWS_MSG(b.masked_fill_(b.narrow(0, 0, 1), true), ag::ValueError,
                   "masked_fill_: unsupported operation: some elements");
  CHECK(diff(m, tc::iota(16).reshape({4, 4})) == "");  // nothing written
}

TEST_CASE("in-place ops allow an input identical to, or disjoint from, the written-to tensor") {
  Tensor x = tc::iota(4);
  x.add_(x);
  CHECK(diff(x, {0, 2, 4, 6}) == "");
  x.mul_(Tensor(x.storage(), x.shape(), x.strides(), x.offset(), x.dtype()));  // another handle, same layout
  CHECK(diff(x, {0, 4, 16, 36}) == "");
  x.copy_(x);
  CHECK(diff(x, {0, 4, 16, 36}) == "");
  Tensor m = tc::iota(16).reshape({4, 4});
  m.select(1, 0).copy_(m.select(1, 1));  // interleaved columns share no element
  m.slice(1, 2, 4).sub_(m.slice(1, 0, 2));
  CHECK(diff(m, {1, 1, 1, 2, 5, 5, 1, 2, 9, 9, 1, 2, 13, 13, 1, 2}) == "");
  // Too many elements to list: copy_ goes through a temporary and gets it right.
  Tensor big = ag::arange(0, 300 * 300, 1, DType::f32).reshape({300, 300});
  Tensor want = big.slice(1, 1, 300).clone();
  big.slice(1, 0, 299).copy_(big.slice(1, 1, 300));
  CHECK(diff(big.slice(1, 0, 299), want) == "");
}

TEST_CASE("is_non_overlapping_and_dense: contiguous and permuted yes; expanded or gapped no") {
  ag::Tensor t = ag::arange(0, 24).reshape({2, 3, 4});
  CHECK(ag::is_non_overlapping_and_dense(t));
  CHECK(ag::is_non_overlapping_and_dense(t.transpose(0, 2)));                      // a permutation
  CHECK(ag::is_non_overlapping_and_dense(t.narrow(0, 1, 1)));                      // one whole block
  CHECK_FALSE(ag::is_non_overlapping_and_dense(t.narrow(2, 0, 2)));                // skips elements
  CHECK_FALSE(ag::is_non_overlapping_and_dense(t.select(2, 0)));                   // every 4th
  CHECK_FALSE(ag::is_non_overlapping_and_dense(ag::ones({1, 4}).expand({3, 4})));  // shared
  CHECK(ag::is_non_overlapping_and_dense(ag::ones({1, 4}).expand({1, 4})));        // size-1 dims
  CHECK(ag::is_non_overlapping_and_dense(ag::ones({0, 4})));
}

TEST_CASE("has_internal_overlap and get_overlap_status") {
  Tensor t = tc::iota(12);
  CHECK(ag::has_internal_overlap(t) == ag::MemOverlap::no);
  CHECK(ag::has_internal_overlap(t.reshape({3, 4}).t()) == ag::MemOverlap::no);
  CHECK(ag::has_internal_overlap(t.reshape({3, 4}).slice(1, 0, 4, 2)) == ag::MemOverlap::no);
  CHECK(ag::has_internal_overlap(t.narrow(0, 0, 1).expand({5})) == ag::MemOverlap::yes);
  CHECK(ag::has_internal_overlap(strided(t, {3, 3}, {2, 3}, 0)) == ag::MemOverlap::no);  // interleaved, disjoint
  CHECK(ag::has_internal_overlap(strided(t, {3, 3}, {1, 2}, 0)) == ag::MemOverlap::yes);
  CHECK(ag::has_internal_overlap(strided(ag::zeros({300 * 300}), {300, 300}, {1, 1}, 0)) == ag::MemOverlap::too_hard);
  CHECK(ag::get_overlap_status(t, t) == ag::MemOverlapStatus::full);
  CHECK(ag::get_overlap_status(t, t.view({12})) == ag::MemOverlapStatus::full);
  CHECK(ag::get_overlap_status(t, tc::iota(12)) == ag::MemOverlapStatus::no);
  CHECK(ag::get_overlap_status(t.narrow(0, 0, 6), t.narrow(0, 6, 6)) == ag::MemOverlapStatus::no);
  CHECK(ag::get_overlap_status(t.narrow(0, 0, 6), t.narrow(0, 5, 6)) == ag::MemOverlapStatus::partial);
  CHECK(ag::get_overlap_status(t.narrow(0, 0, 0), t) == ag::MemOverlapStatus::no);
}
