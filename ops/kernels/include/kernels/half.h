#pragma once
// bf16 / f16 in the computing kernels (issue 25). PyTorch's CPU rule for the 16-bit
// floats is to compute in f32 and round each result once; a kernel without a 16-bit path
// of its own does exactly that at its entry:
//   if (is_half(x)) return to_half(kernel(as_f32(x), ...), x.dtype());
// f32 holds every bf16 and f16 value exactly, so data-moving kernels (gather, scatter,
// sort indices) stay exact this way, and computing ones round once, as PyTorch. The cost
// is a conversion each way; hot kernels (GEMM, attention) get native 16-bit paths later.
// Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

// A bf16 or f16 tensor.
inline bool is_half(const Tensor& t) { return t.defined() && is_reduced_float(t.dtype()); }

// t in f32 when it is bf16 / f16; otherwise t itself (undefined stays undefined).
inline Tensor as_f32(const Tensor& t) { return is_half(t) ? convert(t, DType::f32) : t; }

// An f32 result rounded to the 16-bit dtype d; a bool or integer result (a mask, indices)
// as it is.
inline Tensor to_half(const Tensor& r, DType d) {
  return r.defined() && r.dtype() == DType::f32 && is_reduced_float(d) ? convert(r, d) : r;
}

}  // namespace ag::kernels
