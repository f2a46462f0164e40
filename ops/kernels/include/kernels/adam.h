#pragma once
// The optimizer's vector kernels (optim/optimizer.cpp, optim/clip.cpp), float and
// double.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// Adam / AdamW on n parameters, IEEE operations in torch's order (1.13, single-tensor),
// bit-identical at every level:
//   decoupled: w *= decay, else g += wd w;  m = b1 m + c1 g;  v = b2 v + c2 g g;
//   vmax = max(vmax, v) (AMSGrad, when vmax is not null);  w -= ss m / (sqrt(v) / bc + eps)
template <class T>
struct AdamStep {
  bool decoupled;
  T wd, decay, b1, b2, c1, c2, eps, ss, bc;
};
template <class T>
using AdamUpdateFn = void (*)(T* w, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamStep<T>& h);
AG_DECLARE_FLOAT_DISPATCH(AdamUpdateFn, adam_update);

// Sum of x^2 over n elements, in double lanes (clip_grad_norm_).
template <class T>
using SumSqFn = double (*)(const T* x, int64_t n);
AG_DECLARE_FLOAT_DISPATCH(SumSqFn, sum_sq);

}  // namespace ag::kernels
