#pragma once
// Raw kernels of the shape ops (ops/shape.cpp); no graph work.
#include "attograd/tensor.h"

namespace ag::kernels {

// A contiguous copy of x (..., R, C) with the elements outside the triangle set to 0:
// kept where col - row <= diagonal (lower) or col - row >= diagonal (upper).
Tensor triangle(const Tensor& x, int64_t diagonal, bool lower);

}  // namespace ag::kernels
