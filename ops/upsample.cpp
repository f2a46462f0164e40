// Resampling: F.interpolate, one spatial dim at a time, from differentiable ops, so every
// derivative comes free. nearest is an index_select per dim (its backward is index_add);
// linear is x[i0] * w0 + x[i1] * w1 per dim with PyTorch's source indices and weights,
// computed here in the input's float type exactly as PyTorch 1.13's CPU kernel for NCHW
// inputs (aten/src/ATen/native/UpSample.h: compute_scales_value, area_pixel_compute_scale,
// area_pixel_compute_source_index, compute_source_index_and_lambda; the nearest indices of
// cpu/UpSampleKernel.cpp). Two gathers instead of an (out, in)
// interpolation matrix: O(out) work per row instead of O(in * out), and an inf in one
// pixel stays in the outputs that read it instead of making 0 * inf = NaN along the row.
// The last dim goes first, as PyTorch's kernel nests its loops, so bilinear rounds as it:
// out = (x00 w0 + x01 w1) h0 + (x10 w0 + x11 w1) h1. area is adaptive average pooling.
//
// Shapes: N batch, C channels, L / H, W the input's spatial sizes, and the output's
// L_out / H_out, W_out.
#include "attograd/ops/upsample.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "attograd/autocast.h"
#include "attograd/detail/error_context.h"
#include "attograd/ops/pool.h"
#include "op_util.h"

namespace ag {

const char* interpolate_mode_name(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::nearest: return "nearest";
    case InterpolateMode::nearest_exact: return "nearest-exact";
    case InterpolateMode::linear: return "linear";
    case InterpolateMode::bilinear: return "bilinear";
    case InterpolateMode::area: return "area";
  }
  return "?";
}

