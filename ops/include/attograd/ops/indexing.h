#pragma once
/// \file
/// Scatter, masked and one-hot indexing, and einsum (ops/scatter.cpp, ops/einsum.cpp).
/// Index values are never wrapped: negative or >= size indices throw IndexError.
#include <string>
#include <vector>

#include "attograd/ops.h"

namespace ag {

// ---- scatter family (ops/scatter.cpp) ----
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
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 double alpha = 1.0);
/// x's elements where mask (b8, broadcasts with x) is true -> 1-D, row-major order.
Tensor masked_select(const Tensor& x, const Tensor& mask);
/// x (broadcast with mask) whose true mask positions take source's elements in row-major
/// order; source has any shape and at least as many elements as the mask has trues.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
/// indices (...) i64 -> (..., C) i64 of 0/1; C = max + 1 when num_classes is -1. No gradient.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// ---- einsum (ops/einsum.cpp) ----
/// PyTorch's einsum: letters a-zA-Z, optional "->output" (implicit: letters seen once,
/// sorted, after the ellipsis dims), "..." broadcasting, a repeated letter within an
/// operand takes a diagonal, letters left out of the output are summed. Built from
/// views, sums and one batched matmul per pair of operands (left to right).
/// Example: einsum("bhld,bhsd->bhls", {q, k}) (B, h, L, S) attention scores.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ag
