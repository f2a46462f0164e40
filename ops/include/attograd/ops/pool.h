#pragma once
/// \file
/// Pooling (ops/pool.cpp), with PyTorch's names, argument order, output sizes and edge
/// cases. Layout NCHW (1-d: NCL); an input without the batch dim is one sample.
///
/// Output size per spatial dim (n input, k kernel, s stride, p padding, d dilation):
///   floor or, with ceil_mode, ceil of (n + 2p - d (k - 1) - 1) / s, plus 1; with
///   ceil_mode a last window that would start in the right padding is dropped.
/// An empty stride means stride = kernel_size; p <= k / 2 (PyTorch's rule).
/// Max pooling propagates NaN (a NaN in a window is its maximum) and picks the first
/// maximum of a tie; indices are flat positions in each (H W) plane, as PyTorch's.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// ---- max ----
/// torch.max_pool1d: (N, C, L) or (C, L) -> (N, C, L_out).
Tensor max_pool1d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                  const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1},
                  bool ceil_mode = false);
/// torch.max_pool2d: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).
Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                  const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1},
                  bool ceil_mode = false);
/// F.max_pool1d(return_indices=True): (values, i64 indices into each L plane).
std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                                                  const std::vector<int64_t>& stride = {},
                                                  const std::vector<int64_t>& padding = {0},
                                                  const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false);
/// F.max_pool2d(return_indices=True): (values, i64 indices h * W + w into each plane).
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const std::vector<int64_t>& kernel_size,
                                                  const std::vector<int64_t>& stride = {},
                                                  const std::vector<int64_t>& padding = {0},
                                                  const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false);

// ---- average ----
/// torch.avg_pool1d: the mean of each window; padding counts as zeros with
/// count_include_pad, else the divisor counts the input elements of the window only.
Tensor avg_pool1d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                  const std::vector<int64_t>& padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
/// torch.avg_pool2d; divisor_override (non-zero) replaces every window's divisor.
Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                  const std::vector<int64_t>& padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// ---- adaptive ----
// Output position i of n_out covers inputs [floor(i n / n_out), ceil((i + 1) n / n_out)).
/// torch.adaptive_avg_pool1d: (N, C, L) -> (N, C, output_size).
Tensor adaptive_avg_pool1d(const Tensor& input, const std::vector<int64_t>& output_size);
/// torch.adaptive_avg_pool2d: (N, C, H, W) -> (N, C, oH, oW); {1} is global average pooling.
Tensor adaptive_avg_pool2d(const Tensor& input, const std::vector<int64_t>& output_size);
/// F.adaptive_max_pool1d: (N, C, L) -> (N, C, output_size).
Tensor adaptive_max_pool1d(const Tensor& input, const std::vector<int64_t>& output_size);
/// F.adaptive_max_pool2d: (N, C, H, W) -> (N, C, oH, oW).
Tensor adaptive_max_pool2d(const Tensor& input, const std::vector<int64_t>& output_size);
/// F.adaptive_max_pool1d(return_indices=True): (values, i64 indices).
std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                           const std::vector<int64_t>& output_size);
/// F.adaptive_max_pool2d(return_indices=True): (values, i64 indices h * W + w).
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                           const std::vector<int64_t>& output_size);

}  // namespace ag
