// Convolution (conv1d/2d, conv_transpose1d/2d) and its columns (im2col / col2im).
// N batch, C_in / C_out channels, G groups, (H, W) input and (oH, oW) output size,
// K = kH kW kernel elements, L = oH oW output positions.
//
// im2col and col2im are the primitives (kernels/conv.cpp) and each other's adjoint, so
// each is the other's backward and every higher derivative comes free. A convolution is
// then a composite: its columns times the weight,
//   out (N, G, C_out/G, L) = w (G, C_out/G, C_in/G K) @ cols (N, G, C_in/G K, L),
// whose gradients are PyTorch's convolution_backward: dx = col2im(w^T g) (a transposed
// convolution), dw = sum_n g cols^T; conv_transpose is the same product read backwards.
// One validator (check_conv) runs before any work, as PyTorch's ConvParams.
#include "attograd/ops/conv.h"

#include <cstring>

#include "attograd/autocast.h"
#include "attograd/detail/error_context.h"
#include "conv_geometry.h"
#include "op_util.h"

namespace ag {

ConvPadding::ConvPadding(const char* mode) {
  const std::string m = mode ? mode : "";
  AG_CHECK(m == "same" || m == "valid", ValueError, "conv: padding must be \"same\", \"valid\" or amounts, got \"", m,
           "\"");
  same = m == "same";
  amounts = {0};
}

namespace conv_detail {

std::vector<int64_t> per_dim(const std::vector<int64_t>& v, std::size_t D, const char* op, const char* arg,
                             int64_t min) {
  AG_CHECK(v.size() == 1 || v.size() == D, ValueError, op, ": ", arg, " must have 1 or ", D, " values, got ",
           list_str(v));
  std::vector<int64_t> r(D, v[0]);
  if (v.size() == D) r = v;
  for (int64_t x : r)
    AG_CHECK(x >= min, ValueError, op, ": ", arg, " must be ", min == 0 ? "non-negative" : "positive", ", got ",
             list_str(v));
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r = 0;
  AG_CHECK(!__builtin_mul_overflow(a, b, &r), ShapeError, op, ": sizes ", a, " x ", b, " overflow int64");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* op) {
  int64_t r = 0;
  AG_CHECK(!__builtin_add_overflow(a, b, &r), ShapeError, op, ": sizes ", a, " + ", b, " overflow int64");
  return r;
}

Tensor im2col_windows(const Tensor& x, const K::Window& h, const K::Window& w, K::ColLayout layout) {
  checked_mul(checked_mul(checked_mul(x.shape()[0], x.shape()[1], "im2col"), checked_mul(h.kernel, w.kernel, "im2col"),
                          "im2col"),
              checked_mul(h.out, w.out, "im2col"), "im2col");
  const int64_t C = x.shape()[1], N = x.shape()[0];
  return record("im2col", K::im2col(x, h, w, layout), {x}, [C, N, h, w, layout](const Tensor& g, NeedsGrad) {
    return Grads{col2im_windows(g, C, h, w, layout, N)};
  });
}

Tensor col2im_windows(const Tensor& cols, int64_t C, const K::Window& h, const K::Window& w, K::ColLayout layout,
                      int64_t batch) {
  return record("col2im", K::col2im(cols, C, h, w, layout, batch), {cols},
                [h, w, layout](const Tensor& g, NeedsGrad) { return Grads{im2col_windows(g, h, w, layout)}; });
}

}  // namespace conv_detail

namespace {
using namespace conv_detail;

std::string shapes(const Tensor& x, const Tensor& weight) {
  return detail::cat("(input shape ", x.shape(), ", weight shape ", weight.shape(), ")");
}

// input (N, C_in, *S) or (C_in, *S), weight (C_out, C_in / G, *k) (transposed: (C_in, C_out / G, *k)).
ConvGeometry check_conv(const char* op, std::size_t D, const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const std::vector<int64_t>& stride_in, const std::vector<int64_t>& pad_in,
                        const std::vector<int64_t>& dilation_in, int64_t groups, bool transposed,
                        const std::vector<int64_t>& output_padding_in) {
  AG_CHECK(x.defined() && weight.defined(), ValueError, op, ": input and weight must be defined");
  check_float(x, op);
  const int64_t rank = static_cast<int64_t>(D);
  AG_CHECK(x.dim() == rank + 1 || x.dim() == rank + 2, ShapeError, op, ": expected a ", rank + 1, "-D (unbatched) or ",
           rank + 2, "-D (batched) input, got input shape ", x.shape());
  AG_CHECK(weight.dim() == rank + 2, ShapeError, op, ": expected a ", rank + 2, "-D weight ",
           transposed ? "(C_in, C_out / groups, *kernel)" : "(C_out, C_in / groups, *kernel)", ", got ",
           shapes(x, weight));
  AG_CHECK(weight.dtype() == x.dtype(), DTypeError, op, ": input dtype ", x.dtype(), " and weight dtype ",
           weight.dtype(), " differ ", shapes(x, weight));
  AG_CHECK(groups > 0, ValueError, op, ": groups must be positive, got ", groups);
  ConvGeometry g;
  g.batched = x.dim() == rank + 2;
  g.N = g.batched ? x.shape()[0] : 1;
  g.C_in = x.shape()[g.batched ? 1 : 0];
  g.G = groups;
  AG_CHECK(g.C_in % groups == 0, ValueError, op, ": groups ", groups, " must divide the input channels ", g.C_in, " ",
           shapes(x, weight));
  if (transposed) {
    AG_CHECK(weight.shape()[0] == g.C_in, ShapeError, op, ": weight dim 0 (", weight.shape()[0],
             ") must equal the input channels ", g.C_in, " ", shapes(x, weight));
    g.C_out = checked_mul(weight.shape()[1], groups, op);
  } else {
    g.C_out = weight.shape()[0];
    AG_CHECK(g.C_out % groups == 0, ValueError, op, ": groups ", groups, " must divide the output channels ", g.C_out,
             " ", shapes(x, weight));
    AG_CHECK(weight.shape()[1] * groups == g.C_in, ShapeError, op, ": weight dim 1 (", weight.shape()[1],
             ") times groups ", groups, " must equal the input channels ", g.C_in, " ", shapes(x, weight));
  }
  if (bias.defined()) {
    AG_CHECK(bias.dim() == 1 && bias.shape()[0] == g.C_out, ShapeError, op, ": bias shape ", bias.shape(), " must be (",
             g.C_out, ") ", shapes(x, weight));
    AG_CHECK(bias.dtype() == x.dtype(), DTypeError, op, ": bias dtype ", bias.dtype(), " differs from input dtype ",
             x.dtype());
  }
  const auto stride = per_dim(stride_in, D, op, "stride", 1), pad = per_dim(pad_in, D, op, "padding", 0),
             dil = per_dim(dilation_in, D, op, "dilation", 1);
  const auto opad = per_dim(output_padding_in, D, op, "output_padding", 0);
  for (std::size_t d = 0; d < D; ++d) {
    const int64_t n = x.shape()[x.dim() - rank + int64_t(d)], k = weight.shape()[2 + int64_t(d)];
    AG_CHECK(k > 0, ShapeError, op, ": kernel size must be positive ", shapes(x, weight));
    const int64_t span = checked_mul(dil[d], k - 1, op) + 1;  // the dilated kernel
    K::Window win{n, 0, k, stride[d], pad[d], dil[d]};
    if (transposed) {
      AG_CHECK(opad[d] < stride[d] || opad[d] < dil[d], ValueError, op, ": output_padding ", list_str(opad),
               " must be smaller than either stride ", list_str(stride), " or dilation ", list_str(dil));
      // The conv this transposes maps `out` (its input) to n: col2im's geometry.
      const int64_t grown = checked_add(checked_mul(n - 1, stride[d], op), checked_add(span, opad[d], op), op);
      const int64_t out = grown - checked_mul(2, pad[d], op);
      AG_CHECK(out > 0, ShapeError, op, ": output size ", out, " along spatial dim ", d, " is not positive ",
               shapes(x, weight));
      win = K::Window{out, n, k, stride[d], pad[d], dil[d]};
    } else {
      const int64_t np = padded(n, pad[d], op);
      AG_CHECK(np >= span, ShapeError, op, ": the dilated kernel (size ", span,
               ") is larger than the padded input (size ", np, ") along spatial dim ", d, " ", shapes(x, weight));
      win.out = (np - span) / stride[d] + 1;
    }
    (D == 1 || d == 1 ? g.w : g.h) = win;
  }
  return g;
}

// The input as (N, C, H, W): batch dim added, 1-d given height 1.
Tensor as_4d(const Tensor& x, std::size_t D, bool batched) {
  Tensor y = batched ? x : unsqueeze(x, 0);
  return D == 1 ? unsqueeze(y, 2) : y;
}

// (N, C, oH, oW) back to the caller's rank.
Tensor from_4d(const Tensor& y, std::size_t D, bool batched) {
  Tensor r = D == 1 ? squeeze(y, 2) : y;
  return batched ? r : squeeze(r, 0);
}

Tensor add_bias(const Tensor& out, const Tensor& bias) {
  return bias.defined() ? out + reshape(bias, {1, bias.shape()[0], 1, 1}) : out;
}

// "same": the total padding d (k - 1) split with the odd element at the end, which the
// input gets from pad() (PyTorch's _convolution_mode); returns the padded input and the
// symmetric amount left for the op.
std::pair<Tensor, std::vector<int64_t>> same_padding(const char* op, std::size_t D, const Tensor& x,
                                                     const Tensor& weight, const std::vector<int64_t>& stride,
                                                     const std::vector<int64_t>& dilation) {
  for (int64_t s : per_dim(stride, D, op, "stride", 1))
    AG_CHECK(s == 1, ValueError, op, ": padding=\"same\" is not supported for strided convolutions (stride ",
             list_str(stride), ")");
  const auto dil = per_dim(dilation, D, op, "dilation", 1);
  AG_CHECK(weight.dim() == int64_t(D) + 2, ShapeError, op, ": expected a ", D + 2, "-D weight, got weight shape ",
           weight.shape());
  std::vector<int64_t> sym(D), extra;  // extra: pad()'s (left, right) pairs, last dim first
  bool any_extra = false;
  for (std::size_t d = D; d-- > 0;) {
    const int64_t total = checked_mul(dil[d], weight.shape()[2 + int64_t(d)] - 1, op);
    sym[d] = total / 2;
    extra.push_back(0);
    extra.push_back(total - 2 * sym[d]);
    any_extra = any_extra || total % 2;
  }
  return {any_extra ? pad(x, extra) : x, sym};
}

Tensor conv_nd(const char* op, std::size_t D, const Tensor& x_in, const Tensor& w_in, const Tensor& b_in,
               const std::vector<int64_t>& stride, const ConvPadding& padding, const std::vector<int64_t>& dilation,
               int64_t groups) {
  Tensor x = detail::autocast_lower(x_in), weight = detail::autocast_lower(w_in), bias = detail::autocast_lower(b_in);
  std::vector<int64_t> pads = padding.amounts;
  if (padding.same) std::tie(x, pads) = same_padding(op, D, x, weight, stride, dilation);
  const ConvGeometry g = check_conv(op, D, x, weight, bias, stride, pads, dilation, groups, false, {0});
  return from_4d(conv_forward(op, as_4d(x, D, g.batched), weight, bias, g), D, g.batched);
}

Tensor conv_transpose_nd(const char* op, std::size_t D, const Tensor& x_in, const Tensor& w_in, const Tensor& b_in,
                         const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                         const std::vector<int64_t>& output_padding, int64_t groups,
                         const std::vector<int64_t>& dilation) {
  const Tensor x = detail::autocast_lower(x_in), weight = detail::autocast_lower(w_in),
               bias = detail::autocast_lower(b_in);
  const ConvGeometry g = check_conv(op, D, x, weight, bias, stride, padding, dilation, groups, true, output_padding);
  const Tensor x4 = as_4d(x, D, g.batched);
  const int64_t K = g.h.kernel * g.w.kernel, HW = g.h.out * g.w.out, Cg = g.C_in / g.G, Og = g.C_out / g.G;
  // cols (G, Og K, N HW) = w^T (G, Og K, Cg) @ x (G, Cg, N HW), one GEMM per group over
  // the batch, then summed into the output.
  Tensor wt = transpose(reshape(weight, {g.G, Cg, Og * K}), -1, -2);
  Tensor xc = reshape(permute(reshape(x4, {g.N, g.C_in, HW}), {1, 0, 2}), {g.G, Cg, g.N * HW});
  Tensor cols = matmul(wt, xc);
  Tensor out =
      col2im_windows(reshape(cols, {g.C_out * K, g.N * HW}), g.C_out, g.h, g.w, K::ColLayout::batch_in_columns, g.N);
  return from_4d(add_bias(out, bias), D, g.batched);
}

// im2col / col2im's public forms: (N, C, H, W) or unbatched, 2-d only (as PyTorch).
std::pair<K::Window, K::Window> fold_windows(const char* op, const std::vector<int64_t>& in,
                                             const std::vector<int64_t>& kernel_size,
                                             const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding,
                                             const std::vector<int64_t>& stride) {
  const auto k = per_dim(kernel_size, 2, op, "kernel_size", 1), dil = per_dim(dilation, 2, op, "dilation", 1),
             pad = per_dim(padding, 2, op, "padding", 0), st = per_dim(stride, 2, op, "stride", 1);
  K::Window win[2];
  for (std::size_t d = 0; d < 2; ++d) {
    const int64_t span = checked_mul(dil[d], k[d] - 1, op) + 1, np = padded(in[d], pad[d], op);
    AG_CHECK(np >= span, ShapeError, op, ": the dilated kernel ", list_str(k), " (span ", span,
             ") is larger than the padded input size ", np, " along spatial dim ", d);
    win[d] = K::Window{in[d], (np - span) / st[d] + 1, k[d], st[d], pad[d], dil[d]};
  }
  return {win[0], win[1]};
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const std::vector<int64_t>& stride,
              const ConvPadding& padding, const std::vector<int64_t>& dilation, int64_t groups) try {
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
} catch (const Error& e) { detail::rethrow_in_op("conv1d", e); }

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const std::vector<int64_t>& stride,
              const ConvPadding& padding, const std::vector<int64_t>& dilation, int64_t groups) try {
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
} catch (const Error& e) { detail::rethrow_in_op("conv2d", e); }

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& output_padding, int64_t groups,
                        const std::vector<int64_t>& dilation) try {
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
} catch (const Error& e) { detail::rethrow_in_op("conv_transpose1d", e); }

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& output_padding, int64_t groups,
                        const std::vector<int64_t>& dilation) try {
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
} catch (const Error& e) { detail::rethrow_in_op("conv_transpose2d", e); }

