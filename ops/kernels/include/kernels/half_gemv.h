#pragma once
// bf16 / f16 weights times a few f32 rows, for decoding's x @ W^T (matmul.cpp): the
// weights widened in registers, never as an f32 copy, so a step reads 2 bytes per weight.
//   y[i * ldy + n] = sum_k x[i * ldx + k] * w[n * k_len + k],  i < m (m <= kMaxRows),
//   n0 <= n < n1; w holds bf16 (bf16 = true) or f16 bits, row n of W (N, K) contiguous.
// The sum has one order at every level: 16 partial sums, p[j] over k = j mod 16 in
// increasing k, each a fused multiply-add, then pairwise (p[j] += p[j + 8], + 4, + 2,
// + 1); so AVX-512, AVX2 and the scalar baseline give the same bits.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

inline constexpr int64_t kHalfGemvMaxRows = 8;

using HalfGemvFn = void (*)(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w, int64_t k_len,
                            int64_t m, int64_t n0, int64_t n1, bool bf16);
AG_DECLARE_DISPATCH(HalfGemvFn, half_gemv_rows);

}  // namespace ag::kernels
