// The f32 <-> bf16 / f16 rows of convert_rows.h for one level (isa.h). AVX-512: the
// F16C-style vcvtps2ph / vcvtph2ps of AVX512F (round to nearest even in hardware) with
// NaNs rewritten to sign | 0x7E00 as PyTorch, and the bf16 round-to-nearest-even bit
// trick in 32-bit lanes. AVX2: the same with 8 lanes (vcvtps2ph needs F16C, which every
// AVX2 CPU has; enabled per function). SSE2: the scalar conversions. Tails: scalar.
#include "isa.h"

#include <cstdint>

#include "attograd/half.h"
#include "kernels/convert_rows.h"

namespace ag::kernels {
namespace {

void to_bf16_scalar(uint16_t* out, const float* x, int64_t i, int64_t n) {
  for (; i < n; ++i) out[i] = detail::float_to_bf16_bits(x[i]);
}
void to_f16_scalar(uint16_t* out, const float* x, int64_t i, int64_t n) {
  for (; i < n; ++i) out[i] = detail::float_to_f16_bits(x[i]);
}
void from_bf16_scalar(float* out, const uint16_t* x, int64_t i, int64_t n) {
  for (; i < n; ++i) out[i] = detail::bf16_bits_to_float(x[i]);
}
void from_f16_scalar(float* out, const uint16_t* x, int64_t i, int64_t n) {
  for (; i < n; ++i) out[i] = detail::f16_bits_to_float(x[i]);
}

#if defined(AG_ISA_avx512)
void to_bf16(uint16_t* out, const float* x, int64_t n) {
  int64_t i = 0;
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1), nan = _mm512_set1_epi32(0x7FC0);
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    __m512i r = _mm512_add_epi32(w, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(w, 16), one)));
    r = _mm512_srli_epi32(r, 16);
    const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(w, abs_mask), inf);
    r = _mm512_mask_mov_epi32(r, is_nan, nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(r));
  }
  to_bf16_scalar(out, x, i, n);
}
void to_f16(uint16_t* out, const float* x, int64_t n) {
  int64_t i = 0;
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m256i nan = _mm256_set1_epi16(0x7E00), sign_mask = _mm256_set1_epi16(static_cast<int16_t>(0x8000));
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(_mm512_castps_si512(v), abs_mask), inf);
    const __m256i fixed = _mm256_or_si256(_mm256_and_si256(h, sign_mask), nan);
    h = _mm256_mask_mov_epi16(h, is_nan, fixed);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  to_f16_scalar(out, x, i, n);
}
void from_bf16(float* out, const uint16_t* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm512_storeu_ps(out + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
  }
  from_bf16_scalar(out, x, i, n);
}
void from_f16(float* out, const uint16_t* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  from_f16_scalar(out, x, i, n);
}
#elif defined(AG_ISA_avx2)
void to_bf16(uint16_t* out, const float* x, int64_t n) {
  int64_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i bias = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1), nan = _mm256_set1_epi32(0x7FC0);
  for (; i + 16 <= n; i += 16) {
    __m256i r[2];
    for (int k = 0; k < 2; ++k) {
      const __m256i w = _mm256_castps_si256(_mm256_loadu_ps(x + i + 8 * k));
      __m256i t = _mm256_add_epi32(w, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(w, 16), one)));
      t = _mm256_srli_epi32(t, 16);
      // |w| > inf as signed 32-bit: both sides are non-negative.
      const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, abs_mask), inf);
      r[k] = _mm256_blendv_epi8(t, nan, is_nan);
    }
    // Every lane is < 2^16: the unsigned saturating pack is exact; it packs per 128-bit
    // lane, so the permute restores the order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  to_bf16_scalar(out, x, i, n);
}
__attribute__((target("f16c"))) void to_f16(uint16_t* out, const float* x, int64_t n) {
  int64_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m128i nan = _mm_set1_epi16(0x7E00), sign_mask = _mm_set1_epi16(static_cast<int16_t>(0x8000));
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i is_nan32 = _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_castps_si256(v), abs_mask), inf);
    // The 8 masks of all-ones / zero, narrowed to 16 bits (signed pack keeps -1 and 0).
    const __m128i is_nan = _mm_packs_epi32(_mm256_castsi256_si128(is_nan32), _mm256_extracti128_si256(is_nan32, 1));
    const __m128i fixed = _mm_or_si128(_mm_and_si128(h, sign_mask), nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_blendv_epi8(h, fixed, is_nan));
  }
  to_f16_scalar(out, x, i, n);
}
void from_bf16(float* out, const uint16_t* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  from_bf16_scalar(out, x, i, n);
}
__attribute__((target("f16c"))) void from_f16(float* out, const uint16_t* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  from_f16_scalar(out, x, i, n);
}
#else
void to_bf16(uint16_t* out, const float* x, int64_t n) { to_bf16_scalar(out, x, 0, n); }
void to_f16(uint16_t* out, const float* x, int64_t n) { to_f16_scalar(out, x, 0, n); }
void from_bf16(float* out, const uint16_t* x, int64_t n) { from_bf16_scalar(out, x, 0, n); }
void from_f16(float* out, const uint16_t* x, int64_t n) { from_f16_scalar(out, x, 0, n); }
#endif

}  // namespace

AG_ISA_KERNEL(f32_to_bf16_row, &to_bf16);
AG_ISA_KERNEL(f32_to_f16_row, &to_f16);
AG_ISA_KERNEL(bf16_to_f32_row, &from_bf16);
AG_ISA_KERNEL(f16_to_f32_row, &from_f16);

}  // namespace ag::kernels