namespace {

std::string doubles_str(const std::vector<double>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
  return os.str();
}

// What the arguments resolve to, per spatial dim: input and output sizes, and the scale
// factor the coordinates use (unset: n / out).
struct Plan {
  std::vector<int64_t> in, out;
  std::vector<std::optional<double>> scale_factor;
  bool align_corners = false;
};

// The checks of torch.nn.functional.interpolate and of the upsample kernels, in that order.
Plan make_plan(const Tensor& x, const InterpolateFuncOptions& o) {
  const InterpolateMode mode = o.mode();
  const char* name = interpolate_mode_name(mode);
  const bool interpolating = mode == InterpolateMode::linear || mode == InterpolateMode::bilinear;
  AG_CHECK(interpolating || !o.align_corners().has_value(), ValueError,
           "interpolate: align_corners option can only be set with the interpolating modes linear | bilinear, not ",
           name, " (input shape ", x.shape(), ")");
  AG_CHECK(x.dim() == 3 || x.dim() == 4, ShapeError,
           "interpolate: expected a 3-D (N, C, L) or 4-D (N, C, H, W) input, got ", x.dim(), "-D input of shape ",
           x.shape(), " for mode ", name);
  AG_CHECK(mode != InterpolateMode::linear || x.dim() == 3, ShapeError, "interpolate: got ", x.dim(),
           "-D input of shape ", x.shape(), ", but linear mode needs 3-D input (N, C, L)");
  AG_CHECK(mode != InterpolateMode::bilinear || x.dim() == 4, ShapeError, "interpolate: got ", x.dim(),
           "-D input of shape ", x.shape(), ", but bilinear mode needs 4-D input (N, C, H, W)");
  const auto dims = static_cast<std::size_t>(x.dim() - 2);
  const auto& size = o.size();
  const auto& factor = o.scale_factor();
  AG_CHECK(!(size && factor), ValueError, "interpolate: only one of size or scale_factor should be defined, got size ",
           list_str(*size), " and scale_factor ", doubles_str(*factor), " (input shape ", x.shape(), ")");
  AG_CHECK(size || factor, ValueError, "interpolate: either size or scale_factor should be defined (input shape ",
           x.shape(), ")");
  // One value serves every spatial dim, as a Python scalar does.
  AG_CHECK(!size || size->size() == 1 || size->size() == dims, ValueError,
           "interpolate: size must have one value or one per spatial dim, got size ", list_str(*size),
           " for input shape ", x.shape(), " (", dims, " spatial dims)");
  AG_CHECK(!factor || factor->size() == 1 || factor->size() == dims, ValueError,
           "interpolate: scale_factor must have one value or one per spatial dim, got scale_factor ",
           doubles_str(*factor), " for input shape ", x.shape(), " (", dims, " spatial dims)");
  const bool recompute = o.recompute_scale_factor().value_or(false);
  AG_CHECK(!(recompute && size), ValueError,
           "interpolate: recompute_scale_factor is not meaningful with an explicit size (size ", list_str(*size),
           ", input shape ", x.shape(), ")");
  for (int64_t d = 1; d < x.dim(); ++d)
    AG_CHECK(x.size(d) > 0, ShapeError, "interpolate: expected non-empty channel and spatial dims, got input of shape ",
             x.shape());

  Plan p;
  p.align_corners = o.align_corners().value_or(false);
  for (std::size_t i = 0; i < dims; ++i) {
    const int64_t n = x.size(static_cast<int64_t>(i) + 2);
    int64_t out = 0;
    std::optional<double> sf;
    if (size) {
      out = (*size)[size->size() == 1 ? 0 : i];
    } else {
      const double s = (*factor)[factor->size() == 1 ? 0 : i];
      AG_CHECK(std::isfinite(s) && s > 0, ValueError, "interpolate: scale_factor must be positive and finite, got ",
               doubles_str(*factor), " (input shape ", x.shape(), ")");
      const double od = std::floor(static_cast<double>(n) * s);  // PyTorch: (int64_t)(n * s)
      AG_CHECK(od < 9.2e18, ValueError, "interpolate: output size ", od, " of input shape ", x.shape(),
               " times scale_factor ", doubles_str(*factor), " does not fit in int64");
      out = static_cast<int64_t>(od);
      // area always resizes by the integer size (torch recomputes the scale for it).
      if (!recompute && mode != InterpolateMode::area) sf = s;
    }
    AG_CHECK(out > 0, ValueError, "interpolate: input and output sizes should be greater than 0, but got input shape ",
             x.shape(), " and output size ", out, " for spatial dim ", i,
             size ? std::string(" (size " + list_str(*size) + ")")
                  : std::string(" (scale_factor " + doubles_str(*factor) + ")"));
    p.in.push_back(n);
    p.out.push_back(out);
    p.scale_factor.push_back(sf);
  }
  return p;
}

// compute_scales_value<T>: 1 / scale_factor when one was given, else n / out.
template <class T>
T scales_value(std::optional<double> sf, int64_t n, int64_t out) {
  return sf && *sf > 0 ? static_cast<T>(1.0 / *sf) : static_cast<T>(n) / static_cast<T>(out);
}

// ---- nearest ----------------------------------------------------------------------------
// The source index of each output index, as the kernel of NCHW-contiguous inputs
// (HelperInterpNearest / HelperInterpNearestExact in cpu/UpSampleKernel.cpp), in T (the
// input's float type): nearest floorf(scale * i); nearest_exact floorf(src + 0.5) with
// src = max(scale * (i + 0.5) - 0.5, 0); both clamped to n - 1. floorf reads a float, so
// a double product is rounded to float first. (PyTorch's channels-last path, which a
// C = 1 input also takes, uses nearest_idx instead, whose out == n and out == 2n shortcuts
// ignore a scale factor: scale_factor 2.2 on 3 gives floor(i / 2.2) here, i / 2 there.)
// (Filled in place in tensors, as the linear taps below: a huge size is then the
// allocator's MemoryError, not std::bad_alloc.)
template <class T>
Tensor nearest_indices(int64_t n, int64_t out, std::optional<double> sf, bool exact) {
  Tensor idx = empty(Shape{out}, DType::i64);  // (out)
  int64_t* src = idx.data<int64_t>();
  const T scale = scales_value<T>(sf, n, out);
  for (int64_t i = 0; i < out; ++i) {
    float f = 0;
    if (exact) {
      T real = static_cast<T>(scale * (static_cast<double>(i) + 0.5) - 0.5);  // area_pixel_compute_source_index
      if (real < T(0)) real = T(0);
      f = static_cast<float>(real + 0.5);
    } else {
      f = static_cast<float>(scale * static_cast<T>(i));
    }
    src[i] = std::min(static_cast<int64_t>(std::floor(f)), n - 1);
  }
  return idx;
}

// ---- linear ------------------------------------------------------------------------------
// compute_source_index_and_lambda per output index: x[i0] * w0 + x[i1] * w1.
struct Taps {
  Tensor i0, i1;  // (out) i64
  Tensor w0, w1;  // (out, 1, ..., 1) in T: broadcast along the dim being resampled
};

template <class T>
Taps linear_taps(int64_t n, int64_t out, std::optional<double> sf, bool align, const Shape& wshape) {
  const T scale = align ? (out > 1 ? static_cast<T>(n - 1) / static_cast<T>(out - 1) : T(0))
                        : scales_value<T>(sf, n, out);  // area_pixel_compute_scale
  Taps t{empty(Shape{out}, DType::i64), empty(Shape{out}, DType::i64), empty(wshape, dtype_of<T>::value),
         empty(wshape, dtype_of<T>::value)};
  int64_t *i0 = t.i0.data<int64_t>(), *i1 = t.i1.data<int64_t>();
  T *w0 = t.w0.data<T>(), *w1 = t.w1.data<T>();
  for (int64_t i = 0; i < out; ++i) {
    int64_t a = i, b = i;
    T l1 = 0;
    if (out != n) {  // same size: x * 1 + x * 0, whatever the scale
      // area_pixel_compute_source_index (non-cubic): (i + 0.5) * scale - 0.5 in double,
      // stored in T, and clamped at 0.
      T src = static_cast<T>(i) * scale;
      if (!align) {
        src = static_cast<T>(scale * (static_cast<double>(i) + 0.5) - 0.5);
        if (src < T(0)) src = T(0);
      }
      a = std::min(static_cast<int64_t>(src), n - 1);
      b = a + (a < n - 1 ? 1 : 0);
      l1 = std::min(std::max(src - static_cast<T>(a), T(0)), T(1));
    }
    i0[i] = a;
    i1[i] = b;
    w0[i] = T(1) - l1;
    w1[i] = l1;
  }
  return t;
}

// x with spatial dim `dim` resampled linearly from n to out.
Tensor linear_dim(const Tensor& x, int64_t dim, int64_t n, int64_t out, std::optional<double> sf, bool align) {
  std::vector<int64_t> ws(static_cast<std::size_t>(x.dim() - dim), 1);  // (out, 1, ...) up to the last dim
  ws[0] = out;
  const Shape wshape(ws);
  Taps t = x.dtype() == DType::f64 ? linear_taps<double>(n, out, sf, align, wshape)
                                   : linear_taps<float>(n, out, sf, align, wshape);
  return index_select(x, dim, t.i0) * t.w0 + index_select(x, dim, t.i1) * t.w1;
}

}  // namespace

