// interpolate (ops/upsample.cpp) against PyTorch 1.13's index math: small cases worked by
// hand, then seeded inputs against a reference written here as PyTorch's kernel loops
// over output elements (aten/src/ATen/native/UpSample.h and cpu/UpSampleKernel.cpp), not
// as the op's per-dim gathers; the errors of F.interpolate; gradients by hand.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "tensor_checks.h"

using namespace ag;
using M = InterpolateMode;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
InterpolateFuncOptions sized(std::vector<int64_t> size, M mode) {
  return InterpolateFuncOptions().size(std::move(size)).mode(mode);
}
InterpolateFuncOptions scaled(std::vector<double> factor, M mode) {
  return InterpolateFuncOptions().scale_factor(std::move(factor)).mode(mode);
}

// ---- the reference: one output element at a time ----
// One spatial dim's resampling: input size n, output size out, and the scale factor the
// coordinates use (unset: n / out).
struct Axis {
  int64_t n, out;
  std::optional<double> sf;
};

// PyTorch's nearest indices for NCHW inputs (HelperInterpNearest[Exact]): the scale in T,
// floorf (so a double is rounded to float first), clamped to n - 1.
template <class T>
int64_t nearest_src(const Axis& a, int64_t i, bool exact) {
  T scale = a.sf ? static_cast<T>(1.0 / *a.sf) : static_cast<T>(a.n) / static_cast<T>(a.out);
  float f;
  if (exact) {
    T src = static_cast<T>(scale * (i + 0.5) - 0.5);
    f = static_cast<float>((src < 0 ? T(0) : src) + 0.5);
  } else {
    f = static_cast<float>(scale * static_cast<T>(i));
  }
  return std::min(static_cast<int64_t>(std::floor(f)), a.n - 1);
}

// compute_source_index_and_lambda in T: x[i0] * (1 - l) + x[i1] * l.
template <class T>
void linear_src(const Axis& a, int64_t i, bool align, int64_t& i0, int64_t& i1, T& l) {
  if (a.out == a.n) {
    i0 = i1 = i;
    l = 0;
    return;
  }
  T scale;
  if (align)
    scale = a.out > 1 ? static_cast<T>(a.n - 1) / static_cast<T>(a.out - 1) : T(0);
  else
    scale = a.sf ? static_cast<T>(1.0 / *a.sf) : static_cast<T>(a.n) / static_cast<T>(a.out);
  T src = align ? scale * static_cast<T>(i) : static_cast<T>(scale * (i + 0.5) - 0.5);
  if (src < 0) src = 0;
  i0 = std::min(static_cast<int64_t>(src), a.n - 1);
  i1 = i0 < a.n - 1 ? i0 + 1 : i0;
  l = std::min(std::max(src - static_cast<T>(i0), T(0)), T(1));
}

// x (P, H, W) row-major, P = N * C planes -> (P, h.out, w.out). A 1-d input is H = 1.
template <class T>
std::vector<T> reference(const std::vector<T>& x, int64_t P, const Axis& h, const Axis& w, M mode, bool align) {
  std::vector<T> y;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t oh = 0; oh < h.out; ++oh)
      for (int64_t ow = 0; ow < w.out; ++ow) {
        auto at = [&](int64_t ih, int64_t iw) { return x[static_cast<std::size_t>((p * h.n + ih) * w.n + iw)]; };
        if (mode == M::nearest || mode == M::nearest_exact) {
          bool exact = mode == M::nearest_exact;
          y.push_back(at(nearest_src<T>(h, oh, exact), nearest_src<T>(w, ow, exact)));
        } else if (mode == M::area) {  // adaptive average pooling: [floor(i n / out), ceil((i + 1) n / out))
          int64_t h0 = oh * h.n / h.out, h1 = ((oh + 1) * h.n + h.out - 1) / h.out;
          int64_t w0 = ow * w.n / w.out, w1 = ((ow + 1) * w.n + w.out - 1) / w.out;
          T s = 0;
          for (int64_t a = h0; a < h1; ++a)
            for (int64_t b = w0; b < w1; ++b) s += at(a, b);
          y.push_back(s / static_cast<T>((h1 - h0) * (w1 - w0)));
        } else {  // the kernel's nesting: the W taps inside, the H taps outside
          int64_t h0, h1, w0, w1;
          T lh, lw;
          linear_src<T>(h, oh, align, h0, h1, lh);
          linear_src<T>(w, ow, align, w0, w1, lw);
          T t0 = at(h0, w0) * (T(1) - lw) + at(h0, w1) * lw;
          T t1 = at(h1, w0) * (T(1) - lw) + at(h1, w1) * lw;
          y.push_back(t0 * (T(1) - lh) + t1 * lh);
        }
      }
  return y;
}