// ---- im2col / col2im (F.unfold / F.fold) ----
Tensor im2col(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& dilation,
              const std::vector<int64_t>& padding, const std::vector<int64_t>& stride) try {
  check_float(input, "im2col");
  AG_CHECK(input.dim() == 3 || input.dim() == 4, ShapeError,
           "im2col: expected a 3-D (unbatched) or 4-D (batched) input, got input shape ", input.shape());
  const bool batched = input.dim() == 4;
  const Tensor x = batched ? input : unsqueeze(input, 0);
  auto [h, w] = fold_windows("im2col", {x.shape()[2], x.shape()[3]}, kernel_size, dilation, padding, stride);
  Tensor cols = im2col_windows(x, h, w);
  return batched ? cols : squeeze(cols, 0);
} catch (const Error& e) { detail::rethrow_in_op("im2col", e); }

Tensor col2im(const Tensor& input, const std::vector<int64_t>& output_size, const std::vector<int64_t>& kernel_size,
              const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& stride) try {
  check_float(input, "col2im");
  AG_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError,
           "col2im: expected a 2-D (unbatched) or 3-D (batched) input, got input shape ", input.shape());
  const auto size = per_dim(output_size, 2, "col2im", "output_size", 1);
  const bool batched = input.dim() == 3;
  const Tensor cols = batched ? input : unsqueeze(input, 0);
  auto [h, w] = fold_windows("col2im", size, kernel_size, dilation, padding, stride);
  const int64_t K = h.kernel * w.kernel, L = h.out * w.out;
  AG_CHECK(cols.shape()[1] % K == 0, ShapeError, "col2im: input dim 1 (", cols.shape()[1],
           ") must be divisible by the kernel's elements ", K, " (input shape ", input.shape(), ")");
  AG_CHECK(cols.shape()[2] == L, ShapeError, "col2im: input dim 2 (", cols.shape()[2], ") must equal the ", L,
           " kernel positions of output_size ", list_str(size), " (input shape ", input.shape(), ")");
  Tensor out = col2im_windows(cols, cols.shape()[1] / K, h, w);
  return batched ? out : squeeze(out, 0);
} catch (const Error& e) { detail::rethrow_in_op("col2im", e); }

}  // namespace ag
