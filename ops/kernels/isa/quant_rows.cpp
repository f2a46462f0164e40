// The weight-only quantized GEMV and dequantization rows of quant_rows.h for one level
// (isa.h). AVX-512 (16 lanes) and AVX2 (8 lanes) share one template over a small lane
// traits struct: weights widen int8 -> int32 -> f32 (vpmovsxbd) or, for 4-bit, bytes ->
// int32, the low nibbles (elements j..) and high nibbles (elements G/2 + j..) split by a
// mask and a shift, minus 8. The GEMV keeps one accumulator per input row (M <= 8, a
// template parameter so they stay in registers) and reads each weight byte once; K tails
// of the int8 form are scalar (4-bit needs none: K % G == 0 and G/2 is a multiple of the
// lanes). SSE2: the scalar reference (quant.cpp).
#include "isa.h"

#include <cstdint>

#include "kernels/quant_rows.h"

namespace ag::kernels {
namespace {

#if defined(AG_ISA_avx512) || defined(AG_ISA_avx2)
#if defined(AG_ISA_avx512)
struct V {
  static constexpr int64_t W = 16;
  using F = __m512;
  using I = __m512i;
  static F zero() { return _mm512_setzero_ps(); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static float sum(F v) { return _mm512_reduce_add_ps(v); }
  static F i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static I u8(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static F lo_nibble(I u) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(u, _mm512_set1_epi32(15)), _mm512_set1_epi32(8)));
  }
  static F hi_nibble(I u) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(u, 4), _mm512_set1_epi32(8)));
  }
};
#else
struct V {
  static constexpr int64_t W = 8;
  using F = __m256;
  using I = __m256i;
  static F zero() { return _mm256_setzero_ps(); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static float sum(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static F i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static I u8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static F lo_nibble(I u) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(u, _mm256_set1_epi32(15)), _mm256_set1_epi32(8)));
  }
  static F hi_nibble(I u) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(u, 4), _mm256_set1_epi32(8)));
  }
};
#endif

// ---- int8: y (M, n0..n1) from q (N, K) ----
// NB output rows at once (below): NB * MM independent chains of fused multiply-adds; one
// row at a time left the FMA latency exposed (a B1 step read 7.1 GB/s of weights). Each
// output keeps its own order, so NB changes no bits.
template <int MM, int NB>
void q8_block(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t K, const int8_t* q, const float* scale,
              const float* bias, int64_t n) {
  typename V::F acc[NB][MM];
  for (int b = 0; b < NB; ++b)
    for (int m = 0; m < MM; ++m) acc[b][m] = V::zero();
  int64_t k = 0;
  for (; k + V::W <= K; k += V::W) {
    typename V::F w[NB];
    for (int b = 0; b < NB; ++b) w[b] = V::i8(q + (n + b) * K + k);
    for (int m = 0; m < MM; ++m) {
      const typename V::F xv = V::load(x + m * ldx + k);
      for (int b = 0; b < NB; ++b) acc[b][m] = V::fma(xv, w[b], acc[b][m]);
    }
  }
  for (int b = 0; b < NB; ++b) {
    const int8_t* qr = q + (n + b) * K;
    for (int m = 0; m < MM; ++m) {
      float s = V::sum(acc[b][m]);
      for (int64_t t = k; t < K; ++t) s += x[m * ldx + t] * static_cast<float>(qr[t]);
      s *= scale[n + b];
      y[m * ldy + n + b] = bias ? s + bias[n + b] : s;
    }
  }
}

template <int MM>
void q8_rows(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t K, const int8_t* q, const float* scale,
             const float* bias, int64_t n0, int64_t n1) {
  constexpr int NB = MM <= 2 ? 4 : MM <= 4 ? 2 : 1;  // at most 8 accumulators
  int64_t n = n0;
  for (; n + NB <= n1; n += NB) q8_block<MM, NB>(y, ldy, x, ldx, K, q, scale, bias, n);
  for (; n < n1; ++n) q8_block<MM, 1>(y, ldy, x, ldx, K, q, scale, bias, n);
}

// ---- 4-bit: y (M, n0..n1) from q (N, K / 2) packed, scale (N, K / G) ----
// NB output rows at once, as q8_block: a group's two FMAs and its scale FMA chain on each
// other, so one row at a time read only 3.6 GB/s of weights.
template <int MM, int NB>
void q4_block(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t K, int64_t G, const uint8_t* q,
              const float* scale, const float* bias, int64_t n) {
  const int64_t groups = K / G, half = G / 2;
  typename V::F acc[NB][MM];
  for (int b = 0; b < NB; ++b)
    for (int m = 0; m < MM; ++m) acc[b][m] = V::zero();
  for (int64_t g = 0; g < groups; ++g) {
    const float* xg = x + g * G;
    typename V::F part[NB][MM];
    for (int b = 0; b < NB; ++b)
      for (int m = 0; m < MM; ++m) part[b][m] = V::zero();
    for (int64_t j = 0; j < half; j += V::W) {
      for (int b = 0; b < NB; ++b) {
        const typename V::I u = V::u8(q + (n + b) * (K / 2) + g * half + j);
        const typename V::F lo = V::lo_nibble(u), hi = V::hi_nibble(u);
        for (int m = 0; m < MM; ++m) {
          part[b][m] = V::fma(V::load(xg + m * ldx + j), lo, part[b][m]);
          part[b][m] = V::fma(V::load(xg + m * ldx + half + j), hi, part[b][m]);
        }
      }
    }
    for (int b = 0; b < NB; ++b) {
      const typename V::F s = V::set1(scale[(n + b) * groups + g]);
      for (int m = 0; m < MM; ++m) acc[b][m] = V::fma(part[b][m], s, acc[b][m]);
    }
  }
  for (int b = 0; b < NB; ++b)
    for (int m = 0; m < MM; ++m) {
      const float s = V::sum(acc[b][m]);
      y[m * ldy + n + b] = bias ? s + bias[n + b] : s;
    }
}

