// The rows of half_gemv.h for one level (isa.h). AVX-512: 16 lanes, the tail by masked
// loads and a masked fused multiply-add (lanes past K keep their sums); AVX2: two 8-lane
// halves of the same 16 partial sums, F16C enabled per function for f16, the tail
// scalar; SSE2: scalar. The final pairwise sum is the same scalar code at every level.
#include "isa.h"

#include <cmath>
#include <cstdint>

#include "attograd/half.h"
#include "kernels/half_gemv.h"

namespace ag::kernels {
namespace {

[[maybe_unused]] float widen_scalar(uint16_t h, bool bf16) {
  return bf16 ? detail::bf16_bits_to_float(h) : detail::f16_bits_to_float(h);
}

// p[16] -> the sum, pairwise in the order half_gemv.h fixes.
float fold16(float* p) {
  for (int step = 8; step >= 1; step /= 2)
    for (int j = 0; j < step; ++j) p[j] = p[j] + p[j + step];
  return p[0];
}

// Elements [k0, k_len) of one output into the partial sums, scalar: p[k mod 16].
[[maybe_unused]] void tail(float* p, const float* x, const uint16_t* w, int64_t k0, int64_t k_len, bool bf16) {
  for (int64_t k = k0; k < k_len; ++k) p[k % 16] = std::fma(x[k], widen_scalar(w[k], bf16), p[k % 16]);
}

#if defined(AG_ISA_avx512)
__m512 widen16(const uint16_t* w, bool bf16, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, w);
  if (bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

void rows(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w, int64_t k_len, int64_t m, int64_t n0,
          int64_t n1, bool bf16) {
  const int64_t body = k_len / 16 * 16;
  const __mmask16 tail_mask = static_cast<__mmask16>((1u << (k_len - body)) - 1);
  for (int64_t n = n0; n < n1; ++n) {
    const uint16_t* wr = w + n * k_len;
    __m512 acc[kHalfGemvMaxRows];
    for (int64_t i = 0; i < m; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t k = 0; k < body; k += 16) {
      const __m512 wv = widen16(wr + k, bf16, 0xFFFF);
      for (int64_t i = 0; i < m; ++i) acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(x + i * ldx + k), wv, acc[i]);
    }
    if (tail_mask) {
      const __m512 wv = widen16(wr + body, bf16, tail_mask);
      for (int64_t i = 0; i < m; ++i)
        acc[i] = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(tail_mask, x + i * ldx + body), wv, acc[i], tail_mask);
    }
    for (int64_t i = 0; i < m; ++i) {
      alignas(64) float p[16];
      _mm512_store_ps(p, acc[i]);
      y[i * ldy + n] = fold16(p);
    }
  }
}
#elif defined(AG_ISA_avx2)
__attribute__((target("f16c"))) __m256 widen8(const uint16_t* w, bool bf16) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  if (bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);
}

__attribute__((target("f16c"))) void rows(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w,
                                          int64_t k_len, int64_t m, int64_t n0, int64_t n1, bool bf16) {
  const int64_t body = k_len / 16 * 16;
  for (int64_t n = n0; n < n1; ++n) {
    const uint16_t* wr = w + n * k_len;
    __m256 lo[kHalfGemvMaxRows], hi[kHalfGemvMaxRows];
    for (int64_t i = 0; i < m; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
    for (int64_t k = 0; k < body; k += 16) {
      const __m256 wl = widen8(wr + k, bf16), wh = widen8(wr + k + 8, bf16);
      for (int64_t i = 0; i < m; ++i) {
        lo[i] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i * ldx + k), wl, lo[i]);
        hi[i] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i * ldx + k + 8), wh, hi[i]);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      alignas(32) float p[16];
      _mm256_store_ps(p, lo[i]);
      _mm256_store_ps(p + 8, hi[i]);
      tail(p, x + i * ldx, wr, body, k_len, bf16);
      y[i * ldy + n] = fold16(p);
    }
  }
}
#else
void rows(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w, int64_t k_len, int64_t m, int64_t n0,
          int64_t n1, bool bf16) {
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t i = 0; i < m; ++i) {
      float p[16] = {};
      tail(p, x + i * ldx, w + n * k_len, 0, k_len, bf16);
      y[i * ldy + n] = fold16(p);
    }
}
#endif

}  // namespace

AG_ISA_KERNEL(half_gemv_rows, &rows);

}  // namespace ag::kernels
