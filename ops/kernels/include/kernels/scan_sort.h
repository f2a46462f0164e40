#pragma once
// Raw scans and sorts along one dim (scan.cpp, sort.cpp): no graph work. Each returns a
// fresh contiguous tensor and accepts any strides; `dim` is already wrapped (0 for 0-d).
#include <cstdint>

#include "attograd/tensor.h"

namespace ag::kernels {

// Inclusive scan along dim, from the last element backwards when `reverse`. Floats
// accumulate in double and keep their dtype; integer and bool inputs give i64 (as
// PyTorch). logsumexp is float only and uses PyTorch's log-add-exp step (-inf stays
// -inf, +inf and NaN propagate).
enum class Scan { sum, prod, logsumexp };
Tensor scan(Scan op, const Tensor& x, int64_t dim, bool reverse);

// Indices (i64, x's shape) of a stable sort along dim; NaN sorts as the largest value.
Tensor sort_indices(const Tensor& x, int64_t dim, bool descending);

// Indices (i64, x's shape with dim = k) of PyTorch 1.13's CPU topk: nth_element (or
// partial_sort when k * 64 <= n) over (value, index) pairs, then a sort of the first
// k - 1 when `sorted`, so the order among ties is PyTorch's. NaN counts as the largest.
Tensor topk_indices(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted);

// Indices (i64, x's shape) of cummax (max) or cummin along dim, PyTorch 1.13's CPU rule:
// a tie takes the later index, a NaN its own index (the value stays NaN after it).
Tensor cum_extreme_indices(const Tensor& x, int64_t dim, bool max);

}  // namespace ag::kernels