template <int MM>
void q4_rows(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t K, int64_t G, const uint8_t* q,
             const float* scale, const float* bias, int64_t n0, int64_t n1) {
  constexpr int NB = MM == 1 ? 4 : MM == 2 ? 2 : 1;  // acc and part: at most 16 registers
  int64_t n = n0;
  for (; n + NB <= n1; n += NB) q4_block<MM, NB>(y, ldy, x, ldx, K, G, q, scale, bias, n);
  for (; n < n1; ++n) q4_block<MM, 1>(y, ldy, x, ldx, K, G, q, scale, bias, n);
}

using Q8Rows = decltype(&q8_rows<1>);
using Q4Rows = decltype(&q4_rows<1>);
constexpr Q8Rows kQ8Rows[kQuantGemvMaxRows] = {&q8_rows<1>, &q8_rows<2>, &q8_rows<3>, &q8_rows<4>,
                                               &q8_rows<5>, &q8_rows<6>, &q8_rows<7>, &q8_rows<8>};
constexpr Q4Rows kQ4Rows[kQuantGemvMaxRows] = {&q4_rows<1>, &q4_rows<2>, &q4_rows<3>, &q4_rows<4>,
                                               &q4_rows<5>, &q4_rows<6>, &q4_rows<7>, &q4_rows<8>};

void q8_gemv_v(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, const int8_t* q,
               const float* scale, const float* bias, int64_t n0, int64_t n1) {
  for (int64_t m0 = 0; m0 < M; m0 += kQuantGemvMaxRows) {  // M > 8 only from a direct call
    const int64_t mm = M - m0 < kQuantGemvMaxRows ? M - m0 : kQuantGemvMaxRows;
    kQ8Rows[mm - 1](y + m0 * ldy, ldy, x + m0 * ldx, ldx, K, q, scale, bias, n0, n1);
  }
}

void q4_gemv_v(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, int64_t G, const uint8_t* q,
               const float* scale, const float* bias, int64_t n0, int64_t n1) {
  for (int64_t m0 = 0; m0 < M; m0 += kQuantGemvMaxRows) {
    const int64_t mm = M - m0 < kQuantGemvMaxRows ? M - m0 : kQuantGemvMaxRows;
    kQ4Rows[mm - 1](y + m0 * ldy, ldy, x + m0 * ldx, ldx, K, G, q, scale, bias, n0, n1);
  }
}

// ---- dequantization: one multiply per element, the scalar reference's bits ----
void q8_dequant_v(float* out, const int8_t* q, const float* scale, int64_t K, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    const int8_t* qr = q + n * K;
    float* o = out + (n - n0) * K;
    const typename V::F s = V::set1(scale[n]);
    int64_t k = 0;
    for (; k + V::W <= K; k += V::W) V::store(o + k, V::mul(V::i8(qr + k), s));
    for (; k < K; ++k) o[k] = static_cast<float>(qr[k]) * scale[n];
  }
}

void q4_dequant_v(float* out, const uint8_t* q, const float* scale, int64_t K, int64_t G, int64_t n0, int64_t n1) {
  const int64_t groups = K / G, half = G / 2;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* b = q + n * (K / 2) + g * half;
      float* o = out + (n - n0) * K + g * G;
      const typename V::F s = V::set1(scale[n * groups + g]);
      for (int64_t j = 0; j < half; j += V::W) {
        const typename V::I u = V::u8(b + j);
        V::store(o + j, V::mul(V::lo_nibble(u), s));
        V::store(o + half + j, V::mul(V::hi_nibble(u), s));
      }
    }
}
#endif

}  // namespace

#if defined(AG_ISA_avx512) || defined(AG_ISA_avx2)
AG_ISA_KERNEL(q8_gemv, &q8_gemv_v);
AG_ISA_KERNEL(q4_gemv, &q4_gemv_v);
AG_ISA_KERNEL(q8_dequant_rows, &q8_dequant_v);
AG_ISA_KERNEL(q4_dequant_rows, &q4_dequant_v);
#else
AG_ISA_KERNEL(q8_gemv, &quant_ref::q8_gemv);
AG_ISA_KERNEL(q4_gemv, &quant_ref::q4_gemv);
AG_ISA_KERNEL(q8_dequant_rows, &quant_ref::q8_dequant_rows);
AG_ISA_KERNEL(q4_dequant_rows, &quant_ref::q4_dequant_rows);
#endif

}  // namespace ag::kernels
