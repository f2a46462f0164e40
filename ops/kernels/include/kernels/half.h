#pragma once
// bf16 / f16 in the computing kernels (issue 25). PyTorch's CPU rule for the 16-bit
// floats is to compute in f32 and round each result once; a kernel without a 16-bit path
// of its own does exactly that at its entry:
//   if (is_half(x)) return to_half(kernel(as_f32(x), ...), x.dtype());
// f32 holds every bf16 and f16 value exactly, so data-moving kernels (gather, scatter,
// sort indices) stay exact this way, and computing ones round once, as PyTorch. The cost
// is a conversion each way and two f32 tensors; contiguous row kernels (gelu) avoid the
// tensors with in_f32_chunks below, and bf16 GEMM has its own engine (matmul_dnnl.h).
// Internal header.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "kernels/convert_rows.h"
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

// The contiguous row conversions of the 16-bit dtype d (bf16, else f16) at the level in
// use: widen_row(d)(out, bits, n), round_row(d)(bits, x, n).
inline FromHalfRowFn widen_row(DType d) { return (d == DType::bf16 ? bf16_to_f32_row : f16_to_f32_row).get(); }
inline ToHalfRowFn round_row(DType d) { return (d == DType::bf16 ? f32_to_bf16_row : f32_to_f16_row).get(); }

// dispatch_float with bf16 / f16 too (BFloat16, Half), for kernels whose 16-bit path is
// in_f32_chunks below (PyTorch's AT_DISPATCH_FLOATING_TYPES_AND2).
template <class F>
decltype(auto) dispatch_float_and_half(DType t, const char* op, F&& f) {
  if (t == DType::bf16) return f.template operator()<BFloat16>();
  if (t == DType::f16) return f.template operator()<Half>();
  return dispatch_float(t, op, std::forward<F>(f));
}

// A contiguous row of n 16-bit values (H = BFloat16 or Half) through an f32 row function
// f(out, second, first, m) (second may be null), in chunks that stay in L1: each chunk
// widened, computed, rounded once into out. The same bits as widening the whole tensor
// first (f sees each element alone), without the two f32 tensors that costs.
template <class H, class F>
void in_f32_chunks(H* out, const H* second, const H* first, int64_t n, F&& f) {
  constexpr int64_t kChunk = 512;
  alignas(64) float a[kChunk], b[kChunk], o[kChunk];
  constexpr DType d = std::is_same_v<H, BFloat16> ? DType::bf16 : DType::f16;
  const FromHalfRowFn widen = widen_row(d);
  const ToHalfRowFn round = round_row(d);
  auto bits = [](const H* p) { return reinterpret_cast<const uint16_t*>(p); };
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    widen(a, bits(first + i), m);
    if (second) widen(b, bits(second + i), m);
    f(o, second ? b : nullptr, a, m);
    round(reinterpret_cast<uint16_t*>(out + i), o, m);
  }
}

}  // namespace ag::kernels
