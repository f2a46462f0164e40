// Every element count, stride and byte count is checked: a shape whose numel, strides or
// bytes overflow int64 is a ShapeError naming the op and the shape (no wrap-around, no
// SIGFPE), and an allocation the machine cannot hold is a MemoryError naming the op, the
// shape and the bytes (never a bare std::bad_alloc). Under AddressSanitizer too: requests
// beyond RAM + swap are refused before they reach the allocator (see core/storage.cpp).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cstdint>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {
constexpr int64_t k32 = int64_t{1} << 32, k40 = int64_t{1} << 40, k62 = int64_t{1} << 62;
}  // namespace

TEST_CASE("numel and contiguous strides: overflow throws ShapeError") {
  CHECK(ag::numel(Shape{k32, 2}) == k32 * 2);
  CHECK_THROWS_MSG(ag::numel(Shape{k32, k32}), ag::ShapeError,
                   "numel: shape [4294967296, 4294967296] has too many elements (the count overflows int64)");
  CHECK_THROWS_MSG(ag::numel(Shape{-1, k62, 4}, "view"), ag::ShapeError, "view: shape [-1, ");
  CHECK_THROWS_MSG(ag::contiguous_strides(Shape{0, k62, 4}), ag::ShapeError,
                   "contiguous_strides: strides of shape [0, 4611686018427387904, 4] overflow int64");
}

TEST_CASE("factories: element, stride and byte overflow are ShapeErrors naming the op") {
  CHECK_THROWS_MSG(ag::zeros({k32, k32}), ag::ShapeError,
                   "zeros: shape [4294967296, 4294967296] has too many elements");
  CHECK_THROWS_MSG(ag::ones({k32, k32}), ag::ShapeError, "ones: shape [4294967296, 4294967296]");
  CHECK_THROWS_MSG(ag::full({k32, k32}, 1.0), ag::ShapeError, "full: shape");
  CHECK_THROWS_MSG(ag::empty({k32, k32}), ag::ShapeError, "empty: shape");
  CHECK_THROWS_MSG(ag::randn({k32, k32}), ag::ShapeError, "randn: shape");
  CHECK_THROWS_MSG(ag::eye(k32, k32), ag::ShapeError, "eye: shape [4294967296, 4294967296]");
  // numel fits, strides do not (a size-0 dim keeps numel at 0).
  CHECK_THROWS_MSG(ag::zeros({0, k62, 4}), ag::ShapeError,
                   "zeros: strides of shape [0, 4611686018427387904, 4] overflow");
  // numel fits, bytes do not: 2^62 f32 elements are 2^64 bytes.
  CHECK_THROWS_MSG(ag::zeros({k62}), ag::ShapeError,
                   "zeros: shape [4611686018427387904] of f32 needs more bytes than int64 can count");
  CHECK(ag::zeros({0, k62}).numel() == 0);  // empty tensors with huge dims are fine
  CHECK_THROWS_MSG(ag::arange(0.0, 1e300, 1.0), ag::ShapeError,
                   "arange: [0, 1e+300) with step 1 has too many elements");
  CHECK_THROWS_MSG(ag::arange(0.0, 1e18, 1.0, DType::f64), ag::MemoryError,
                   "arange: cannot allocate 8000000000000000000 bytes for shape [1000000000000000000] of f64");
}

TEST_CASE("slice: a huge step neither overflows the size nor the stride") {
  Tensor x = ag::arange(0.0, 6.0, 1.0, DType::f64).reshape({2, 3});
  Tensor s = x.slice(1, 1, 3, INT64_MAX);  // (2, 1): column 1 only
  CHECK(s.shape() == Shape{2, 1});
  CHECK(tc::diff(s, {1, 4}) == "");
  CHECK(x.slice(1, 3, 3, INT64_MAX).shape() == Shape{2, 0});
}

TEST_CASE("allocation failure is a MemoryError naming op, shape and bytes") {
  // 2^40 f32 = 4 TiB: more than this machine's RAM + swap.
  for (int i = 0; i < 2; ++i) {  // twice: the size-class buffer cache must not change the outcome
    CHECK_THROWS_MSG(ag::zeros({k40}), ag::MemoryError,
                     "zeros: cannot allocate 4398046511104 bytes for shape [1099511627776] of f32");
    Tensor small = ag::ones({1024});  // allocate and free through the cache in between
  }
  CHECK_THROWS_MSG(ag::empty({k40}, DType::f64), ag::MemoryError, "empty: cannot allocate 8796093022208 bytes");
  CHECK_THROWS_AS(ag::zeros({k40}), ag::Error);  // a typed attograd error, not std::bad_alloc
  // The cache still works after a failure.
  CHECK(tc::diff(ag::ones({3}) * 2.0, {2, 2, 2}) == "");
}

TEST_CASE("views and ops check the shapes they make") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(x.reshape({-1, k62, k62}), ag::ShapeError, "reshape: shape [-1, 4611686018427387904, ");
  CHECK_THROWS_MSG(x.view({k32, k32}), ag::ShapeError, "view: shape [4294967296, 4294967296] has too many elements");
  CHECK_THROWS_MSG(ag::ones({1, 1}).expand({k32, k32}), ag::ShapeError,
                   "expand: shape [4294967296, 4294967296] has too many elements");
  // Broadcasting two valid views to an overflowing shape.
  Tensor col = ag::ones({1, 1}).expand({k32, 1}), row = ag::ones({1}).expand({k32});
  CHECK_THROWS_MSG(col + row, ag::ShapeError, "add: shape [4294967296, 4294967296] has too many elements");
  CHECK_THROWS_MSG(ag::where(ag::gt(ag::ones({1}), 0.0), col, row), ag::ShapeError,
                   "where: shape [4294967296, 4294967296]");
  // matmul output (M, N) = (2^32, 2^32)
  Tensor a = ag::ones({1, 1}).expand({k32, 1}), b = ag::ones({1, 1}).expand({1, k32});
  CHECK_THROWS_MSG(ag::matmul(a, b), ag::ShapeError, "matmul: shape [4294967296, 4294967296] has too many elements");
  // cat: the concatenated size itself overflows
  Tensor h = ag::ones({1}).expand({k62});
  CHECK_THROWS_MSG(ag::cat({h, h}, 0), ag::ShapeError, "cat: size of dim 0 overflows int64 at tensor 1");
  CHECK_THROWS_MSG(ag::stack({h, h}, 0), ag::ShapeError, "cat: shape [2, 4611686018427387904] has too many elements");
}
