#pragma once
// Raw kernels of the convolution and pooling ops (conv.cpp, pool.cpp): columns (im2col /
// col2im) and max pooling over planes. No graph work. Every kernel works on two spatial
// dims; the ops hand 1-d inputs in as height 1.
#include <cstdint>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag::kernels {

// One spatial dim of a sliding window: output position o reads the inputs
// o * stride - pad + j * dilation for j < kernel; inputs outside [0, in) read as 0.
// `out` is given, not derived, so that ceil-mode windows and "same" padding need no
// asymmetric-padding special case.
struct Window {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0, dilation = 1;
};

// The layouts of the columns: per sample (N, C K, L), F.unfold's; or all samples side by
// side (C K, N L), so that a convolution is one GEMM over the whole batch rather than N
// small ones (K = kH kW, L = oH oW).
enum class ColLayout { per_sample, batch_in_columns };

// x (N, C, H, W), any strides and dtype -> columns, contiguous in `layout`: row (c, i, j)
// holds the input at kernel offset (i, j) for every output position (0 outside x).
Tensor im2col(const Tensor& x, const Window& h, const Window& w, ColLayout layout = ColLayout::per_sample);
// im2col's adjoint: columns in `layout` -> (N, C, H, W) with H = h.in, W = w.in, overlapping
// windows summed (16-bit: summed in f32, rounded once). N is read from per_sample columns
// and given for batch_in_columns ones.
Tensor col2im(const Tensor& cols, int64_t channels, const Window& h, const Window& w,
              ColLayout layout = ColLayout::per_sample, int64_t batch = -1);

// One spatial dim of a pool's windows: strided, padded and dilated (PyTorch's max-pool
// loop bounds: output o reads o * stride - pad + j * dilation, j < kernel, inside the
// input), or adaptive (output o covers [floor(o in / out), ceil((o + 1) in / out))).
struct PoolWindows {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0, dilation = 1;
  bool adaptive = false;
};
// The taps of one dim: output o reads first[o] + t * step for t < count[o] (all inside the
// input). Built from `out` entries: callers allocate the output first, which bounds it.
struct Taps {
  std::vector<int64_t> first, count;
  int64_t step = 1;
};
Taps taps_of(const PoolWindows& d);
// x (N, C, H, W) -> (values, i64 indices ih * W + iw) of shape (N, C, oH, oW). NaN is a
// maximum (the last NaN of a window wins, as PyTorch's `val > max || isnan(val)`); among
// equal maxima the first. ShapeError when a window covers no input element.
std::pair<Tensor, Tensor> max_pool(const Tensor& x, const PoolWindows& h, const PoolWindows& w);
// max_pool's backward: g (N, C, oH, oW) scattered into zeros (N, C, H, W) at indices (16-bit:
// summed in f32).
Tensor max_pool_backward(const Tensor& g, const Tensor& indices, int64_t H, int64_t W);
// max_pool_backward's adjoint, the double backward: gg (N, C, H, W) read at indices.
Tensor gather_planes(const Tensor& gg, const Tensor& indices);

// ---- oneDNN (conv_dnnl.cpp) ----
// One 2-d convolution's sizes: input (N, C, H, W), weight (O, C / G, kH, kW), output
// (N, O, oH, oW); s stride, p padding (both sides), d dilation.
struct ConvShape {
  int64_t N, C, H, W, O, kH, kW, oH, oW, sH, sW, pH, pW, dH, dW, G;
};
// Which engine runs f32 convolutions: automatic (oneDNN where the build has it and it has
// a kernel for this CPU and shape, else im2col + sgemm), or forced (tests, benchmarks;
// forcing dnnl still falls back when oneDNN declines). Returns the previous setting.
enum class ConvEngine { automatic, dnnl, im2col };
ConvEngine set_conv_engine(ConvEngine e);
ConvEngine conv_engine();
// oneDNN's forward: x (N, C, H, W), w (O, C / G, kH, kW), b (O) or undefined, all contiguous
// and of one dtype (f32; bf16 where the CPU has bf16 kernels) -> (N, O, oH, oW); an
// undefined tensor when oneDNN declines.
Tensor conv2d_dnnl(const Tensor& x, const Tensor& w, const Tensor& b, const ConvShape& s);
// Its gradients: g (N, O, oH, oW) contiguous -> dx (N, C, H, W); (dw, db) with db only when
// `bias`. Undefined when oneDNN declines.
Tensor conv2d_dnnl_backward_data(const Tensor& g, const Tensor& w, const ConvShape& s);
std::pair<Tensor, Tensor> conv2d_dnnl_backward_weights(const Tensor& x, const Tensor& g, const ConvShape& s, bool bias);

}  // namespace ag::kernels
