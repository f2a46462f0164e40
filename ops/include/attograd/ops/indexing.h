#pragma once
/// \file
/// Indexing (ops/indexing.cpp): gathers, scatters, masked and one-hot indexing, and
/// embedding lookups. Index values are never wrapped: negative or >= size indices throw
/// IndexError. Gathers scatter-add their gradient back (repeated indices accumulate);
/// every backward is itself differentiable.
#include <cstdint>
#include <optional>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// ---- gathers ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);  ///< index: i64 1-D
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);        ///< PyTorch's gather
/// Rows of weight (V, E) for ids (any shape, i64) -> (..., E). The row padding_idx gets
/// no gradient; padding_idx is in [-V, V), a negative one counting from the end (PyTorch),
/// else IndexError. Ids outside [0, V) throw IndexError naming the id and V.
Tensor embedding(const Tensor& ids, const Tensor& weight, std::optional<int64_t> padding_idx = {});

// ---- scatters ----
/// x with out[i][index[i][j]] = src[i][j] (dim 1). index (i64) and src have x's number of
/// dims; index.size(d) <= src.size(d), and <= x.size(d) for d != dim; only src's
/// index-shaped corner is read. Repeated indices: PyTorch leaves the result undefined
/// (here the last in row-major order of index wins). dx = g with scattered places zeroed.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value);  ///< one value at every index
/// x with out[i][index[i][j]] += src[i][j] (dim 1); repeated indices add up.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
/// x with out.select(dim, index[j]) += alpha * source.select(dim, j); index 1-D (i64 or
/// i32) of length source.size(dim); source matches x's shape apart from dim.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1.0);

// ---- masks ----
/// Fills x with `value` where mask is true (PyTorch's masked_fill); mask broadcasts to x.
/// The result keeps x's dtype (value is cast, as in PyTorch).
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
/// x's elements where mask (b8, broadcasts with x) is true -> 1-D, row-major order.
Tensor masked_select(const Tensor& x, const Tensor& mask);
/// x (broadcast with mask) whose true mask positions take source's elements in row-major
/// order; source has any shape and at least as many elements as the mask has trues.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);

// ---- index lists (Tensor::index's rules: attograd/tensor_indexing.h) ----
/// x.index(indices) as a function (ATen's index): Python's x[...] (attograd/tensor_indexing.h).
Tensor index(const Tensor& x, const std::vector<indexing::TensorIndex>& indices);
/// torch.index_put: x with x[indices] = values (+= with accumulate, repeated indices adding
/// up), one index tensor per leading dim of x (an undefined one takes the whole dim).
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
/// (n, x.dim()) i64: the coordinates of x's nonzero (true, NaN) elements in row-major
/// order, as torch.nonzero. No gradient.
Tensor nonzero(const Tensor& x);
Tensor argwhere(const Tensor& x);  ///< torch.argwhere: nonzero's coordinates

// ---- one-hot ----
/// indices (...) i64 -> (..., C) i64 of 0/1; C = max + 1 when num_classes is -1. No gradient.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

}  // namespace ag