// interpolate of seeded x (N, C, spatial...) against the reference, in f64 and f32.
void check_against_reference(const Shape& shape, const InterpolateFuncOptions& o, const std::vector<Axis>& axes) {
  const int64_t P = shape[0] * shape[1];
  const Axis h = axes.size() == 2 ? axes[0] : Axis{1, 1, std::nullopt};
  const Axis& w = axes.back();
  Generator gen(17);
  Tensor x = randn(shape, DType::f64, &gen);
  const bool align = o.align_corners().value_or(false);
  Tensor y = interpolate(x, o);
  Shape out_shape = shape;
  out_shape[out_shape.size() - 1] = w.out;
  if (axes.size() == 2) out_shape[2] = h.out;
  CHECK(tc::str(y.shape()) == tc::str(out_shape));
  CHECK(tc::diff(y, reference<double>(x.to_vector<double>(), P, h, w, o.mode(), align), 1e-14) == "");
  // f32: weights and coordinates in float, as PyTorch's float kernel.
  Tensor x32 = x.to(DType::f32);
  std::vector<float> want32 = reference<float>(x32.to_vector<float>(), P, h, w, o.mode(), align);
  CHECK(tc::diff(interpolate(x32, o), std::vector<double>(want32.begin(), want32.end()), 2e-7) == "");
}

}  // namespace

// ---- by hand ----
TEST_CASE("interpolate: nearest and nearest_exact by hand") {
  Tensor x = f64({1, 2, 3}, {1, 1, 3});
  // 3 -> 5: scale 3/5 = 0.6. nearest floor(i * 0.6) = 0 0 1 1 2; exact floor((i + 0.5) * 0.6) = 0 0 1 2 2.
  CHECK(tc::diff(interpolate(x, sized({5}, M::nearest)), {1, 1, 2, 2, 3}) == "");
  CHECK(tc::diff(interpolate(x, sized({5}, M::nearest_exact)), {1, 1, 2, 3, 3}) == "");
  // scale_factor 2.2: 6 outputs, coordinates by 1 / 2.2: floor(i / 2.2) = 0 0 0 1 1 2 (not
  // i / 2, which PyTorch's channels-last path would take); nearest_exact
  // floor((i + 0.5) / 2.2) = 0 0 1 1 2 2.
  CHECK(tc::diff(interpolate(x, scaled({2.2}, M::nearest)), {1, 1, 1, 2, 2, 3}) == "");
  CHECK(tc::diff(interpolate(x, scaled({2.2}, M::nearest_exact)), {1, 1, 2, 2, 3, 3}) == "");
  // 1.3 keeps 3 elements, but steps by 1 / 1.3: floor(i / 1.3) = 0 0 1; recomputed (3/3), x.
  CHECK(tc::diff(interpolate(x, scaled({1.3}, M::nearest)), {1, 1, 2}) == "");
  CHECK(tc::diff(interpolate(x, scaled({1.3}, M::nearest).recompute_scale_factor(true)), {1, 2, 3}) == "");
  // Down 3 -> 2 with scale_factor 0.7: floor(i / 0.7) = 0, 1 (3/2 would give 0, 1 as well);
  // nearest_exact floor((i + 0.5) / 0.7) = 0, 2.
  CHECK(tc::diff(interpolate(x, scaled({0.7}, M::nearest)), {1, 2}) == "");
  CHECK(tc::diff(interpolate(x, scaled({0.7}, M::nearest_exact)), {1, 3}) == "");
  // 2-d, one factor for both dims: each pixel becomes a 2x2 block.
  Tensor img = f64({1, 2, 3, 4}, {1, 1, 2, 2});
  CHECK(tc::diff(interpolate(img, scaled({2}, M::nearest)), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}) == "");
}

