#pragma once
/// \file
/// Reductions, scans and sorting beyond ops.h's core set (ops/reduce_more.cpp, ops/scan.cpp,
/// ops/sort.cpp). PyTorch 1.13's names, defaults and gradients, ties and NaN included.
/// Ops returning (values, indices) return std::pair, like max(x, dim) in ops.h (LibTorch
/// returns std::tuple); indices are i64.
#include <cstdint>
#include <utility>
#include <vector>

#include "attograd/ops.h"

namespace ag {

// ---- reductions (ops/reduce_more.cpp); dims may be negative; {} = all dims ----
/// Max (min) over dims; NaN propagates. The gradient is split evenly among the elements
/// equal to the result (a NaN result gives NaN gradients along its reduced dims, as PyTorch).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);  ///< as amax, the minimum
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
/// Product over all elements (0-d) or along dim; empty -> 1. The gradient is the product
/// of the other elements (exact with one zero; zero with two or more).
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim
/// 0-d (or reduced along dim) bool tensor: is any (every) element nonzero? Any dtype; NaN
/// counts as nonzero; any of nothing is false, all of nothing is true. No gradient.
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim
Tensor all(const Tensor& x);  ///< 0-d: every element nonzero
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);  ///< along dim

// ---- scans along dim (ops/scan.cpp); same shape as x ----
/// Running sum / product; integer and bool inputs give i64 (no gradient). cumprod's
/// gradient is exact with zeros in x (PyTorch's cumprod_backward).
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);  ///< running product along dim, same shape
/// log(cumsum(exp(x))) computed stably; -inf entries allowed (float only).
Tensor logcumsumexp(const Tensor& x, int64_t dim);

// ---- sorting (ops/sort.cpp) ----
/// (values, indices) sorted along dim; always stable (equal values keep their order, so
/// `stable` changes nothing); NaN sorts as the largest value. Gradient routes to indices.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
/// sort's indices alone (i64, x's shape).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (smallest) along dim as (values, indices), in PyTorch 1.13's CPU order on
/// ties; unsorted (PyTorch's selection order) when !sorted. k in [0, size of dim].
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

}  // namespace ag
