// Pooling: max (a kernel over windows, kernels/conv.cpp), average (the window sums of
// im2col's columns, times 1 / divisor) and adaptive (windows of varying size). Every op
// runs on (N, C, H, W): a 1-d input gets height 1, an unbatched one a batch of 1.
//
// Max pooling's backward scatters g to the saved indices; that scatter's backward is a
// gather at the same indices and the gather's is the scatter again, so each is recorded
// with the other as its backward and double backward works. Average pooling is a
// composite (im2col, sum, mul) and adaptive average a product with pooling matrices:
// their gradients come free.
#include "attograd/ops/pool.h"

#include "attograd/detail/error_context.h"
#include "conv_geometry.h"
#include "op_util.h"

namespace ag {
namespace {
using namespace conv_detail;

// One spatial dim of a pooling window, checked (PyTorch's pool2d_shape_check).
struct PoolDim {
  int64_t in, out, kernel, stride, pad, dilation;
};

// div_rtn: division rounding toward negative infinity.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::vector<PoolDim> pool_dims(const char* op, std::size_t D, const Tensor& x4, const std::vector<int64_t>& kernel_size,
                               const std::vector<int64_t>& stride_in, const std::vector<int64_t>& padding,
                               const std::vector<int64_t>& dilation, bool ceil_mode, const Shape& caller_shape) {
  const auto k = per_dim(kernel_size, D, op, "kernel_size", 1);
  const auto s = stride_in.empty() ? k : per_dim(stride_in, D, op, "stride", 1);
  const auto p = per_dim(padding, D, op, "padding", 0), d = per_dim(dilation, D, op, "dilation", 1);
  std::vector<PoolDim> dims;
  for (std::size_t i = 0; i < D; ++i) {
    const int64_t in = x4.shape()[4 - int64_t(D) + int64_t(i)];
    AG_CHECK(p[i] <= k[i] / 2, ValueError, op, ": padding ", list_str(padding), " must be at most half of kernel_size ",
             list_str(kernel_size), " (input shape ", caller_shape, ")");
    // p <= k / 2 and span >= k keep every sum below in + k + s: no overflow past the checks.
    const int64_t span = checked_mul(d[i], k[i] - 1, op) + 1;
    const int64_t reach = checked_add(padded(in, p[i], op), ceil_mode ? s[i] - 1 : 0, op);
    int64_t out = floor_div(reach - span, s[i]) + 1;
    if (ceil_mode && (out - 1) * s[i] >= in + p[i]) --out;  // the last window starts inside the input or left padding
    AG_CHECK(out >= 1, ShapeError, op, ": input shape ", caller_shape, " is too small for kernel_size ",
             list_str(kernel_size), ", dilation ", list_str(dilation), " and padding ", list_str(padding),
             " (output size ", out, " along spatial dim ", i, ")");
    dims.push_back({in, out, k[i], s[i], p[i], d[i]});
  }
  if (D == 1) dims.insert(dims.begin(), PoolDim{1, 1, 1, 1, 0, 1});
  return dims;
}

// x as (N, C, H, W), checking the rank: D + 1 (unbatched) or D + 2 dims.
Tensor pool_4d(const char* op, std::size_t D, const Tensor& x) {
  AG_CHECK(x.defined(), ValueError, op, ": input is undefined");
  check_float(x, op);
  const int64_t r = int64_t(D);
  AG_CHECK(x.dim() == r + 1 || x.dim() == r + 2, ShapeError, op, ": expected a ", r + 1, "-D (unbatched) or ", r + 2,
           "-D (batched) input, got input shape ", x.shape());
  for (int64_t i = x.dim() - r; i < x.dim(); ++i)
    AG_CHECK(x.shape()[i] > 0, ShapeError, op, ": spatial sizes must be positive, got input shape ", x.shape());
  Tensor y = x.dim() == r + 2 ? x : unsqueeze(x, 0);
  return D == 1 ? unsqueeze(y, 2) : y;
}

Tensor unpool_4d(const Tensor& y, std::size_t D, const Tensor& caller) {
  Tensor r = D == 1 ? squeeze(y, 2) : y;
  return caller.dim() == int64_t(D) + 2 ? r : squeeze(r, 0);
}

K::PoolWindows windows_of(const PoolDim& d) { return {d.in, d.out, d.kernel, d.stride, d.pad, d.dilation, false}; }
K::PoolWindows adaptive_windows(int64_t in, int64_t out) { return {in, out, 1, 1, 0, 1, true}; }

Tensor gather_at(const Tensor& gg, const Tensor& idx);

// g (N, C, oH, oW) scattered to the indices in zeros (N, C, H, W).
Tensor scatter_to(const Tensor& g, const Tensor& idx, int64_t H, int64_t W) {
  return record("max_pool_backward", K::max_pool_backward(g, idx, H, W), {g},
                [idx](const Tensor& gg, NeedsGrad) { return Grads{gather_at(gg, idx)}; });
}

Tensor gather_at(const Tensor& gg, const Tensor& idx) {
  const int64_t H = gg.shape()[2], W = gg.shape()[3];
  return record("max_pool_double_backward", K::gather_planes(gg, idx), {gg},
                [idx, H, W](const Tensor& g, NeedsGrad) { return Grads{scatter_to(g, idx, H, W)}; });
}

std::pair<Tensor, Tensor> max_pool_windows(const char* op, const Tensor& x4, const K::PoolWindows& wh,
                                           const K::PoolWindows& ww) {
  auto [values, idx] = K::max_pool(x4, wh, ww);
  const int64_t H = x4.shape()[2], W = x4.shape()[3];
  Tensor out = record(op, values, {x4},
                      [idx = idx, H, W](const Tensor& g, NeedsGrad) { return Grads{scatter_to(g, idx, H, W)}; });
  return {out, idx};
}

std::pair<Tensor, Tensor> max_pool_nd(const char* op, std::size_t D, const Tensor& x,
                                      const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                                      bool ceil_mode) {
  const Tensor x4 = pool_4d(op, D, x);
  const auto dims = pool_dims(op, D, x4, kernel_size, stride, padding, dilation, ceil_mode, x.shape());
  auto [v, i] = max_pool_windows(op, x4, windows_of(dims[0]), windows_of(dims[1]));
  return {unpool_4d(v, D, x), unpool_4d(i, D, x)};
}

// The divisor of each output position along one dim (PyTorch's avg_pool2d: the window
// clipped to the padded input, or to the input without count_include_pad).
std::vector<double> avg_divisors(const PoolDim& d, bool count_include_pad) {
  std::vector<double> r;
  for (int64_t o = 0; o < d.out; ++o) {
    int64_t start = o * d.stride - d.pad, end = std::min(start + d.kernel, d.in + d.pad);
    const int64_t padded = end - start;
    start = std::max<int64_t>(start, 0);
    end = std::min(end, d.in);
    r.push_back(static_cast<double>(count_include_pad ? padded : std::max<int64_t>(end - start, 0)));
  }
  return r;
}

Tensor avg_pool_nd(const char* op, std::size_t D, const Tensor& x, const std::vector<int64_t>& kernel_size,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& padding, bool ceil_mode,
                   bool count_include_pad, std::optional<int64_t> divisor_override) {
  AG_CHECK(!divisor_override || *divisor_override != 0, ValueError, op, ": divisor_override must be non-zero");
  if (x.defined() && is_reduced_float(x.dtype()))  // PyTorch's CPU rule: sum and divide in f32, round once
    return avg_pool_nd(op, D, x.to(DType::f32), kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)
        .to(x.dtype());
  const Tensor x4 = pool_4d(op, D, x);
  const auto dims = pool_dims(op, D, x4, kernel_size, stride, padding, {1}, ceil_mode, x.shape());
  const int64_t N = x4.shape()[0], C = x4.shape()[1], H = x4.shape()[2], W = x4.shape()[3];
  K::Window wh{dims[0].in, dims[0].out, dims[0].kernel, dims[0].stride, dims[0].pad, 1};
  K::Window ww{dims[1].in, dims[1].out, dims[1].kernel, dims[1].stride, dims[1].pad, 1};
  // The columns first: their allocation refuses a size no machine could hold before the
  // divisors below (oH oW of them) are made.
  Tensor cols = im2col_windows(reshape(x4, {N * C, 1, H, W}), wh, ww);  // (N C, K, oH oW)
  // Scale (oH oW): 1 / divisor; a window outside the input (its divisor 0) sums nothing.
  const auto dh = avg_divisors(dims[0], count_include_pad), dw = avg_divisors(dims[1], count_include_pad);
  std::vector<double> scale;
  for (double a : dh)
    for (double b : dw) {
      const double div = divisor_override ? double(*divisor_override) : a * b;
      scale.push_back(div == 0 ? 0.0 : 1.0 / div);
    }
  Tensor s = Tensor::from_vector(scale, {int64_t(scale.size())}).to(x.dtype());
  Tensor out = reshape(sum(cols, {1}) * s, {N, C, dims[0].out, dims[1].out});
  return unpool_4d(out, D, x);
}

// (out, in) with 1 / count over each adaptive window: adaptive average pooling along one
// dim is a product with it. Filled in a tensor (the allocator refuses a size no machine
// could hold, with a MemoryError) before its out taps are made.
Tensor adaptive_matrix(int64_t in, int64_t out, DType dtype) {
  Tensor m = zeros({out, in}, DType::f64);
  const K::Taps t = K::taps_of(adaptive_windows(in, out));
  double* p = m.data<double>();
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < t.count[size_t(o)]; ++c)
      p[o * in + t.first[size_t(o)] + c] = 1.0 / static_cast<double>(t.count[size_t(o)]);
  return m.to(dtype);
}

