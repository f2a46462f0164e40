#pragma once
// Internal to ops/conv.cpp and ops/pool.cpp: argument lists per spatial dim, and the
// differentiable column ops on (N, C, H, W) that convolution and average pooling are built
// from. A 1-d op runs as 2-d with height 1.
#include <cstdint>
#include <string>
#include <vector>

#include "attograd/tensor.h"
#include "kernels/conv.h"

namespace ag::conv_detail {

// One value per spatial dim from a list of 1 or D values (PyTorch's expand_param_if_needed);
// ValueError naming op and arg otherwise, or when a value is below `min`.
std::vector<int64_t> per_dim(const std::vector<int64_t>& v, std::size_t D, const char* op, const char* arg,
                             int64_t min);

// x (N, C, H, W) -> columns (N, C kH kW, oH oW), or (C kH kW, N oH oW) with
// batch_in_columns; its gradient is col2im_windows, and back.
Tensor im2col_windows(const Tensor& x, const kernels::Window& h, const kernels::Window& w,
                      kernels::ColLayout layout = kernels::ColLayout::per_sample);
// columns in `layout` -> (N, C, H, W), overlapping windows summed (batch: N, for
// batch_in_columns).
Tensor col2im_windows(const Tensor& cols, int64_t channels, const kernels::Window& h, const kernels::Window& w,
                      kernels::ColLayout layout = kernels::ColLayout::per_sample, int64_t batch = -1);

// A convolution's arguments, checked, per spatial dim (two: a 1-d op has height 1).
struct ConvGeometry {
  kernels::Window h, w;
  int64_t N = 0, C_in = 0, C_out = 0, G = 1;
  bool batched = true;
};

// The convolution of x4 (N, C_in, H, W) with weight (C_out, C_in / G, kH, kW) and bias
// (C_out) or undefined, checked: -> (N, C_out, oH, oW), contiguous. oneDNN's primitives
// where they run (f32), else the columns (conv_forward.cpp).
Tensor conv_forward(const char* op, const Tensor& x4, const Tensor& weight, const Tensor& bias, const ConvGeometry& g);

// a * b and a + b, ShapeError naming op when they overflow int64 (hostile sizes and
// paddings must raise, never wrap).
int64_t checked_mul(int64_t a, int64_t b, const char* op);
int64_t checked_add(int64_t a, int64_t b, const char* op);
// n + 2 pad: a padded size.
inline int64_t padded(int64_t n, int64_t pad, const char* op) { return checked_add(n, checked_mul(2, pad, op), op); }

}  // namespace ag::conv_detail
