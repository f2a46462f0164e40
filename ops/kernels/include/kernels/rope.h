#pragma once
// Rotary embedding kernel (rope.cpp). Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

// out = x * cos + rotate_half(x) * sin, rotate_half([x1, x2]) = [-x2, x1] over the last
// dim d. cos and sin: contiguous tables of equal shape whose numel T divides x's, laid out
// as x's trailing dims (row r of x, counted in units of d, reads table row r mod (T / d)).
Tensor rotary(const Tensor& x, const Tensor& cos, const Tensor& sin);

}  // namespace ag::kernels
