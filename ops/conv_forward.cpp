// The convolution's two engines (conv_geometry.h: conv_forward).
// N batch, C_in / C_out channels, G groups, K = kH kW, L = oH oW output positions.
//
// Columns: the batch side by side in im2col's columns (C_in K, N L), so that each group is
// one GEMM (G, C_out / G, Cg K) @ (G, Cg K, N L) over the whole batch (N small GEMMs of a
// few output channels ran at a fraction of sgemm's speed). A composite of differentiable
// ops: any order of derivative, f64, and every dtype.
//
// oneDNN: for f32, a fused op whose forward and backward are oneDNN's convolution
// primitives (LibTorch's CPU engine), with the columns as its Composite, so a
// create_graph backward (a gradient penalty) differentiates that instead.
#include "attograd/detail/error_context.h"
#include "conv_geometry.h"
#include "op_util.h"

namespace ag::conv_detail {
namespace {

Tensor with_bias(const Tensor& out, const Tensor& bias) {
  return bias.defined() ? out + reshape(bias, {1, bias.shape()[0], 1, 1}) : out;
}

// im2col's columns of x4, or for a 1x1 kernel the input with its channels first.
Tensor columns(const Tensor& x4, const ConvGeometry& g) {
  const int64_t K = g.h.kernel * g.w.kernel, L = g.h.out * g.w.out;
  const bool pointwise = K == 1 && g.h.stride == 1 && g.w.stride == 1 && g.h.pad == 0 && g.w.pad == 0;
  return pointwise ? reshape(permute(reshape(x4, {g.N, g.C_in, L}), {1, 0, 2}), {g.C_in, g.N * L})
                   : im2col_windows(x4, g.h, g.w, K::ColLayout::batch_in_columns);  // (C_in K, N L)
}

Tensor conv_columns(const Tensor& x4, const Tensor& weight, const Tensor& bias, const ConvGeometry& g) {
  const int64_t K = g.h.kernel * g.w.kernel, L = g.h.out * g.w.out, Cg = g.C_in / g.G;
  Tensor cols = columns(x4, g);
  Tensor out = matmul(reshape(weight, {g.G, g.C_out / g.G, Cg * K}), reshape(cols, {g.G, Cg * K, g.N * L}));
  // (G, C_out / G, N L) -> (N, C_out, oH, oW), contiguous (the bias add, or a copy, lays it out).
  out = permute(reshape(out, {g.C_out, g.N, g.h.out, g.w.out}), {1, 0, 2, 3});
  return bias.defined() ? with_bias(out, bias) : contiguous(out);
}

// The gradients of conv_columns written out, for a backward whose oneDNN primitive
// declines: dx = col2im(w^T g), dw = g cols^T, db = sum of g over (N, oH, oW).
Grads columns_grads(const Tensor& x4, const Tensor& weight, const Tensor& g, const ConvGeometry& geo, NeedsGrad needs) {
  const int64_t K = geo.h.kernel * geo.w.kernel, L = geo.h.out * geo.w.out, Cg = geo.C_in / geo.G;
  const int64_t Og = geo.C_out / geo.G;
  // g (N, C_out, oH, oW) -> (G, C_out / G, N L)
  Tensor g2 = reshape(permute(reshape(g, {geo.N, geo.C_out, L}), {1, 0, 2}), {geo.G, Og, geo.N * L});
  Tensor wg = reshape(weight, {geo.G, Og, Cg * K});
  Grads out(3);
  if (needs[0]) {
    Tensor dcols = reshape(matmul(transpose(wg, 1, 2), g2), {geo.C_in * K, geo.N * L});
    out[0] = col2im_windows(dcols, geo.C_in, geo.h, geo.w, K::ColLayout::batch_in_columns, geo.N);
  }
  if (needs[1]) {
    Tensor cols = reshape(columns(x4, geo), {geo.G, Cg * K, geo.N * L});
    out[1] = reshape(matmul(g2, transpose(cols, 1, 2)), weight.shape());
  }
  if (needs[2]) out[2] = sum(g, {0, 2, 3});
  return out;
}

bool dnnl_takes(const Tensor& x4, const Tensor& weight) {
  if (K::conv_engine() == K::ConvEngine::im2col) return false;
  return x4.dtype() == DType::f32 && weight.dtype() == DType::f32 && x4.numel() > 0 && weight.numel() > 0;
}

// oneDNN's forward as a fused op; undefined when oneDNN declines.
Tensor conv_dnnl(const char* op, const Tensor& x4, const Tensor& weight, const Tensor& bias, const ConvGeometry& g) {
  const K::ConvShape s{g.N,     g.C_in,     x4.shape()[2], x4.shape()[3], g.C_out, g.h.kernel,   g.w.kernel,   g.h.out,
                       g.w.out, g.h.stride, g.w.stride,    g.h.pad,       g.w.pad, g.h.dilation, g.w.dilation, g.G};
  const Tensor xc = K::contiguous(x4), wc = K::contiguous(weight);
  const Tensor bc = bias.defined() ? K::contiguous(bias) : Tensor{};
  Tensor out = K::conv2d_dnnl(xc, wc, bc, s);
  if (!out.defined()) return out;
  const bool need = wants_grad(x4) || wants_grad(weight) || wants_grad(bias);
  return record(
      op, out, {x4, weight, bias},
      [sx = save_if(need, xc), sw = save_if(need, wc), s, g, has_bias = bias.defined()](const Tensor& grad,
                                                                                        NeedsGrad needs) {
        const Tensor gc = K::contiguous(grad);
        Tensor dx, dw, db;
        if (needs[0]) dx = K::conv2d_dnnl_backward_data(gc, sw.get(), s);
        if (needs[1] || needs[2]) std::tie(dw, db) = K::conv2d_dnnl_backward_weights(sx.get(), gc, s, has_bias);
        if ((needs[0] && !dx.defined()) || ((needs[1] || needs[2]) && !dw.defined()))
          return columns_grads(sx.get(), sw.get(), gc, g, needs);
        return Grads{dx, needs[1] ? dw : Tensor{}, needs[2] ? db : Tensor{}};
      },
      [&] {
        return Composite{[g](const std::vector<Tensor>& in) { return conv_columns(in[0], in[1], in[2], g); },
                         {Saved(x4), Saved(weight), Saved(bias)}};
      });
}

}  // namespace

Tensor conv_forward(const char* op, const Tensor& x4, const Tensor& weight, const Tensor& bias, const ConvGeometry& g) {
  if (dnnl_takes(x4, weight)) {
    Tensor out = conv_dnnl(op, x4, weight, bias, g);
    if (out.defined()) return out;
  }
  return conv_columns(x4, weight, bias, g);
}

}  // namespace ag::conv_detail
