#pragma once
// GELU rows of gelu.cpp, float only (double runs the scalar libm formulas there, for
// PyTorch's float64 answers); tanh picks the tanh approximation.
//   gelu_row:          PyTorch's float arithmetic around erf / tanh computed in double
//                      lanes and rounded once (libm's erff / tanhf)
//   gelu_backward_row: out = g gelu'(x), computed in double and rounded once (1 + erf
//                      as erfc: no cancellation)
// xsimd's double erf / tanh / exp differ by a few double ulps between widths, so a
// float result can round the other way at one level (tests/test_simd_elementwise.cpp).
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

using GeluRowFn = void (*)(float* out, const float* x, int64_t n, bool tanh);
AG_DECLARE_DISPATCH(GeluRowFn, gelu_row);

using GeluBackwardRowFn = void (*)(float* out, const float* g, const float* x, int64_t n, bool tanh);
AG_DECLARE_DISPATCH(GeluBackwardRowFn, gelu_backward_row);

}  // namespace ag::kernels
