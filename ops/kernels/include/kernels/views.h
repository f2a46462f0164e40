#pragma once
// Views without autograd, for the kernels and the raw collectives (the differentiable
// views, Tensor::reshape / transpose / narrow / select / unsqueeze, are ops of the layer
// above, which a kernel must not call: the layered link refuses it). Each shares x's
// storage; dims may be negative (from the end). Errors name the function and the shape.
#include <vector>

#include "attograd/tensor.h"

namespace ag::kernels {

// x's storage seen with another shape, strides and offset (in elements); no bounds check
// beyond the caller's: the functions below compute valid ones.
Tensor alias(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset);

Tensor transpose_view(const Tensor& x, int64_t d0, int64_t d1);
Tensor narrow_view(const Tensor& x, int64_t d, int64_t start, int64_t length);
Tensor select_view(const Tensor& x, int64_t d, int64_t index);
Tensor unsqueeze_view(const Tensor& x, int64_t d);
// A contiguous x as `shape` (the same number of elements).
Tensor reshape_view(const Tensor& x, const Shape& shape);

// x's elements in row-major order, converted to T (Tensor::to_vector without the ops).
template <class T>
std::vector<T> values(const Tensor& x);

}  // namespace ag::kernels
