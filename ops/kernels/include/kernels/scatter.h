#pragma once
// Raw kernels behind ops/indexing.cpp (internal): assignment scatter, masked select /
// scatter and one-hot. No graph work; every index is checked before it is used.
#include "attograd/tensor.h"

namespace ag::kernels {

// PyTorch's rule for scatter / gather / index_add: every index in [0, size) (negative
// indices are errors, not wrapped). Throws IndexError naming op, value, dim and size.
void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op);

// A copy of x with out[..., index[k], ...] (along dim) = src[k], or `value` when src is
// undefined. index and src have the same shape; repeated indices: the last write in
// row-major order of index wins.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, double value);

// x and mask (b8) already of one shape: the elements of x where mask is true, 1-D, in
// row-major order.
Tensor masked_select(const Tensor& x, const Tensor& mask);

// x and mask (b8) of one shape: a copy of x whose true positions take source's
// elements in row-major order (source has at least count_true(mask) elements).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);

int64_t count_true(const Tensor& mask);

// indices (i64, all in [0, C)) -> i64 (..., C) with a 1 at each index.
Tensor one_hot(const Tensor& indices, int64_t num_classes);

}  // namespace ag::kernels
