// Shaping ops: special values, views, 0-d and empty tensors, and every error path's
// type and message (the PyTorch 1.13 behaviour each mirrors is quoted beside it).
#include <doctest/doctest.h>

#include <limits>

#include "tensor_checks.h"

using namespace ag;

namespace {
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor ids(const std::vector<int64_t>& v) { return Tensor::from_vector(v); }
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("tril / triu zero the dropped part whatever it holds; diagonal offsets never overflow") {
  Tensor m = f64({1, kInf, kNaN, 2}, {2, 2});
  // torch 1.13: torch.tril([[1, kInf], [kNaN, 2]]) -> [[1, 0], [kNaN, 2]]; triu -> [[1, kInf], [0, 2]]
  CHECK(tc::diff(tril(m), {1, 0, kNaN, 2}) == "");
  CHECK(tc::diff(triu(m), {1, kInf, 0, 2}) == "");
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(tc::diff(tril(m, big), {1, kInf, kNaN, 2}) == "");
  CHECK(tc::diff(triu(m, big), {0, 0, 0, 0}) == "");
  CHECK(tc::diff(tril(m, -big), {0, 0, 0, 0}) == "");
  // Integer tensors keep their dtype (tril(torch.arange(4).reshape(2, 2)) -> [[0, 0], [2, 3]]).
  Tensor t = tril(arange(4).reshape({2, 2}));
  CHECK(t.dtype() == DType::i64);
  CHECK(tc::diff(t, {0, 0, 2, 3}) == "");
  // torch 1.13: torch.tril(torch.randn(5)) -> IndexError (dim -2 out of range)
  CHECK_THROWS_MSG(tril(ones({5})), IndexError,
                   "tril: expected a tensor with at least 2 dims (..., R, C), got shape [5]");
  CHECK_THROWS_MSG(triu(scalar_tensor(1)), IndexError, "triu: expected a tensor with at least 2 dims");
}

TEST_CASE("flip and roll: 0-d, empty and special values") {
  CHECK(tc::diff(flip(f64({kNaN, kInf, -0.0}, {3}), {0}), {-0.0, kInf, kNaN}) == "");
  // torch 1.13: flip of a 0-d tensor with dims (0,), (-1,) or () is the tensor itself
  CHECK(tc::diff(flip(scalar_tensor(3), {0}), {3}) == "");
  CHECK(tc::diff(flip(scalar_tensor(3), {-1}), {3}) == "");
  CHECK(tc::str(flip(zeros({0, 3}), {0, 1}).shape()) == "[0, 3]");
  Tensor x = arange(6.0, DType::f64).reshape({2, 3});
  Tensor same = flip(x, {});
  CHECK(!same.shares_storage(x));  // a copy, as in PyTorch
  CHECK(tc::diff(same, x) == "");
  // torch 1.13: torch.roll(torch.tensor(1.), 1) -> tensor(1.); a (0, 3) tensor rolls to itself
  CHECK(tc::diff(roll(scalar_tensor(1), 1), {1}) == "");
  CHECK(roll(scalar_tensor(1), 1).dim() == 0);
  CHECK(tc::str(roll(zeros({0, 3}), 1, 0).shape()) == "[0, 3]");
  CHECK(!roll(x, 3, 1).shares_storage(x));
  // Shifts larger than the dim wrap: roll([0, 1, 2], 7) == roll(., 1) -> [2, 0, 1].
  CHECK(tc::diff(roll(arange(3.0), 7), {2, 0, 1}) == "");
  CHECK(tc::diff(roll(arange(3.0), -7), {1, 2, 0}) == "");

  // torch 1.13: "dim 0 appears multiple times in the list of dims"
  CHECK_THROWS_MSG(flip(x, {0, -2}), ValueError, "flip: dim 0 appears multiple times in the list of dims [0, -2]");
  CHECK_THROWS_MSG(flip(x, {2}), IndexError, "flip: dim 2 is out of range for a tensor with 2 dims");
  // torch 1.13: "`shifts` required", "shifts and dimensions must align. shifts: 2, dims:1"
  CHECK_THROWS_MSG(roll(x, std::vector<int64_t>{}, std::vector<int64_t>{}), ValueError, "roll: `shifts` required");
  CHECK_THROWS_MSG(roll(x, {1, 2}, {0}), ValueError, "roll: shifts and dimensions must align. shifts: 2, dims: 1");
  CHECK_THROWS_MSG(roll(x, {1, 2}, {}), ValueError, "roll: shifts and dimensions must align. shifts: 2, dims: 0");
  CHECK_THROWS_MSG(roll(x, 1, 2), IndexError, "roll: dim 2 is out of range");
  // torch 1.13: torch.roll(torch.tensor(1.), 1, 0) -> "Dimension specified as 0 but tensor has no dimensions"
  CHECK_THROWS_MSG(roll(scalar_tensor(1), 1, 0), IndexError,
                   "roll: dimension specified as 0 but the tensor has no dimensions");
}

TEST_CASE("pad: special values, dtypes, fresh memory") {
  Tensor x = arange(6.0, DType::f64).reshape({2, 3});
  // torch 1.13: F.pad(torch.arange(6.).reshape(2, 3), (1, 1), value=kNaN)
  CHECK(tc::diff(pad(x, {1, 1}, PadMode::constant, kNaN), {kNaN, 0, 1, 2, kNaN, kNaN, 3, 4, 5, kNaN}) == "");
  // torch 1.13: F.pad(torch.arange(6).reshape(2, 3), (1, 1), value=2.7) -> 2 (truncated)
  Tensor xi = pad(arange(6).reshape({2, 3}), {1, 1}, PadMode::constant, 2.7);
  CHECK(xi.dtype() == DType::i64);
  CHECK(tc::diff(xi, {2, 0, 1, 2, 2, 2, 3, 4, 5, 2}) == "");
  // Empty pads, zero pads and pure crops still return new memory (as PyTorch does).
  CHECK(!pad(x, {}).shares_storage(x));
  CHECK(!pad(x.unsqueeze(0), {0, 0}, PadMode::reflect).shares_storage(x));
  CHECK(tc::diff(pad(x.unsqueeze(0), {-1, -1}, PadMode::replicate), {1, 4}) == "");
  CHECK(tc::diff(pad(scalar_tensor(5), {}), {5}) == "");
  // torch 1.13: F.pad(x, (-3, -1)) of a [2, 3, 4] input -> shape [2, 3, 0]; a zero-size
  // last dim pads with the value; reflect accepts a zero batch dim.
  CHECK(tc::str(pad(zeros({2, 3, 4}), {-3, -1}).shape()) == "[2, 3, 0]");
  CHECK(tc::diff(pad(zeros({1, 0}), {1, 1}, PadMode::constant, 7), {7, 7}) == "");
  CHECK(tc::str(pad(zeros({0, 3, 4}), {1, 1}, PadMode::reflect).shape()) == "[0, 3, 6]");
  // torch 1.13: F.pad(torch.arange(4.).reshape(1, 1, 4), (-5, 1), mode='circular') -> shape [1, 1, 0]
  CHECK(tc::str(pad(arange(4.0, DType::f64).reshape({1, 1, 4}), {-5, 1}, PadMode::circular).shape()) == "[1, 1, 0]");
  // torch 1.13: circular (4, 0) of [0, 1, 2, 3] -> [0, 1, 2, 3, 0, 1, 2, 3]
  CHECK(tc::diff(pad(arange(4.0, DType::f64).reshape({1, 1, 4}), {4, 0}, PadMode::circular),
                 {0, 1, 2, 3, 0, 1, 2, 3}) == "");
  // torch 1.13: reflect (-3, 3) and (-2, 3) of [0, 1, 2, 3] -> [3, 2, 1, 0] and [2, 3, 2, 1, 0]
  Tensor a = arange(4.0, DType::f64).reshape({1, 1, 4});
  CHECK(tc::diff(pad(a, {-3, 3}, PadMode::reflect), {3, 2, 1, 0}) == "");
  CHECK(tc::diff(pad(a, {-2, 3}, PadMode::reflect), {2, 3, 2, 1, 0}) == "");
  // torch 1.13: replicate (-5, 2) -> [3]
  CHECK(tc::diff(pad(a, {-5, 2}, PadMode::replicate), {3}) == "");
}

TEST_CASE("pad: errors") {
  Tensor x3 = zeros({2, 3, 4});
  // torch 1.13: "Padding length must be divisible by 2", "Padding length too large"
  CHECK_THROWS_MSG(pad(x3, {1, 2, 3}), ValueError,
                   "pad: padding length must be divisible by 2, got 3 values [1, 2, 3]");
  CHECK_THROWS_MSG(pad(x3, {1, 2, 3, 4, 5, 6, 7, 8}), ValueError, "pad: padding length too large: 8 values");
  CHECK_THROWS_MSG(pad(scalar_tensor(1), {1, 1}), ValueError, "pad: padding length too large");
  // torch 1.13: "Argument #4: Padding size should be less than the corresponding input
  // dimension, but got: padding (4, 0) at dimension 2 of input [2, 3, 4]" (and #6, #8)
  CHECK_THROWS_MSG(pad(x3, {4, 0}, PadMode::reflect), ValueError,
                   "pad: Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                   "padding (4, 0) at dimension 2 of input [2, 3, 4]");
  CHECK_THROWS_MSG(pad(x3, {1, 1, 0, 3}, PadMode::reflect), ValueError,
                   "Argument #6: Padding size should be less than the corresponding input dimension, but got: "
                   "padding (0, 3) at dimension 1 of input [2, 3, 4]");
  CHECK_THROWS_MSG(pad(zeros({1, 2, 3, 4}), {1, 1, 1, 1, 2, 0}, PadMode::reflect), ValueError,
                   "Argument #8: Padding size should be less than the corresponding input dimension, but got: "
                   "padding (2, 0) at dimension 1 of input [1, 2, 3, 4]");
  // torch 1.13: 'Padding mode "reflect" doesn't take in value argument'
  CHECK_THROWS_MSG(pad(x3, {1, 1}, PadMode::reflect, 1.0), ValueError,
                   "pad: padding mode \"reflect\" doesn't take in value argument");
  // torch 1.13: NotImplementedError "Only 2D, 3D, 4D, 5D padding with non-constant padding
  // are supported for now" (1-D reflect, 3 dims of a 3-D input, 2 dims of a 2-D input)
  for (auto [shape, p] : {std::pair<Shape, std::vector<int64_t>>{{5}, {1, 1}},
                          {{2, 3, 4}, {1, 1, 1, 1, 1, 1}},
                          {{3, 4}, {1, 1, 1, 1}},
                          {{1, 2, 3, 4}, {1, 1}},
                          {{1, 1, 1, 2, 3, 4}, {1, 1, 1, 1, 1, 1}},
                          {{2, 3}, {}}})
    CHECK_THROWS_MSG(pad(zeros(shape), p, PadMode::replicate), ShapeError,
                     "pad: only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  // torch 1.13: circular needs (N, C, ...): "Invalid padding size, expected 0 but got 2"
  CHECK_THROWS_MSG(pad(zeros({3, 4}), {1, 2}, PadMode::circular), ShapeError,
                   "pad: circular padding of the last 1 dims expects a 3-d input (N, C, ...), got shape [3, 4] "
                   "(invalid padding size, expected 0 but got 2)");
  // torch 1.13: "Padding value causes wrapping around more than once."
  CHECK_THROWS_MSG(pad(x3, {5, 2}, PadMode::circular), ValueError,
                   "pad: Padding value causes wrapping around more than once: padding (5, 2) at dimension 2");
  CHECK_THROWS_MSG(pad(x3, {-3, -2}, PadMode::circular), ShapeError,
                   "pad: Negative padding value is resulting in an empty dimension");
  // PyTorch fails on these too (an overlapping copy); we say why.
  CHECK_THROWS_MSG(
      pad(x3, {-2, 3}, PadMode::circular), ValueError,
      "pad: circular padding (-2, 3) at dimension 2 wraps the 2 elements left after cropping more than once");
  // torch 1.13: "input (W: 4) is too small. Calculated output W: 0"
  CHECK_THROWS_MSG(pad(x3, {-4, 0}, PadMode::replicate), ShapeError,
                   "pad: input (W: 4) is too small. Calculated output W: 0");
  CHECK_THROWS_MSG(pad(x3, {-3, -1}, PadMode::reflect), ShapeError,
                   "pad: input (W: 4) is too small. Calculated output W: 0");
  CHECK_THROWS_MSG(pad(x3, {0, 0, -2, -1}, PadMode::reflect), ShapeError,
                   "pad: input (H: 3) is too small. Calculated output H: 0");
  // torch 1.13: "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other
  // non-zero dimensions for input, but got: [2, 3, 0]"
  CHECK_THROWS_MSG(pad(zeros({2, 3, 0}), {1, 1}, PadMode::replicate), ShapeError,
                   "pad: replicate padding expects a 2-d or 3-d (batch mode) tensor with possibly 0 batch size and "
                   "other non-zero dimensions, got shape [2, 3, 0]");
  CHECK_THROWS_MSG(pad(zeros({2, 0, 4}), {1, 1}, PadMode::reflect), ShapeError, "other non-zero dimensions");
  // torch 1.13: F.pad(x, (-3, -2)) -> "start (0) + length (-1) exceeds dimension size (1)."
  CHECK_THROWS_MSG(pad(x3, {-3, -2}), ShapeError,
                   "pad: padding (-3, -2) of dimension 2 leaves a negative size -1 (input shape [2, 3, 4])");
}

TEST_CASE("repeat, tile, repeat_interleave: 0-d, empty, errors") {
  // torch 1.13: torch.tensor(1.).repeat(()) -> tensor(1.); .repeat(2, 3) -> shape [2, 3]
  CHECK(repeat(scalar_tensor(1), {}).dim() == 0);
  CHECK(tc::str(repeat(scalar_tensor(1), {2, 3}).shape()) == "[2, 3]");
  Tensor x = arange(6.0, DType::f64).reshape({2, 3});
  CHECK(!repeat(x, {1, 1}).shares_storage(x));
  CHECK(tc::str(repeat(x, {0, 1, 1}).shape()) == "[0, 2, 3]");
  CHECK(tc::str(tile(x, {}).shape()) == "[2, 3]");
  CHECK(tc::str(tile(scalar_tensor(1), {2, 3}).shape()) == "[2, 3]");
  // torch 1.13: torch.repeat_interleave(torch.tensor(1.), 3) -> [1, 1, 1]; repeats 0 empties
  CHECK(tc::diff(repeat_interleave(scalar_tensor(1), 3), {1, 1, 1}) == "");
  CHECK(tc::str(repeat_interleave(x, 0, 1).shape()) == "[2, 0]");
  CHECK(repeat_interleave(x, ids({0, 0, 0, 0, 0, 0})).numel() == 0);
  CHECK(tc::diff(repeat_interleave(x, scalar_tensor(2, DType::i64), 0), {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}) == "");
  CHECK(!repeat_interleave(x, 1, 0).shares_storage(x));

  // torch 1.13: "Number of dimensions of repeat dims can not be smaller than number of
  // dimensions of tensor"; "Trying to create tensor with negative dimension -3: [4, -3, 4]"
  CHECK_THROWS_MSG(
      repeat(zeros({2, 3, 4}), {2}), ShapeError,
      "repeat: number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  CHECK_THROWS_MSG(repeat(zeros({2, 3, 4}), {2, -1, 1}), ShapeError,
                   "repeat: trying to create tensor with negative dimension -3: [4, -3, 4]");
  CHECK_THROWS_MSG(tile(zeros({2, 3, 4}), {-1}), ShapeError,
                   "repeat: trying to create tensor with negative dimension -4: [2, 3, -4]");
  // torch 1.13: "repeats can not be negative"
  CHECK_THROWS_MSG(repeat_interleave(x, -1), ValueError, "repeat_interleave: repeats can not be negative, got -1");
  CHECK_THROWS_MSG(repeat_interleave(x, ids({1, -1, 2}), 1), ValueError,
                   "repeat_interleave: repeats can not be negative, got [1, -1, 2]");
  // torch 1.13: "repeats must have the same size as input along dim"
  CHECK_THROWS_MSG(
      repeat_interleave(x, ids({1, 2}), 1), ShapeError,
      "repeat_interleave: repeats must have the same size as input along dim: 2 repeats for dim 1 of shape [2, 3]");
  CHECK_THROWS_MSG(repeat_interleave(x, ids({1, 2})), ShapeError, "for dim 0 of shape [6]");
  // torch 1.13: "repeats must be 0-dim or 1-dim tensor"; float repeats: "not implemented for 'Float'"
  CHECK_THROWS_MSG(repeat_interleave(x, ids({1, 2, 3}).reshape({1, 3}), 1), ShapeError,
                   "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape [1, 3]");
  CHECK_THROWS_MSG(repeat_interleave(x, ones({3}), 1), DTypeError,
                   "repeat_interleave: repeats must be an integer tensor");
  CHECK_THROWS_MSG(repeat_interleave(x, 2, 2), IndexError, "repeat_interleave: dim 2 is out of range");
  // torch 1.13: torch.repeat_interleave(torch.tensor(1.), 3, 0) -> "Dimension specified as 0 but tensor has no
  // dimensions"
  CHECK_THROWS_MSG(repeat_interleave(scalar_tensor(1), 3, 0), IndexError,
                   "repeat_interleave: dimension specified as 0 but the tensor has no dimensions");
}

TEST_CASE("diag and diagonal: views, empty diagonals, errors") {
  Tensor x = arange(12.0, DType::f64).reshape({3, 4});
  Tensor d = diagonal(x, 1);
  CHECK(d.shares_storage(x));  // a strided view, as in PyTorch
  CHECK(tc::str(d.strides()) == "[5]");
  CHECK(tc::diff(d, {1, 6, 11}) == "");
  // torch 1.13: torch.diagonal(x, 7) and (x, -5) of a 2x3 -> empty; diag(x, 3) / (x, -2) of a 2x3 -> empty
  CHECK(tc::str(diagonal(x, 7).shape()) == "[0]");
  CHECK(tc::str(diagonal(x, -5).shape()) == "[0]");
  CHECK(tc::str(diag(zeros({2, 3}), 3).shape()) == "[0]");
  CHECK(tc::str(diag(zeros({2, 3}), -2).shape()) == "[0]");
  CHECK(!diag(x, 0).shares_storage(x));  // diag copies
  // torch 1.13: torch.diag(torch.randn(0), 1) -> [[0.]]
  CHECK(tc::diff(diag(zeros({0}), 1), std::vector<double>{0}) == "");
  CHECK(tc::str(diag(zeros({0}), 1).shape()) == "[1, 1]");

  // torch 1.13: "matrix or a vector expected"
  CHECK_THROWS_MSG(diag(zeros({2, 3, 4})), ShapeError, "diag: matrix or a vector expected, got shape [2, 3, 4]");
  CHECK_THROWS_MSG(diag(scalar_tensor(1)), ShapeError, "diag: matrix or a vector expected, got shape []");
  // torch 1.13: torch.diag(torch.randn(2, 3), -3) fails ("numel: integer multiplication overflow")
  CHECK_THROWS_MSG(diag(zeros({2, 3}), -3), ValueError,
                   "diag: diagonal -3 is out of range for a matrix of shape [2, 3]");
  CHECK_THROWS_MSG(diag(zeros({2, 3}), 4), ValueError, "diag: diagonal 4 is out of range");
  // torch 1.13: "diagonal dimensions cannot be identical 1, 1"
  CHECK_THROWS_MSG(diagonal(zeros({2, 3, 4}), 0, 1, -2), ValueError,
                   "diagonal: diagonal dimensions cannot be identical 1, -2");
  CHECK_THROWS_MSG(diagonal(zeros({2, 3, 4}), 0, 0, 3), IndexError, "diagonal: dim 3 is out of range");
  CHECK_THROWS_MSG(diagonal(zeros({5})), IndexError, "diagonal: dim 1 is out of range");
  CHECK_THROWS_MSG(diagonal(scalar_tensor(1)), IndexError, "diagonal: dim 1 is out of range");
}

TEST_CASE("unflatten, movedim, flatten: shapes and errors") {
  Tensor x = zeros({2, 3, 4});
  // torch 1.13: x.unflatten(1, (-1, 3)) -> [2, 1, 3, 4]; (1, -1, 1) -> [2, 1, 3, 1, 4]
  CHECK(tc::str(unflatten(x, 1, {-1, 3}).shape()) == "[2, 1, 3, 4]");
  CHECK(tc::str(unflatten(x, 1, {1, -1, 1}).shape()) == "[2, 1, 3, 1, 4]");
  CHECK(tc::str(unflatten(x.transpose(0, 2), 0, {2, 2}).shape()) == "[2, 2, 3, 2]");
  CHECK(unflatten(x, -1, {2, 2}).shares_storage(x));
  // torch 1.13 messages
  CHECK_THROWS_MSG(unflatten(x, 1, {3, 2}), ShapeError,
                   "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 1 (3) in the input tensor");
  CHECK_THROWS_MSG(unflatten(x, 1, {3, -1, 0}), ShapeError, "unflatten: Provided sizes [3, -1, 0] don't multiply up");
  CHECK_THROWS_MSG(unflatten(x, 1, {}), ValueError, "unflatten: sizes must be non-empty");
  CHECK_THROWS_MSG(unflatten(x, 1, {-1, -1}), ValueError, "unflatten: only one dimension can be inferred (-1)");
  CHECK_THROWS_MSG(unflatten(x, 1, {-2, 3}), ShapeError, "unflatten: invalid shape dimension -2");
  CHECK_THROWS_MSG(unflatten(zeros({2, 0, 3}), 1, {-1, 0}), ValueError,
                   "unflatten: cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
                   "dimension size -1 can be any value and is ambiguous");
  CHECK_THROWS_MSG(unflatten(x, 3, {1}), IndexError, "unflatten: dim 3 is out of range");
  CHECK_THROWS_MSG(unflatten(scalar_tensor(1), 0, {1}), IndexError,
                   "unflatten: dimension specified as 0 but the tensor has no dimensions");

  // torch 1.13: movedim(x, (0, -1), (-1, 0)) -> [4, 3, 2]; 0-d and empty lists are fine
  CHECK(tc::str(movedim(x, {0, -1}, {-1, 0}).shape()) == "[4, 3, 2]");
  CHECK(tc::str(movedim(x, {}, {}).shape()) == "[2, 3, 4]");
  CHECK(movedim(scalar_tensor(1), 0, 0).dim() == 0);
  CHECK(movedim(x, 0, 2).shares_storage(x));
  CHECK_THROWS_MSG(movedim(x, {0, 1}, {0}), ValueError,
                   "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same "
                   "number of dims as destination ([0] dims)");
  CHECK_THROWS_MSG(movedim(x, {0, -3}, {1, 2}), ValueError, "movedim: repeated dim in `source` ([0, -3])");
  CHECK_THROWS_MSG(movedim(x, {0, 1}, {1, 1}), ValueError, "movedim: repeated dim in `destination` ([1, 1])");
  CHECK_THROWS_MSG(movedim(x, 3, 0), IndexError, "movedim: dim 3 is out of range");
  CHECK_THROWS_MSG(movedim(x, 0, -4), IndexError, "movedim: dim -4 is out of range");

  // torch 1.13: flatten of a 0-d tensor is [1] for dims in [-1, 0], an IndexError otherwise
  CHECK(tc::str(flatten(scalar_tensor(1)).shape()) == "[1]");
  CHECK(tc::str(flatten(scalar_tensor(1), -1, 0).shape()) == "[1]");
  CHECK_THROWS_MSG(flatten(scalar_tensor(1), 1), IndexError, "flatten: dim 1 is out of range for a tensor with 0 dims");
  CHECK_THROWS_MSG(flatten(x, 2, 1), ValueError, "flatten: start_dim 2 is after end_dim 1");
}
