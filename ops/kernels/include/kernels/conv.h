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

// x (N, C, H, W), any strides and float dtype -> (N, C kH kW, oH oW) contiguous: row
// (c, i, j) holds the input at kernel offset (i, j) for every output position.
Tensor im2col(const Tensor& x, const Window& h, const Window& w);
// im2col's adjoint: cols (N, C kH kW, oH oW) -> (N, C, H, W) with H = h.in, W = w.in,
// overlapping windows summed (16-bit: summed in f32, rounded once).
Tensor col2im(const Tensor& cols, int64_t channels, const Window& h, const Window& w);

// The taps of one spatial dim of a max pool: output position o reads
// first[o] + t * step for t < count[o] (all inside the input; count >= 1).
struct Taps {
  std::vector<int64_t> first, count;
  int64_t step = 1;
};
// x (N, C, H, W) -> (values, i64 indices ih * W + iw) of shape (N, C, oH, oW). NaN is a
// maximum (the last NaN of a window wins, as PyTorch's `val > max || isnan(val)`); among
// equal maxima the first.
std::pair<Tensor, Tensor> max_pool(const Tensor& x, const Taps& h, const Taps& w);
// max_pool's backward: g (N, C, oH, oW) scattered into zeros (N, C, H, W) at indices (16-bit:
// summed in f32).
Tensor max_pool_backward(const Tensor& g, const Tensor& indices, int64_t H, int64_t W);
// max_pool_backward's adjoint, the double backward: gg (N, C, H, W) read at indices.
Tensor gather_planes(const Tensor& gg, const Tensor& indices);

}  // namespace ag::kernels
