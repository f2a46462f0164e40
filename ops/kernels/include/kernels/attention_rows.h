#pragma once
// Row operations of the fused attention kernel (flash_attention.cpp), also used by
// softmax (exp_sub) and dropout (mul_into): float and double, one stub per dtype
// (row_max.of<T>()). Each works on n contiguous elements; in attention n is a tile row
// (at most the tile width, 64) or dv. Products and sums are IEEE operations, so every
// level gives the baseline's bits; exp is xsimd's at each width (a few ulps apart), the
// tail through the same vector exp as the body.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

template <class T>
using RowMaxFn = T (*)(const T* x, int64_t n);  // max over x (-inf when n == 0)
template <class T>
using RowExpSubSumFn = T (*)(T* x, int64_t n, T m);  // x = exp(x - m); returns sum x
template <class T>
using RowExpSubFn = void (*)(T* x, int64_t n, T m);  // x = exp(x - m)
template <class T>
using RowScaleFn = void (*)(T* x, int64_t n, T a);  // x *= a
template <class T>
using RowMulFn = void (*)(T* x, const T* z, int64_t n);  // x *= z
template <class T>
using RowMulIntoFn = void (*)(T* out, const T* x, const T* z, int64_t n);  // out = x * z
template <class T>
using RowDsFn = void (*)(T* dp, const T* p, int64_t n, T D);  // dp = p * (dp - D)
template <class T>
using RowDotFn = T (*)(const T* a, const T* b, int64_t n);  // sum a * b

AG_DECLARE_FLOAT_DISPATCH(RowMaxFn, row_max);
AG_DECLARE_FLOAT_DISPATCH(RowExpSubSumFn, row_exp_sub_sum);
AG_DECLARE_FLOAT_DISPATCH(RowExpSubFn, row_exp_sub);
AG_DECLARE_FLOAT_DISPATCH(RowScaleFn, row_scale);
AG_DECLARE_FLOAT_DISPATCH(RowMulFn, row_mul);
AG_DECLARE_FLOAT_DISPATCH(RowMulIntoFn, row_mul_into);
AG_DECLARE_FLOAT_DISPATCH(RowDsFn, row_ds);
AG_DECLARE_FLOAT_DISPATCH(RowDotFn, row_dot);

}  // namespace ag::kernels
