// Pooling against hand-computed values: PyTorch's NaN, tie and -inf rules, indices,
// ceil-mode windows and divisors, adaptive windows, the gradient routing of max pooling
// (and its double backward), 16-bit inputs, and the typed errors of bad arguments.
// Reference values follow PyTorch 1.13's CPU kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp,
// AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tensor_checks.h"

using namespace ag;
using tc::diff;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
Tensor plane(const std::vector<double>& v, int64_t H, int64_t W) { return Tensor::from_vector(v, {1, 1, H, W}); }
}  // namespace

TEST_CASE("max_pool2d: NaN wins (the last NaN's index), ties take the first, -inf windows keep their first index") {
  // 2x2 windows over a 2x4 plane: [1 NaN | 3 3], [NaN 0 | 3 2]
  Tensor x = plane({1, NAN, 3, 3, NAN, 0, 3, 2}, 2, 4);
  auto [v, i] = max_pool2d_with_indices(x, {2});
  CHECK(diff(v, {NAN, 3}) == "");
  CHECK(diff(i, {4, 2}) == "");  // NaN at flat 1 then 4: the last; 3 at 2, 3, 6: the first
  auto [vi, ii] = max_pool2d_with_indices(plane({-kInf, -kInf, -kInf, -kInf}, 2, 2), {2});
  CHECK(diff(vi, std::vector<double>{-kInf}) == "");
  CHECK(diff(ii, std::vector<double>{0}) == "");
  // Padding never wins: a window of negative values next to the -inf padding.
  auto [vp, ip] = max_pool2d_with_indices(plane({-5, -6, -7, -8}, 2, 2), {2}, {1}, {1});
  CHECK(diff(vp, {-5, -5, -6, -5, -5, -6, -7, -7, -8}) == "");
  CHECK(diff(ip, {0, 0, 1, 0, 0, 1, 2, 2, 3}) == "");
}

TEST_CASE("max_pool2d gradient goes to the argmax (summed over overlapping windows); double backward routes back") {
  Tensor x = plane({1, 5, 2, 0, 3, 4, 8, 7, 6}, 3, 3).requires_grad_();
  Tensor y = max_pool2d(x, {2}, {1});  // windows [1 5 0 3] [5 2 3 4] [0 3 8 7] [3 4 7 6]: 5, 5, 8, 7
  CHECK(diff(y, {5, 5, 8, 7}) == "");
  Tensor g = Tensor::from_vector(std::vector<double>{1, 10, 100, 1000}, {1, 1, 2, 2}).requires_grad_();
  Tensor dx = ag::grad({y}, {x}, {g}, true, true)[0];
  CHECK(diff(dx, {0, 11, 0, 0, 0, 0, 100, 1000, 0}) == "");
  // d(sum(dx * u))/dg reads u at the argmax of each window.
  Tensor u = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  Tensor dg = ag::grad({(dx * u).sum()}, {g})[0];
  CHECK(diff(dg, {2, 2, 7, 8}) == "");
}

TEST_CASE("max_pool ceil_mode, dilation and 1-d indices") {
  // L = 5, k = 2, s = 2: floor gives 2 windows, ceil 3 (the last is [4] alone).
  Tensor x = Tensor::from_vector(std::vector<double>{0, 3, 1, 2, 9}, {1, 1, 5});
  CHECK(diff(max_pool1d(x, {2}, {2}), {3, 2}) == "");
  auto [v, i] = max_pool1d_with_indices(x, {2}, {2}, {0}, {1}, true);
  CHECK(diff(v, {3, 2, 9}) == "");
  CHECK(diff(i, {1, 3, 4}) == "");
  // ceil_mode drops a window that would start in the right padding: L = 3, k = 2, s = 2,
  // p = 1 gives ceil((3 + 2 - 2) / 2) + 1 = 3 windows, starting at -1, 1 and 3 = L: the
  // third is dropped.
  CHECK(max_pool1d(Tensor::from_vector(std::vector<double>{1, 2, 3}, {1, 1, 3}), {2}, {2}, {1}, {1}, true).size(2) ==
        2);
  // dilation 2, k 2: taps (0, 2), (1, 3), (2, 4).
  CHECK(diff(max_pool1d(x, {2}, {1}, {0}, {2}), {1, 3, 9}) == "");
}

TEST_CASE("avg_pool2d divisors: count_include_pad, ceil-mode windows past the input, divisor_override") {
  // 3x3 ones, k 2, s 2, p 1: windows cover (rows, cols) of size 1 or 2 inside the input.
  Tensor ones = plane({1, 1, 1, 1, 1, 1, 1, 1, 1}, 3, 3);
  // count_include_pad: every window of the padded 5x5 has 4 elements -> 1/4, 2/4, 1/4, ...
  CHECK(diff(avg_pool2d(ones, {2}, {2}, {1}), {0.25, 0.5, 0.5, 1.0}) == "");
  CHECK(diff(avg_pool2d(ones, {2}, {2}, {1}, false, false), {1, 1, 1, 1}) == "");
  // ceil_mode, no padding: 3 -> windows [0, 2), [2, 4): the second hangs past the input,
  // its divisor clipped to the input + padding (PyTorch's min(start + k, in + pad)).
  Tensor x = plane({1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3);
  CHECK(diff(avg_pool2d(x, {2}, {2}, {0}, true), {3, 4.5, 7.5, 9}) == "");
  CHECK(diff(avg_pool2d(x, {2}, {2}, {0}, true, true, 2), {6, 4.5, 7.5, 4.5}) == "");
  CHECK(diff(avg_pool1d(Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5}, {1, 1, 5}), {3}, {2}, {1}, true, false),
             {1.5, 3, 4.5}) == "");
}

