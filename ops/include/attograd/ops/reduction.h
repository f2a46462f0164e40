#pragma once
/// \file
/// Reductions (ops/reduction.cpp): dims may be negative; {} with keepdim = false reduces
/// every dim. PyTorch 1.13's names, defaults and gradients, ties and NaN included. Ops
/// returning (values, indices) return std::pair (LibTorch returns std::tuple); indices
/// are i64.
#include <cstdint>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// ---- sums and moments ----
Tensor sum(const Tensor& x);  ///< shape []: every element; bool and integers sum in i64
/// Over dims (each dim dropped, or kept as 1 with keepdim); {} = every dim.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);  ///< shape []: every element; floating dtypes only
/// Over dims (each dim dropped, or kept as 1 with keepdim); {} = every dim.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// var with `correction` (1 = unbiased, the default as in PyTorch; 0 = biased).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false);
Tensor var(const Tensor& x);  ///< over all elements, unbiased (var(x, {}, 0) for biased)
/// sqrt(var(x, dims, correction)); the gradient is 0 where the result is 0 (PyTorch).
/// Call it as ag::std (like torch::std): a bare std(...) is ambiguous with namespace std.
Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& x);  ///< over all elements, unbiased
/// (var, mean) and (std, mean) over dims, as torch.var_mean / torch.std_mean.
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1,
                                   bool keepdim = false);
/// (std, mean) over dims, as torch.std_mean.
std::pair<Tensor, Tensor> std_mean(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1,
                                   bool keepdim = false);
/// log(sum(exp(x))) over dims, shifted by the max so that large inputs do not overflow.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// Sums g down to `shape` (undoes broadcasting): the one helper every backward uses.
Tensor sum_to(const Tensor& g, const Shape& shape);

// ---- extremes ----
/// Values and indices (i64) along dim; the gradient goes to the arg element.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);  ///< as max
Tensor max(const Tensor& x);                                                        ///< over all elements
Tensor min(const Tensor& x);                                                        ///< over all elements
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);                  ///< i64 indices, dim removed
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);                  ///< i64 indices, dim removed
/// Max (min) over dims; NaN propagates. The gradient is split evenly among the elements
/// equal to the result (a NaN result gives NaN gradients along its reduced dims, as PyTorch).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);  ///< as amax, the minimum

// ---- products and logic ----
/// Product over all elements (0-d) or along dim; empty -> 1. The gradient is the product
/// of the other elements (exact with one zero; zero with two or more).
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim
/// 0-d (or reduced along dim) bool tensor: is any (every) element nonzero? Any dtype; NaN
/// counts as nonzero; any of nothing is false, all of nothing is true. No gradient.
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim
Tensor all(const Tensor& x);                                     ///< 0-d: every element nonzero
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim

}  // namespace ag
