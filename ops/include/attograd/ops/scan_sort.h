#pragma once
/// \file
/// Scans and sorting along a dim (ops/scan_sort.cpp). PyTorch 1.13's names, defaults and
/// gradients, ties and NaN included. Ops returning (values, indices) return std::pair,
/// like max(x, dim) (LibTorch returns std::tuple); indices are i64.
#include <cstdint>
#include <utility>

#include "attograd/tensor.h"

namespace ag {

// ---- scans: x's shape ----
/// Running sum / product; integer and bool inputs give i64 (no gradient). cumprod's
/// gradient is exact with zeros in x (PyTorch's cumprod_backward).
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);  ///< running product along dim, same shape
/// log(cumsum(exp(x))) computed stably; -inf entries allowed (float only).
Tensor logcumsumexp(const Tensor& x, int64_t dim);
/// Running maximum (minimum) along dim as (values, indices i64), as torch.cummax /
/// torch.cummin (PyTorch 1.13): on ties the index is the later one; a NaN propagates
/// with its own index (a later NaN takes the index). Any dtype; the gradient goes to
/// the indices (scatter-add, as torch's).
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);  ///< see cummax

// ---- sorting ----
/// (values, indices) sorted along dim; always stable (equal values keep their order, so
/// `stable` changes nothing); NaN sorts as the largest value. Gradient routes to indices.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
/// sort's indices alone (i64, x's shape).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (smallest) along dim as (values, indices), in PyTorch 1.13's CPU order on
/// ties; unsorted (PyTorch's selection order) when !sorted. k in [0, size of dim].
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

}  // namespace ag