TEST_CASE("interpolate: linear and bilinear by hand") {
  // A ramp x[j] = j interpolates to its clamped source coordinate.
  Tensor ramp = f64({0, 1, 2}, {1, 1, 3});
  // scale_factor 1.7 (5 outputs): src = (i + 0.5) / 1.7 - 0.5 = -0.21 (-> 0), 0.38, 0.97, 1.56, 2.15 (-> x[2]).
  std::vector<double> want;
  for (int i = 0; i < 5; ++i) want.push_back(std::min(std::max((i + 0.5) / 1.7 - 0.5, 0.0), 2.0));
  CHECK(tc::diff(interpolate(ramp, scaled({1.7}, M::linear)), want, 1e-15) == "");
  // recompute_scale_factor: scale 3/5, src = (i + 0.5) 0.6 - 0.5 = -0.2, 0.4, 1, 1.6, 2.2.
  CHECK(tc::diff(interpolate(ramp, scaled({1.7}, M::linear).recompute_scale_factor(true)), {0, 0.4, 1, 1.6, 2},
                 1e-15) == "");
  // align_corners: src = i (3 - 1) / (5 - 1) = 0, 0.5, 1, 1.5, 2.
  CHECK(tc::diff(interpolate(ramp, sized({5}, M::linear).align_corners(true)), {0, 0.5, 1, 1.5, 2}, 1e-15) == "");
  // [0, 1] -> 4 without align_corners: src = (i + 0.5) / 2 - 0.5 = -0.25 (-> 0), 0.25, 0.75, 1.25 (-> x[1]).
  Tensor two = f64({0, 1}, {1, 1, 2});
  CHECK(tc::diff(interpolate(two, sized({4}, M::linear)), {0, 0.25, 0.75, 1}, 1e-15) == "");
  // align_corners with one output: scale 0, the first element.
  CHECK(tc::diff(interpolate(f64({5, 7, 9}, {1, 1, 3}), sized({1}, M::linear).align_corners(true)), {5}) == "");
  // bilinear 2x2 -> 3x3 with align_corners: the corners stay, the rest are midpoints.
  Tensor img = f64({0, 1, 2, 3}, {1, 1, 2, 2});
  CHECK(tc::diff(interpolate(img, sized({3}, M::bilinear).align_corners(true)), {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3},
                 1e-15) == "");
  // Same size: x itself, whatever the scale factor (1.2 gives floor(2 * 1.2) = 2).
  CHECK(tc::diff(interpolate(img, scaled({1.2}, M::bilinear)), {0, 1, 2, 3}) == "");
}

