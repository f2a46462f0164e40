// The rows of gemv.h for one level (isa.h). AVX-512: 16 lanes, the tail by masked
// loads and a masked fused multiply-add (lanes past K keep their sums); AVX2: two 8-lane
// halves of the same 16 partial sums, F16C enabled per function for f16, the tail
// scalar; SSE2: scalar. The final pairwise sum is the same scalar code at every level.
// One loop serves both weight types: a reader (Half or F32 below) loads a weight row's
// elements as f32.
#include "isa.h"

#include <cmath>
#include <cstdint>

#include "attograd/half.h"
#include "kernels/gemv.h"

namespace ag::kernels {
namespace {

// p[16] -> the sum, pairwise in the order gemv.h fixes.
[[maybe_unused]] float fold16(float* p) {
  for (int step = 8; step >= 1; step /= 2)
    for (int j = 0; j < step; ++j) p[j] = p[j] + p[j + step];
  return p[0];
}

// The weight type is a template argument, so that the inner loop has no branch on it.
template <bool BF16>
struct HalfReader {
  const uint16_t* w;
  float scalar(int64_t i) const { return BF16 ? detail::bf16_bits_to_float(w[i]) : detail::f16_bits_to_float(w[i]); }
#if defined(AG_ISA_avx512)
  __m512 load16(int64_t i, __mmask16 mask) const {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, w + i);
    if constexpr (BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
  }
#elif defined(AG_ISA_avx2)
  __attribute__((target("f16c"))) __m256 load8(int64_t i) const {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i));
    if constexpr (BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
  }
#endif
};

struct F32Reader {
  const float* w;
  float scalar(int64_t i) const { return w[i]; }
#if defined(AG_ISA_avx512)
  __m512 load16(int64_t i, __mmask16 mask) const { return _mm512_maskz_loadu_ps(mask, w + i); }
#elif defined(AG_ISA_avx2)
  __m256 load8(int64_t i) const { return _mm256_loadu_ps(w + i); }
#endif
};

// Elements [k0, k_len) of one output into the partial sums, scalar: p[k mod 16].
template <class R>
[[maybe_unused]] void tail(float* p, const float* x, const R& r, int64_t row, int64_t k0, int64_t k_len) {
  for (int64_t k = k0; k < k_len; ++k) p[k % 16] = std::fma(x[k], r.scalar(row + k), p[k % 16]);
}

#if defined(AG_ISA_avx512)
// fold16 in registers, the same adds in the same order: lanes j + 8, then j + 4, + 2, + 1.
float fold16(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v);
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  const __m256 a = _mm256_add_ps(lo, hi);
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, 1)));
}

// NB weight rows at once: NB * M independent chains of fused multiply-adds keep the
// loads streaming (one row at a time left the FMA latency exposed: 27 GB/s against
// sgemm's 34 at K 128). Each output keeps its own 16 partial sums, so NB changes no bits.
// M (the rows of x) is a template argument and the loops unroll (AG_UNROLL), so that the
// NB * M sums stay in registers.
template <int NB, int M, class R>
void block(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r, int64_t k_len, int64_t n) {
  const int64_t body = k_len / 16 * 16;
  const __mmask16 tail_mask = static_cast<__mmask16>((1u << (k_len - body)) - 1);
  __m512 acc[NB][M];
  AG_UNROLL for (int b = 0; b < NB; ++b) AG_UNROLL for (int i = 0; i < M; ++i) acc[b][i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < body; k += 16) {
    __m512 wv[NB];
    AG_UNROLL for (int b = 0; b < NB; ++b) wv[b] = r.load16((n + b) * k_len + k, 0xFFFF);
    AG_UNROLL for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_loadu_ps(x + i * ldx + k);
      AG_UNROLL for (int b = 0; b < NB; ++b) acc[b][i] = _mm512_fmadd_ps(xv, wv[b], acc[b][i]);
    }
  }
  if (tail_mask) {
    AG_UNROLL for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_maskz_loadu_ps(tail_mask, x + i * ldx + body);
      AG_UNROLL for (int b = 0; b < NB; ++b) acc[b][i] =
          _mm512_mask3_fmadd_ps(xv, r.load16((n + b) * k_len + body, tail_mask), acc[b][i], tail_mask);
    }
  }
  AG_UNROLL for (int b = 0; b < NB; ++b) AG_UNROLL for (int i = 0; i < M; ++i) y[i * ldy + n + b] = fold16(acc[b][i]);
}

// At most 16 accumulators: NB * M <= 16.
template <int M, class R>
void rows_of(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r, int64_t k_len, int64_t n0, int64_t n1) {
  int64_t n = n0;
  if constexpr (M == 1)
    for (; n + 8 <= n1; n += 8) block<8, M>(y, ldy, x, ldx, r, k_len, n);
  if constexpr (M <= 4)
    for (; n + 4 <= n1; n += 4) block<4, M>(y, ldy, x, ldx, r, k_len, n);
  if constexpr (M <= 8)
    for (; n + 2 <= n1; n += 2) block<2, M>(y, ldy, x, ldx, r, k_len, n);
  for (; n < n1; ++n) block<1, M>(y, ldy, x, ldx, r, k_len, n);
}

