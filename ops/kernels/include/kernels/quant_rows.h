#pragma once
// Weight-only quantized linear kernels (nn/QUANTIZATION.md has the formats):
//   y (M, N) = x (M, K) @ dequant(W)^T (+ b),  x f32, W (N, K) quantized, b (N) f32.
// int8 ("q8"): W as int8 q (N, K), one f32 scale per output row: w = q * scale[n].
// 4-bit ("q4"): groups of G (32 or 64) along K, one f32 scale per group, q in [-7, 7]
//   stored as the nibble q + 8, packed (N, K / 2) bytes; byte j of group g holds element
//   g*G + j in its low nibble and g*G + G/2 + j in its high one (llama.cpp Q4_0's order:
//   16 or 32 consecutive bytes widen to two runs of consecutive elements, no shuffles).
// Stubs and scalar reference here, the vector kernels in isa/quant_rows.cpp, the rest in
// quant.cpp. The GEMV stubs read each weight byte once per call for M <= kQuantGemvMaxRows inputs;
// the dequant stubs expand rows to f32 for the larger M (tiles handed to sgemm). Levels:
// AVX-512 and AVX2 kernels, the baseline (sse2) runs the scalar reference.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

inline constexpr int64_t kQuantGemvMaxRows = 8;  // M up to this goes to the GEMV stubs

// y[m * ldy + n] = scale[n] * sum_k x[m * ldx + k] * q[n * K + k] (+ bias[n] when bias is
// not null), for m < M (<= kQuantGemvMaxRows) and n in [n0, n1).
using Q8GemvFn = void (*)(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, const int8_t* q,
                          const float* scale, const float* bias, int64_t n0, int64_t n1);
AG_DECLARE_DISPATCH(Q8GemvFn, q8_gemv);

// The same for 4-bit: q (N, K / 2) packed bytes, scale (N, K / G); K % G == 0, G 32 or 64.
using Q4GemvFn = void (*)(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, int64_t G,
                          const uint8_t* q, const float* scale, const float* bias, int64_t n0, int64_t n1);
AG_DECLARE_DISPATCH(Q4GemvFn, q4_gemv);

// out[(n - n0) * K + k] = dequant(W)[n, k] for n in [n0, n1): one rounding (q * scale), so
// every level gives the same bits.
using Q8DequantFn = void (*)(float* out, const int8_t* q, const float* scale, int64_t K, int64_t n0, int64_t n1);
AG_DECLARE_DISPATCH(Q8DequantFn, q8_dequant_rows);
using Q4DequantFn = void (*)(float* out, const uint8_t* q, const float* scale, int64_t K, int64_t G, int64_t n0,
                             int64_t n1);
AG_DECLARE_DISPATCH(Q4DequantFn, q4_dequant_rows);

// ---- scalar reference (quant.cpp): the sse2 slots, and what the tests compare with ----
namespace quant_ref {
void q8_gemv(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, const int8_t* q,
             const float* scale, const float* bias, int64_t n0, int64_t n1);
void q4_gemv(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, int64_t G, const uint8_t* q,
             const float* scale, const float* bias, int64_t n0, int64_t n1);
void q8_dequant_rows(float* out, const int8_t* q, const float* scale, int64_t K, int64_t n0, int64_t n1);
void q4_dequant_rows(float* out, const uint8_t* q, const float* scale, int64_t K, int64_t G, int64_t n0, int64_t n1);
}  // namespace quant_ref

// ---- quantization (once per weight; scalar, exact) ----
// Row n of w (N, K): scale[n] = max|w[n, :]| / 127, q = clamp(round_half_even(w / scale),
// -127, 127); an all-zero row gets scale 0 and q 0.
void quantize_q8(int8_t* q, float* scale, const float* w, int64_t N, int64_t K);
// Group g of row n: scale = max|w| / 7 over the group, q = clamp(round_half_even(w / scale),
// -7, 7), stored packed as above (-8 is never produced: see nn/QUANTIZATION.md).
void quantize_q4(uint8_t* q, float* scale, const float* w, int64_t N, int64_t K, int64_t G);

// The whole product on the thread pool: GEMV stubs for M <= kQuantGemvMaxRows, else
// tiles of rows dequantized to f32 and multiplied by sgemm. y (M, N), x (M, K) contiguous.
void q8_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, const int8_t* q, const float* scale,
               const float* bias);
void q4_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, int64_t G, const uint8_t* q,
               const float* scale, const float* bias);

}  // namespace ag::kernels
