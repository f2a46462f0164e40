#pragma once
// A few f32 rows times a transposed weight, for decoding's x @ W^T (matmul.cpp):
//   y[i * ldy + n] = sum_k x[i * ldx + k] * w[n * k_len + k],  i < m (m <= kGemvMaxRows),
//   n0 <= n < n1; row n of W (N, K) contiguous.
// half_gemv_rows reads bf16 (bf16 = true) or f16 weights and widens them in registers,
// never as an f32 copy, so a step reads 2 bytes per weight; f32_gemv_rows reads f32
// weights. Both exist so that matmul can split N over the threads: a decode step's
// products are single-threaded in sgemm, and each core streaming its own columns from
// its own L2 is where a 2-thread step gains (tools/benchmarks/README.md, workload 8).
// The sum has one order at every level: 16 partial sums, p[j] over k = j mod 16 in
// increasing k, each a fused multiply-add, then pairwise (p[j] += p[j + 8], + 4, + 2,
// + 1); so AVX-512, AVX2 and the scalar baseline give the same bits, and so does any
// split of N over threads.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

inline constexpr int64_t kGemvMaxRows = 8;

using HalfGemvFn = void (*)(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w, int64_t k_len,
                            int64_t m, int64_t n0, int64_t n1, bool bf16);
AG_DECLARE_DISPATCH(HalfGemvFn, half_gemv_rows);

using F32GemvFn = void (*)(float* y, int64_t ldy, const float* x, int64_t ldx, const float* w, int64_t k_len, int64_t m,
                           int64_t n0, int64_t n1);
AG_DECLARE_DISPATCH(F32GemvFn, f32_gemv_rows);

}  // namespace ag::kernels
