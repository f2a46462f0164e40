#pragma once
// Dynamic int8 linear (torchao's int8_dynamic_activation_int8_weight; nn/QUANTIZATION.md):
//   y (M, N) = x (M, K) @ W^T (+ b) with x quantized per row at run time,
//   xq[m, k] = round_half_even(x[m, k] * 127 / max|x[m, :]|) in [-127, 127], xs[m] = max|x[m, :]| / 127,
//   W as int8 q (N, K) with one f32 scale per output row (the int8_weight_only storage),
//   y[m, n] = float(sum_k xq[m, k] * q[n, k]) * xs[m] * ws[n] (+ b[n]).
// The sum is exact in int32 (|xq|, |q| <= 127, K <= kS8MaxK), so every level gives the
// scalar reference's bits. Levels: AVX-512 with VNNI (vpdpbusd, u8 x s8: the activations
// offset by +128 and 128 * rowsum(q) taken off) or, without VNNI, AVX-512BW vpmaddwd on
// int16; AVX2 vpmaddwd on int16 (no saturation: products <= 127 * 127, pairs < 2^15 * 2);
// the baseline (sse2) runs the scalar reference. Stub in isa/s8_gemm.cpp, the rest in
// s8_gemm.cpp.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// Largest K whose int32 sums cannot overflow: 127 * 127 * K < 2^31.
inline constexpr int64_t kS8MaxK = 131072;

// y[m * ldy + n] as above for m < M (any M) and n in [n0, n1); xq rows ldx apart. Output
// rows are taken four at a time and the activation rows up to four (AVX-512) or two (AVX2)
// at a time, so the weight rows of a block are read from memory once per call.
using S8GemmFn = void (*)(float* y, int64_t ldy, const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K,
                          const int8_t* q, const float* ws, const float* bias, int64_t n0, int64_t n1);
AG_DECLARE_DISPATCH(S8GemmFn, s8_gemm);

// The scalar reference (the sse2 slot, and what the tests compare with).
namespace quant_ref {
void s8_gemm(float* y, int64_t ldy, const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K,
             const int8_t* q, const float* ws, const float* bias, int64_t n0, int64_t n1);
}  // namespace quant_ref

// Whether this CPU has AVX-512 VNNI, and whether the avx512 slot uses it (default: if it
// has it). set_s8_vnni(false) makes that slot run its AVX-512BW vpmaddwd form (tests);
// set_s8_vnni(true) without VNNI is a ValueError. Returns the previous setting.
bool s8_vnni_supported();
bool s8_vnni();
bool set_s8_vnni(bool on);

// Products of more than kS8GemvMaxRows rows go to oneDNN's int8 matmul where the library
// has it and the CPU has VNNI (its brgemm kernels, VNNI or AMX, sum exactly in int32, and
// beat these blocks 1.3x at 4 rows to 4.3x at 32 there: nn/QUANTIZATION.md), then are
// scaled as the reference does, so the bits do not change. Up to 3 rows the blocks are as
// fast or faster (the product is bound by reading the weight, and oneDNN adds its per-call
// setup). set_s8_dnnl(false) keeps every M on s8_gemm (tests); returns the previous setting.
inline constexpr int64_t kS8GemvMaxRows = 3;
bool set_s8_dnnl(bool on);
// acc (M, N), rows ldc apart, = xq (M, K) @ q[n0.., :]^T exactly in int32 through oneDNN;
// false when it declines (no oneDNN, no VNNI/AMX kernel, an error). matmul_dnnl.cpp.
bool s8_matmul_dnnl(int32_t* acc, int64_t ldc, const int8_t* xq, int64_t M, int64_t K, const int8_t* q, int64_t N);

// Rows of x (M, K) f32 to int8 codes and scales as above (all levels share it: the codes
// are the same bits everywhere). A row of zeros gets scale 0 and codes 0; a row holding
// inf or NaN gets a non-finite scale, so its outputs are non-finite.
void quantize_rows_s8(int8_t* xq, float* xs, const float* x, int64_t M, int64_t K);

// The whole product, x (M, K) and y (M, N) contiguous: quantize_rows_s8, then s8_gemm (or
// oneDNN, above) with the output rows split over the thread pool.
void s8_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, const int8_t* q, const float* ws,
               const float* bias);

}  // namespace ag::kernels