std::vector<int64_t> adaptive_size(const char* op, std::size_t D, const std::vector<int64_t>& output_size) {
  return per_dim(output_size, D, op, "output_size", 1);
}

Tensor adaptive_avg_nd(const char* op, std::size_t D, const Tensor& x, const std::vector<int64_t>& output_size) {
  const auto size = adaptive_size(op, D, output_size);
  if (x.defined() && is_reduced_float(x.dtype()))  // computed in f32, rounded once
    return adaptive_avg_nd(op, D, x.to(DType::f32), output_size).to(x.dtype());
  const Tensor x4 = pool_4d(op, D, x);
  const int64_t H = x4.shape()[2], W = x4.shape()[3];
  const int64_t oH = D == 1 ? 1 : size[0], oW = size[D - 1];
  Tensor out;
  if (oH == 1 && oW == 1) {
    out = mean(x4, {2, 3}, true);  // global average pooling
  } else {
    out = x4;
    if (W != oW) out = matmul(out, transpose(adaptive_matrix(W, oW, x.dtype()), 0, 1));
    if (H != oH) out = matmul(adaptive_matrix(H, oH, x.dtype()), out);
  }
  return unpool_4d(out, D, x);
}

std::pair<Tensor, Tensor> adaptive_max_nd(const char* op, std::size_t D, const Tensor& x,
                                          const std::vector<int64_t>& output_size) {
  const auto size = adaptive_size(op, D, output_size);
  const Tensor x4 = pool_4d(op, D, x);
  const int64_t oH = D == 1 ? 1 : size[0], oW = size[D - 1];
  auto [v, i] = max_pool_windows(op, x4, adaptive_windows(x4.shape()[2], oH), adaptive_windows(x4.shape()[3], oW));
  return {unpool_4d(v, D, x), unpool_4d(i, D, x)};
}

}  // namespace

