#pragma once
/// \file
/// Convolutions and their building blocks (ops/conv.cpp), with PyTorch's names, argument
/// order and output sizes. Layout NCHW (1-d: NCL); an input without the batch dim (C, H, W)
/// or (C, L) is one sample, as in PyTorch. Weights: conv (C_out, C_in / groups, kH, kW),
/// conv_transpose (C_in, C_out / groups, kH, kW).
///
/// im2col / col2im (F.unfold / F.fold, also nn::functional::unfold / fold) are the
/// primitives; each is the other's adjoint, so their gradients are each other and every
/// higher derivative comes free. A convolution is its columns times the weight; its
/// gradients are convolutions again (PyTorch's convolution_backward), so gradient
/// penalties (double backward) work.
///
/// Per spatial dim, for input size n, kernel k, stride s, padding p, dilation d:
///   conv            out = floor((n + 2p - d (k - 1) - 1) / s) + 1
///   conv_transpose  out = (n - 1) s - 2p + d (k - 1) + output_padding + 1
/// An argument list of one value serves every spatial dim ({2} is {2, 2}), as in PyTorch.
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// The padding of a convolution: amounts per spatial dim ({1}, {1, 2}, or one integer),
/// or torch's strings "valid" (no padding) and "same" (the output keeps the input's size;
/// stride 1 only; an odd total puts the extra element at the end, as PyTorch).
struct ConvPadding {
  ConvPadding(std::initializer_list<int64_t> v) : amounts(v) {}   ///< {1} or {1, 2}
  ConvPadding(std::vector<int64_t> v) : amounts(std::move(v)) {}  ///< per spatial dim
  template <std::integral I>
  ConvPadding(I v) : amounts{static_cast<int64_t>(v)} {}               ///< the same amount on every dim
  ConvPadding(const char* mode);                                       ///< "same" or "valid"; ValueError otherwise
  ConvPadding(const std::string& mode) : ConvPadding(mode.c_str()) {}  ///< "same" or "valid"
  std::vector<int64_t> amounts;  ///< per dim, or one for all; empty for "same" / "valid"
  bool same = false;             ///< padding="same"
};

// ---- convolution ----
/// torch.conv1d: input (N, C_in, L) or (C_in, L), weight (C_out, C_in / groups, k), bias
/// (C_out) or undefined -> (N, C_out, L_out).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              const std::vector<int64_t>& stride = {1}, const ConvPadding& padding = {0},
              const std::vector<int64_t>& dilation = {1}, int64_t groups = 1);
/// torch.conv2d: input (N, C_in, H, W) or (C_in, H, W), weight (C_out, C_in / groups, kH,
/// kW), bias (C_out) or undefined -> (N, C_out, H_out, W_out). groups == C_in is depthwise.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              const std::vector<int64_t>& stride = {1}, const ConvPadding& padding = {0},
              const std::vector<int64_t>& dilation = {1}, int64_t groups = 1);
/// torch.conv_transpose1d (the gradient of conv1d with respect to its input): input (N,
/// C_in, L), weight (C_in, C_out / groups, k) -> (N, C_out, L_out). Argument order as
/// PyTorch's: output_padding and groups come before dilation.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                        const std::vector<int64_t>& output_padding = {0}, int64_t groups = 1,
                        const std::vector<int64_t>& dilation = {1});
/// torch.conv_transpose2d: input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW) ->
/// (N, C_out, H_out, W_out). output_padding (< stride or < dilation) picks among the
/// input sizes that a strided conv maps to the same output size.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                        const std::vector<int64_t>& output_padding = {0}, int64_t groups = 1,
                        const std::vector<int64_t>& dilation = {1});

// ---- columns ----
/// torch.nn.functional.unfold (ATen's im2col): input (N, C, H, W) or (C, H, W) -> (N, C kH
/// kW, L), L the number of kernel positions (H_out W_out); each column holds one position's
/// patch, channel-major then kernel row, kernel column; zero padding.
Tensor im2col(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& dilation = {1},
              const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& stride = {1});
/// torch.nn.functional.fold (ATen's col2im), im2col's adjoint: columns (N, C kH kW, L) or
/// (C kH kW, L) -> (N, C, H, W) with output_size (H, W), overlapping patches summed.
Tensor col2im(const Tensor& input, const std::vector<int64_t>& output_size, const std::vector<int64_t>& kernel_size,
              const std::vector<int64_t>& dilation = {1}, const std::vector<int64_t>& padding = {0},
              const std::vector<int64_t>& stride = {1});

}  // namespace ag
