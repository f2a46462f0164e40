#pragma once
// Layer norm over `rows` contiguous rows of n (fused.cpp), float and double. Statistics
// and the sums of the backward are accumulated in double lanes (so their last bits
// depend on the width); the elementwise parts are the same float (or double) operations
// at every level. w and b may be null.
//   forward:  mean, rstd per row (rows); y = (x - mean) rstd w + b   (rows, n)
//   backward: dx = rstd (g w - mean(g w) - xhat mean(g w xhat)) when dx is not null,
//             and dw += g xhat, db += g (per column (n), in double) when not null
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

template <class T>
using LayerNormRowsFn = void (*)(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n,
                                 double eps);
AG_DECLARE_FLOAT_DISPATCH(LayerNormRowsFn, layer_norm_rows);

template <class T>
using LayerNormBackwardRowsFn = void (*)(const T* x, const T* g, const T* w, const T* mean, const T* rstd, T* dx,
                                         double* dw, double* db, int64_t rows, int64_t n);
AG_DECLARE_FLOAT_DISPATCH(LayerNormBackwardRowsFn, layer_norm_backward_rows);

}  // namespace ag::kernels