// ---- max ----
Tensor max_pool1d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) try {
  return max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode).first;
} catch (const Error& e) { detail::rethrow_in_op("max_pool1d", e); }

Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) try {
  return max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode).first;
} catch (const Error& e) { detail::rethrow_in_op("max_pool2d", e); }

std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                                                  const std::vector<int64_t>& stride,
                                                  const std::vector<int64_t>& padding,
                                                  const std::vector<int64_t>& dilation, bool ceil_mode) try {
  return max_pool_nd("max_pool1d_with_indices", 1, input, kernel_size, stride, padding, dilation, ceil_mode);
} catch (const Error& e) { detail::rethrow_in_op("max_pool1d_with_indices", e); }

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                                                  const std::vector<int64_t>& stride,
                                                  const std::vector<int64_t>& padding,
                                                  const std::vector<int64_t>& dilation, bool ceil_mode) try {
  return max_pool_nd("max_pool2d_with_indices", 2, input, kernel_size, stride, padding, dilation, ceil_mode);
} catch (const Error& e) { detail::rethrow_in_op("max_pool2d_with_indices", e); }

// ---- average ----
Tensor avg_pool1d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, bool ceil_mode, bool count_include_pad) try {
  return avg_pool_nd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, std::nullopt);
} catch (const Error& e) { detail::rethrow_in_op("avg_pool1d", e); }

Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) try {
  return avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override);
} catch (const Error& e) { detail::rethrow_in_op("avg_pool2d", e); }

// ---- adaptive ----
Tensor adaptive_avg_pool1d(const Tensor& input, const std::vector<int64_t>& output_size) try {
  return adaptive_avg_nd("adaptive_avg_pool1d", 1, input, output_size);
} catch (const Error& e) { detail::rethrow_in_op("adaptive_avg_pool1d", e); }

Tensor adaptive_avg_pool2d(const Tensor& input, const std::vector<int64_t>& output_size) try {
  return adaptive_avg_nd("adaptive_avg_pool2d", 2, input, output_size);
} catch (const Error& e) { detail::rethrow_in_op("adaptive_avg_pool2d", e); }

Tensor adaptive_max_pool1d(const Tensor& input, const std::vector<int64_t>& output_size) try {
  return adaptive_max_nd("adaptive_max_pool1d", 1, input, output_size).first;
} catch (const Error& e) { detail::rethrow_in_op("adaptive_max_pool1d", e); }

Tensor adaptive_max_pool2d(const Tensor& input, const std::vector<int64_t>& output_size) try {
  return adaptive_max_nd("adaptive_max_pool2d", 2, input, output_size).first;
} catch (const Error& e) { detail::rethrow_in_op("adaptive_max_pool2d", e); }

std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                           const std::vector<int64_t>& output_size) try {
  return adaptive_max_nd("adaptive_max_pool1d_with_indices", 1, input, output_size);
} catch (const Error& e) { detail::rethrow_in_op("adaptive_max_pool1d_with_indices", e); }

std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                           const std::vector<int64_t>& output_size) try {
  return adaptive_max_nd("adaptive_max_pool2d_with_indices", 2, input, output_size);
} catch (const Error& e) { detail::rethrow_in_op("adaptive_max_pool2d_with_indices", e); }

}  // namespace ag