#elif defined(AG_ISA_avx2)
// NB weight rows by M rows of x at once, as the AVX-512 block: each output's 16 partial
// sums are two 8-lane halves, lo[b][i] and hi[b][i], in registers (M a template argument,
// AG_UNROLL), then stored for the scalar tail and the pairwise fold. One weight row at a
// time with a run-time M kept two fused multiply-add chains and the sums on the stack.
template <int NB, int M, class R>
__attribute__((target("f16c"))) void block(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r,
                                           int64_t k_len, int64_t n) {
  const int64_t body = k_len / 16 * 16;
  __m256 lo[NB][M], hi[NB][M];
  AG_UNROLL for (int b = 0; b < NB; ++b) AG_UNROLL for (int i = 0; i < M; ++i) lo[b][i] = hi[b][i] =
      _mm256_setzero_ps();
  for (int64_t k = 0; k < body; k += 16) {
    __m256 xl[M], xh[M];
    AG_UNROLL for (int i = 0; i < M; ++i) {
      xl[i] = _mm256_loadu_ps(x + i * ldx + k);
      xh[i] = _mm256_loadu_ps(x + i * ldx + k + 8);
    }
    AG_UNROLL for (int b = 0; b < NB; ++b) {
      const __m256 wl = r.load8((n + b) * k_len + k), wh = r.load8((n + b) * k_len + k + 8);
      AG_UNROLL for (int i = 0; i < M; ++i) {
        lo[b][i] = _mm256_fmadd_ps(xl[i], wl, lo[b][i]);
        hi[b][i] = _mm256_fmadd_ps(xh[i], wh, hi[b][i]);
      }
    }
  }
  AG_UNROLL for (int b = 0; b < NB; ++b) AG_UNROLL for (int i = 0; i < M; ++i) {
    alignas(32) float p[16];
    _mm256_store_ps(p, lo[b][i]);
    _mm256_store_ps(p + 8, hi[b][i]);
    tail(p, x + i * ldx, r, (n + b) * k_len, body, k_len);
    y[i * ldy + n + b] = fold16(p);
  }
}

// Accumulators, x and one weight row's halves in 16 registers: 2 NB M + 2 M + 2.
template <int M, class R>
__attribute__((target("f16c"))) void rows_of(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r,
                                             int64_t k_len, int64_t n0, int64_t n1) {
  int64_t n = n0;
  if constexpr (M == 1)
    for (; n + 4 <= n1; n += 4) block<4, M>(y, ldy, x, ldx, r, k_len, n);
  if constexpr (M == 2)
    for (; n + 2 <= n1; n += 2) block<2, M>(y, ldy, x, ldx, r, k_len, n);
  for (; n < n1; ++n) block<1, M>(y, ldy, x, ldx, r, k_len, n);
}
#endif

#if defined(AG_ISA_avx512) || defined(AG_ISA_avx2)
template <class R>
#if defined(AG_ISA_avx2)
__attribute__((target("f16c")))
#endif
void rows(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r, int64_t k_len, int64_t m, int64_t n0,
          int64_t n1) {
  static_assert(kGemvMaxRows == 8, "one case per row count");
  switch (m) {
    case 1: return rows_of<1>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 2: return rows_of<2>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 3: return rows_of<3>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 4: return rows_of<4>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 5: return rows_of<5>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 6: return rows_of<6>(y, ldy, x, ldx, r, k_len, n0, n1);
    case 7: return rows_of<7>(y, ldy, x, ldx, r, k_len, n0, n1);
    default: return rows_of<8>(y, ldy, x, ldx, r, k_len, n0, n1);
  }
}
#else
template <class R>
void rows(float* y, int64_t ldy, const float* x, int64_t ldx, const R& r, int64_t k_len, int64_t m, int64_t n0,
          int64_t n1) {
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t i = 0; i < m; ++i) {
      float p[16] = {};
      tail(p, x + i * ldx, r, n * k_len, 0, k_len);
      y[i * ldy + n] = fold16(p);
    }
}
#endif

void half_rows(float* y, int64_t ldy, const float* x, int64_t ldx, const uint16_t* w, int64_t k_len, int64_t m,
               int64_t n0, int64_t n1, bool bf16) {
  if (bf16)
    rows(y, ldy, x, ldx, HalfReader<true>{w}, k_len, m, n0, n1);
  else
    rows(y, ldy, x, ldx, HalfReader<false>{w}, k_len, m, n0, n1);
}

void f32_rows(float* y, int64_t ldy, const float* x, int64_t ldx, const float* w, int64_t k_len, int64_t m, int64_t n0,
              int64_t n1) {
  rows(y, ldy, x, ldx, F32Reader{w}, k_len, m, n0, n1);
}

}  // namespace

AG_ISA_KERNEL(half_gemv_rows, &half_rows);
AG_ISA_KERNEL(f32_gemv_rows, &f32_rows);

}  // namespace ag::kernels