TEST_CASE("adaptive pooling windows: [floor(i n / m), ceil((i + 1) n / m))") {
  // 7 -> 3: [0, 3), [2, 5), [4, 7)
  Tensor x = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 7}, {1, 1, 7});
  CHECK(diff(adaptive_avg_pool1d(x, {3}), {2, 4, 6}) == "");
  auto [v, i] = adaptive_max_pool1d_with_indices(x, {3});
  CHECK(diff(v, {3, 5, 7}) == "");
  CHECK(diff(i, {2, 4, 6}) == "");
  // 2 -> 3 (larger): [0, 1), [0, 2), [1, 2)
  CHECK(diff(adaptive_avg_pool1d(Tensor::from_vector(std::vector<double>{2, 4}, {1, 1, 2}), {3}), {2, 3, 4}) == "");
  Tensor img = randn({2, 3, 5, 4}, DType::f64);
  CHECK(diff(adaptive_avg_pool2d(img, {1}), img.mean({2, 3}, true), 1e-15) == "");
  CHECK(diff(adaptive_avg_pool2d(img, {5, 4}), img, 1e-15) == "");
  CHECK(diff(adaptive_max_pool2d(img, {1, 1}), img.amax({2, 3}, true)) == "");
}

TEST_CASE("pooling in bf16 and f16: max exact, average computed in f32 and rounded once") {
  Tensor x = randn({2, 2, 6, 6});
  for (DType h : {DType::bf16, DType::f16}) {
    Tensor xh = x.to(h), x32 = xh.to(DType::f32);
    CHECK(max_pool2d(xh, {2}).dtype() == h);
    CHECK(diff(max_pool2d(xh, {3}, {2}, {1}).to(DType::f32), max_pool2d(x32, {3}, {2}, {1})) == "");
    CHECK(diff(avg_pool2d(xh, {3}, {2}, {1}).to(DType::f32), avg_pool2d(x32, {3}, {2}, {1}).to(h).to(DType::f32)) ==
          "");
    CHECK(diff(adaptive_avg_pool2d(xh, {4}).to(DType::f32), adaptive_avg_pool2d(x32, {4}).to(h).to(DType::f32)) == "");
  }
}

TEST_CASE("pooling errors name the op and the shapes") {
  Tensor x = randn({1, 2, 4, 4});
  CHECK_THROWS_MSG(max_pool2d(x, {2}, {2}, {2}), ValueError, "max_pool2d: padding [2] must be at most half");
  CHECK_THROWS_MSG(max_pool2d(x, {5}), ShapeError, "is too small for kernel_size [5]");
  CHECK_THROWS_MSG(max_pool2d(x, {2}, {0}), ValueError, "stride must be positive");
  CHECK_THROWS_MSG(max_pool2d(x, {0}), ValueError, "kernel_size must be positive");
  CHECK_THROWS_MSG(max_pool2d(x, {2}, {2}, {0}, {0}), ValueError, "dilation must be positive");
  CHECK_THROWS_MSG(max_pool2d(randn({4, 4}), {2}), ShapeError, "[4, 4]");
  CHECK_THROWS_MSG(avg_pool2d(x, {2}, {2}, {0}, false, true, 0), ValueError, "divisor_override must be non-zero");
  CHECK_THROWS_MSG(avg_pool1d(x, {2}), ShapeError, "avg_pool1d: expected a 2-D (unbatched) or 3-D");
  CHECK_THROWS_MSG(adaptive_avg_pool2d(x, {0}), ValueError, "output_size must be positive");
  CHECK_THROWS_MSG(adaptive_max_pool2d(randn({1, 2, 0, 4}), {2}), ShapeError, "spatial sizes must be positive");
  CHECK_THROWS_AS(max_pool2d(Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4}, {1, 1, 2, 2}), {2}), DTypeError);
}

TEST_CASE("hostile sizes: an int64-edge padding or an output no machine holds raises a typed error") {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  Tensor x = randn({1, 1, 4, 4});
  CHECK_THROWS_AS(conv2d(x, randn({1, 1, 3, 3}), {}, {1}, {big}), ShapeError);  // 4 + 2 * big overflows
  CHECK_THROWS_AS(conv_transpose2d(x, randn({1, 1, 3, 3}), {}, {big}), ShapeError);
  CHECK_THROWS_AS(im2col(x, {2}, {1}, {big}), ShapeError);
  CHECK_THROWS_AS(avg_pool2d(x, {2}, {1}, {big}), ValueError);  // more than half the kernel
  CHECK_THROWS_AS(max_pool2d(x, {2}, {1}, {0}, {big}), ShapeError);
  // 2^40 x 2^40 outputs: refused by the allocator before any per-output table is made.
  CHECK_THROWS_AS(adaptive_max_pool2d(x, {int64_t(1) << 40}), Error);
  CHECK_THROWS_AS(adaptive_avg_pool2d(x, {int64_t(1) << 40, 3}), Error);
  CHECK_THROWS_AS(conv2d(x, randn({1, 1, 1, 1}), {}, {1}, {int64_t(1) << 40}), Error);
}