// ---- interpolate ----------------------------------------------------------------------------
// x (N, C, L) -> (N, C, L_out), or (N, C, H, W) -> (N, C, H_out, W_out).
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) try {
  const Plan p = make_plan(input, options);
  const InterpolateMode mode = options.mode();
  if (mode == InterpolateMode::area)  // not on the autocast lists: runs in the input's dtype
    return input.dim() == 3 ? adaptive_avg_pool1d(input, p.out) : adaptive_avg_pool2d(input, p.out);
  const bool nearest = mode == InterpolateMode::nearest || mode == InterpolateMode::nearest_exact;
  // PyTorch's nearest kernels also take uint8 images; its linear ones floats only.
  AG_CHECK(input.is_floating_point() || (nearest && input.dtype() == DType::u8), DTypeError, "interpolate: mode ",
           interpolate_mode_name(mode), " expects a floating input (f32, f64, bf16, f16", nearest ? ", or u8" : "",
           "), got ", input.dtype(), " with shape ", input.shape());
  const Tensor x = detail::autocast_f32(input);  // the upsample ops are on the fp32 list
  const auto dims = static_cast<int64_t>(p.in.size());
  if (nearest) {
    Tensor y = x;  // a copy of x's elements whatever the dtype: no rounding
    for (int64_t i = dims - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      const bool exact = mode == InterpolateMode::nearest_exact;
      y = index_select(y, i + 2,
                       x.dtype() == DType::f64 ? nearest_indices<double>(p.in[k], p.out[k], p.scale_factor[k], exact)
                                               : nearest_indices<float>(p.in[k], p.out[k], p.scale_factor[k], exact));
    }
    return y;
  }
  // linear / bilinear: 16-bit inputs compute in f32 and round once at the end.
  const bool half = x.dtype() == DType::bf16 || x.dtype() == DType::f16;
  Tensor y = half ? to(x, DType::f32) : x;
  for (int64_t i = dims - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    y = linear_dim(y, i + 2, p.in[k], p.out[k], p.scale_factor[k], p.align_corners);
  }
  return half ? to(y, x.dtype()) : y;
} catch (const Error& e) { detail::rethrow_in_op("interpolate", e); }

}  // namespace ag
