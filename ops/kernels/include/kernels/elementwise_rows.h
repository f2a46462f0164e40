#pragma once
// Elementwise rows of binary.cpp, float and double: out, a, b, c hold n contiguous
// elements. IEEE operations and copies, so every level gives the same bits.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// out = a op b for op 0 add, 1 sub, 2 mul, 3 div (the order of kernels::Binary), with
// layout 0: a and b rows, 1: b a single value (*b), 2: a a single value (*a).
template <class T>
using ArithRowFn = void (*)(int op, int layout, T* out, const T* a, const T* b, int64_t n);
AG_DECLARE_FLOAT_DISPATCH(ArithRowFn, arith_row);

// out = c ? a : b (where, masked_fill): c a row; a and b rows, or single values (*a,
// *b) when a_row / b_row is false.
template <class T>
using WhereRowFn = void (*)(T* out, const bool* c, const T* a, const T* b, int64_t n, bool a_row, bool b_row);
AG_DECLARE_FLOAT_DISPATCH(WhereRowFn, where_row);

}  // namespace ag::kernels