TEST_CASE("interpolate: area is adaptive average pooling") {
  // 6 -> 4: windows [0, 2), [1, 3), [3, 5), [4, 6) -> 1.5, 2.5, 4.5, 5.5.
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {1, 1, 6});
  CHECK(tc::diff(interpolate(x, sized({4}, M::area)), {1.5, 2.5, 4.5, 5.5}, 1e-15) == "");
  // 2x4 with scale_factor 0.5 -> 1x2: each output is the mean of a 2x2 block.
  Tensor img = f64({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  CHECK(tc::diff(interpolate(img, scaled({0.5}, M::area)), {(1 + 2 + 5 + 6) / 4.0, (3 + 4 + 7 + 8) / 4.0}, 1e-15) ==
        "");
}

TEST_CASE("interpolate: inf and NaN reach exactly the outputs that read them") {
  // PyTorch's x[i0] w0 + x[i1] w1 (checked with torch 1.13): 4 -> 8 has src = -0.25 (-> 0,
  // reading x0 * 1 + x1 * 0 = inf * 0 = NaN), 0.25, 0.75, 1.25, 1.75 (inf), 2.25, 2.75, 3.25.
  const double inf = INFINITY;
  Tensor x = f64({1, inf, 3, 4}, {1, 1, 4});
  CHECK(tc::diff(interpolate(x, sized({8}, M::linear)), {NAN, inf, inf, inf, inf, 3.25, 3.75, 4}) == "");
  // The same size is x * 1 + x * 0, so inf becomes NaN as in PyTorch; nearest copies it.
  CHECK(tc::diff(interpolate(x, sized({4}, M::linear)), {1, NAN, 3, 4}) == "");
  CHECK(tc::diff(interpolate(x, sized({8}, M::nearest)), {1, 1, inf, inf, 3, 3, 4, 4}) == "");
  // A NaN at (0, 1) of a 2x2 image: every output of rows 0 and 1 reads that row with weight
  // 0 or more; row 2 (src 1) reads row 1 only.
  Tensor img = f64({1, NAN, 3, 4}, {1, 1, 2, 2});
  CHECK(tc::diff(interpolate(img, sized({3, 3}, M::bilinear).align_corners(true)),
                 {NAN, NAN, NAN, NAN, NAN, NAN, 3, 3.5, 4}) == "");
}

// ---- against the reference loops ----
TEST_CASE("interpolate: nearest and nearest_exact match PyTorch's index math") {
  for (M mode : {M::nearest, M::nearest_exact}) {
    INFO(interpolate_mode_name(mode));
    check_against_reference({2, 3, 7}, sized({11}, mode), {{7, 11, std::nullopt}});
    check_against_reference({2, 3, 7}, sized({3}, mode), {{7, 3, std::nullopt}});
    check_against_reference({2, 3, 7}, scaled({1.3}, mode), {{7, 9, 1.3}});
    check_against_reference({1, 2, 5, 6}, scaled({2.0, 0.5}, mode), {{5, 10, 2.0}, {6, 3, 0.5}});
    check_against_reference({1, 2, 5, 6}, scaled({1.7}, mode).recompute_scale_factor(true),
                            {{5, 8, std::nullopt}, {6, 10, std::nullopt}});
    check_against_reference({2, 1, 4, 9}, sized({7, 4}, mode), {{4, 7, std::nullopt}, {9, 4, std::nullopt}});
    check_against_reference({1, 1, 3, 3}, scaled({1.2}, mode), {{3, 3, 1.2}, {3, 3, 1.2}});  // same size
  }
}

TEST_CASE("interpolate: linear and bilinear match PyTorch's index math") {
  for (bool align : {false, true}) {
    INFO("align_corners ", align);
    auto lin = [&](InterpolateFuncOptions o) { return o.mode(M::linear).align_corners(align); };
    auto bil = [&](InterpolateFuncOptions o) { return o.mode(M::bilinear).align_corners(align); };
    check_against_reference({2, 3, 7}, lin(InterpolateFuncOptions().size({11})), {{7, 11, std::nullopt}});
    check_against_reference({2, 3, 7}, lin(InterpolateFuncOptions().size({3})), {{7, 3, std::nullopt}});
    check_against_reference({2, 3, 7}, lin(InterpolateFuncOptions().size({1})), {{7, 1, std::nullopt}});
    check_against_reference({2, 3, 7}, lin(InterpolateFuncOptions().scale_factor({1.3})), {{7, 9, 1.3}});
    check_against_reference({1, 2, 5, 6}, bil(InterpolateFuncOptions().scale_factor({2.0, 0.5})),
                            {{5, 10, 2.0}, {6, 3, 0.5}});
    check_against_reference({1, 2, 5, 6}, bil(InterpolateFuncOptions().scale_factor({0.7})),
                            {{5, 3, 0.7}, {6, 4, 0.7}});
    check_against_reference({2, 1, 4, 9}, bil(InterpolateFuncOptions().size({7, 4})),
                            {{4, 7, std::nullopt}, {9, 4, std::nullopt}});
    check_against_reference({1, 1, 3, 4}, bil(InterpolateFuncOptions().size({3, 8})),  // one dim kept
                            {{3, 3, std::nullopt}, {4, 8, std::nullopt}});
  }
}

TEST_CASE("interpolate: area matches adaptive average pooling") {
  check_against_reference({2, 3, 7}, sized({3}, M::area), {{7, 3, std::nullopt}});
  check_against_reference({1, 2, 5, 6}, sized({3, 4}, M::area), {{5, 3, std::nullopt}, {6, 4, std::nullopt}});
  // A scale factor becomes the integer size floor(n * s) (torch recomputes it for area).
  check_against_reference({1, 2, 5, 6}, scaled({0.7}, M::area), {{5, 3, std::nullopt}, {6, 4, std::nullopt}});
}

TEST_CASE("interpolate: layouts, batch 0, dtypes and autocast") {
  Generator gen(3);
  Tensor base = randn({1, 2, 5, 4}, DType::f64, &gen);
  Tensor t = base.transpose(2, 3);  // (1, 2, 4, 5), not contiguous
  for (M mode : {M::nearest, M::nearest_exact, M::bilinear, M::area}) {
    INFO(interpolate_mode_name(mode));
    auto o = sized({7, 3}, mode);
    // (area's pooling may sum a strided window in another order: last-bit differences)
    CHECK(tc::diff(interpolate(t, o), interpolate(t.contiguous(), o), 1e-15) == "");
  }
  // An empty batch keeps its shape (PyTorch allows N = 0 with non-empty C and spatial dims).
  CHECK(tc::str(interpolate(zeros({0, 2, 4}), scaled({2}, M::linear)).shape()) == "[0, 2, 8]");
  // nearest copies uint8 images as PyTorch's Byte kernel; linear needs floats.
  Tensor u8 = f64({10, 20, 30, 40}, {1, 1, 2, 2}).to(DType::u8);
  Tensor up = interpolate(u8, scaled({2}, M::nearest));
  CHECK(up.dtype() == DType::u8);
  CHECK(tc::diff(up, {10, 10, 20, 20, 10, 10, 20, 20, 30, 30, 40, 40, 30, 30, 40, 40}) == "");
  CHECK_THROWS_MSG(interpolate(u8, scaled({2}, M::bilinear)), DTypeError, "interpolate: mode bilinear");
  // bf16: computed in f32 and rounded once.
  Tensor h = base.to(DType::bf16);
  auto o = sized({7, 3}, M::bilinear);
  Tensor yh = interpolate(h, o);
  CHECK(yh.dtype() == DType::bf16);
  CHECK(tc::diff(yh, interpolate(h.to(DType::f32), o).to(DType::bf16)) == "");
  // Under autocast the upsample ops run in f32 (PyTorch's CPU fp32 list).
  {
    autocast guard(DType::bf16);
    CHECK(interpolate(h, o).dtype() == DType::f32);
    CHECK(interpolate(base.to(DType::f32), o).dtype() == DType::f32);
  }
}

// ---- gradients by hand (the op table gradchecks every mode to second order) ----
TEST_CASE("interpolate: gradients") {
  // Nearest x2 copies each pixel to a 2x2 block: d sum / dx = 4.
  Tensor img = f64({1, 2, 3, 4}, {1, 1, 2, 2}).requires_grad_();
  interpolate(img, scaled({2}, M::nearest)).sum().backward();
  CHECK(tc::diff(img.grad(), {4, 4, 4, 4}) == "");
  // [a, b] -> 4 with align_corners: rows (1, 0), (2/3, 1/3), (1/3, 2/3), (0, 1); each
  // column sums to 2. With weights r = [1, 2, 3, 4] on the outputs: a gets 1 + 4/3 + 1 = 10/3,
  // b gets 2/3 + 2 + 4 = 20/3.
  Tensor x = f64({5, -1}, {1, 1, 2}).requires_grad_();
  Tensor y = interpolate(x, sized({4}, M::linear).align_corners(true));
  (y * f64({1, 2, 3, 4}, {1, 1, 4})).sum().backward();
  CHECK(tc::diff(x.grad(), {10.0 / 3, 20.0 / 3}, 1e-15) == "");
}

// ---- errors ----
TEST_CASE("interpolate: errors name the op, the problem and the shapes") {
  Tensor x = zeros({1, 2, 4, 4});
  CHECK_THROWS_MSG(interpolate(x, InterpolateFuncOptions().size({8}).scale_factor({2})), ValueError,
                   "only one of size or scale_factor");
  CHECK_THROWS_MSG(interpolate(x), ValueError, "interpolate: either size or scale_factor should be defined");
  CHECK_THROWS_MSG(interpolate(x, sized({8, 8, 8}, M::nearest)), ValueError,
                   "size [8, 8, 8] for input shape [1, 2, 4, 4]");
  CHECK_THROWS_MSG(interpolate(zeros({1, 2, 4}), scaled({2, 2}, M::linear)), ValueError,
                   "scale_factor [2, 2] for input shape [1, 2, 4]");
  // align_corners, even false, with a mode that does not interpolate (PyTorch's ValueError).
  for (M mode : {M::nearest, M::nearest_exact, M::area})
    CHECK_THROWS_MSG(interpolate(x, scaled({2}, mode).align_corners(false)), ValueError,
                     "align_corners option can only be set with the interpolating modes");
  CHECK_THROWS_MSG(interpolate(x, scaled({2}, M::linear)), ShapeError, "shape [1, 2, 4, 4], but linear mode needs 3-D");
  CHECK_THROWS_MSG(interpolate(zeros({1, 2, 4}), scaled({2}, M::bilinear)), ShapeError,
                   "shape [1, 2, 4], but bilinear mode needs 4-D");
  CHECK_THROWS_MSG(interpolate(zeros({2, 4}), scaled({2}, M::nearest)), ShapeError, "got 2-D input of shape [2, 4]");
  CHECK_THROWS_MSG(interpolate(zeros({1, 1, 2, 2, 2}), scaled({2}, M::nearest)), ShapeError, "[1, 1, 2, 2, 2]");
  CHECK_THROWS_MSG(interpolate(x, sized({0, 4}, M::nearest)), ValueError, "output sizes should be greater than 0");
  CHECK_THROWS_MSG(interpolate(x, sized({-3}, M::bilinear)), ValueError, "output size -3");
  CHECK_THROWS_MSG(interpolate(x, scaled({0.2}, M::nearest)), ValueError, "output size 0");  // floor(4 * 0.2)
  CHECK_THROWS_MSG(interpolate(x, scaled({-2}, M::nearest)), ValueError, "scale_factor must be positive and finite");
  CHECK_THROWS_MSG(interpolate(x, scaled({NAN}, M::nearest)), ValueError, "scale_factor must be positive and finite");
  CHECK_THROWS_MSG(interpolate(x, scaled({1e300}, M::nearest)), ValueError, "does not fit in int64");
  // A size too large to allocate is the allocator's error, not std::bad_alloc.
  CHECK_THROWS_AS(interpolate(x, sized({int64_t{1} << 60}, M::nearest)), Error);
  CHECK_THROWS_AS(interpolate(zeros({1, 1, 4}), sized({int64_t{1} << 40}, M::linear)), Error);
  CHECK_THROWS_MSG(interpolate(x, sized({8}, M::nearest).recompute_scale_factor(true)), ValueError,
                   "recompute_scale_factor is not meaningful with an explicit size");
  CHECK_THROWS_MSG(interpolate(zeros({1, 0, 4}), scaled({2}, M::nearest)), ShapeError, "[1, 0, 4]");
  CHECK_THROWS_MSG(interpolate(zeros({1, 2, 4}, DType::i64), scaled({2}, M::nearest)), DTypeError, "got i64");
}
