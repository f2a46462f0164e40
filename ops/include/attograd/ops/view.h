#pragma once
/// \file
/// Views (ops/view.cpp): tensors that share x's storage with a shape, strides and offset
/// of their own; no data is copied (reshape copies only when the strides do not allow a
/// view). Each backward maps g back onto x's shape. Dims may be negative.
#include <cstdint>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// ---- reshaping ----
Tensor reshape(const Tensor& x, const Shape& shape);  ///< one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);     ///< a view or ShapeError when the strides do not allow one
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);  ///< dims start..end merged into one
/// Dim `dim` split into `sizes` (product = x.size(dim); one size may be -1).
Tensor unflatten(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes);
Tensor unsqueeze(const Tensor& x, int64_t dim);      ///< view with a size-1 dim inserted at dim
Tensor squeeze(const Tensor& x);                     ///< view without any size-1 dims
Tensor squeeze(const Tensor& x, int64_t dim);        ///< view without dim when its size is 1 (else x)
Tensor expand(const Tensor& x, const Shape& shape);  ///< -1 keeps a dim

// ---- reordering dims ----
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);          ///< view with d0 and d1 swapped
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);  ///< view: output dim i is x's dims[i]
/// A view with dims source[i] moved to destination[i], the others kept in order.
Tensor movedim(const Tensor& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination);
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);  ///< one dim moved

// ---- parts ----
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end,
             int64_t step = 1);                                              ///< view of [start, end) by step
Tensor select(const Tensor& x, int64_t dim, int64_t index);                  ///< view at index, dim removed
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);  ///< view of [start, start+length)
/// A view: dims dim1, dim2 removed, their diagonal `offset` (> 0 above, < 0 below)
/// appended as the last dim.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
std::vector<Tensor> split(const Tensor& x, int64_t split_size,
                          int64_t dim = 0);  ///< views of split_size (last shorter)
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes,
                          int64_t dim = 0);                                   ///< views of these sizes
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);  ///< at most `chunks` views

}  // namespace ag
