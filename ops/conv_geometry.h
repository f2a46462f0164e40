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

// x (N, C, H, W) -> (N, C kH kW, oH oW); its gradient is col2im_windows, and back.
Tensor im2col_windows(const Tensor& x, const kernels::Window& h, const kernels::Window& w);
// cols (N, C kH kW, oH oW) -> (N, C, H, W), overlapping windows summed.
Tensor col2im_windows(const Tensor& cols, int64_t channels, const kernels::Window& h, const kernels::Window& w);

// a * b, ShapeError naming op when it overflows int64.
int64_t checked_mul(int64_t a, int64_t b, const char* op);

}  // namespace ag::conv_detail
