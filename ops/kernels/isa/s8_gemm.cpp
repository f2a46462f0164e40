// The dynamic int8 product of s8_gemm.h for one level (isa.h): int8 activations times int8
// weights summed exactly in int32 lanes, then float(sum) * xs[m] * ws[n] (+ bias) in scalar
// code, the reference's very operations, so every level gives its bits.
//
// Blocking: NR = 4 weight rows by up to MR activation rows; one accumulator vector per
// (activation row, weight row) pair, reduced once at the end of K. Loop order: weight
// block outer, activation blocks inner, so the 4 weight rows come from memory once and
// from L1 for the other activation blocks (M <= 8 decode and larger M alike).
//   AVX-512 + VNNI: 64 bytes per step, vpdpbusd(u8 x, s8 w). x is offset to u8 by flipping
//     its sign bit (x + 128, in [1, 255]); sum (x + 128) w = sum x w + 128 sum w, and
//     128 sum w per weight row is computed once per block (vpdpbusd against bytes of 1)
//     and subtracted (mod 2^32: the true sum fits int32). MR = 4: 16 accumulators.
//   AVX-512BW: 32 bytes per step widened to int16 (vpmovsxbw), vpmaddwd + vpaddd. MR = 4.
//   AVX2: 16 bytes per step, the same on ymm. MR = 2 (16 ymm registers).
// K tails: masked loads on AVX-512 (zeros add nothing), scalar on AVX2.
#include "isa.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/s8_gemm.h"

namespace ag::kernels {
namespace {

#if defined(AG_ISA_avx512) || defined(AG_ISA_avx2)
constexpr int NR = 4;

// y for the block (MR rows from m, NR' rows from n): the reference's float arithmetic.
template <int MR, int NRr>
inline void store_block(const int32_t (&acc)[MR][NRr], float* y, int64_t ldy, const float* xs, const float* ws,
                        const float* bias, int64_t n) {
  AG_UNROLL for (int i = 0; i < MR; ++i) AG_UNROLL for (int j = 0; j < NRr; ++j) {
    const float v = static_cast<float>(acc[i][j]) * xs[i] * ws[n + j];
    y[i * ldy + n + j] = bias ? v + bias[n + j] : v;
  }
}

#if defined(AG_ISA_avx512)
constexpr int MRmax = 4;

// The sums of 4 vectors as 4 lanes: pairs interleaved and added within 128-bit lanes,
// then the four 128-bit lanes added (13 instructions instead of 4 full reductions).
inline __m128i reduce4(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));     // a b a b
  const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));     // c d c d
  const __m512i v = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));  // a b c d
  const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// s[j] = sum of the lanes of acc[j], j < NRr (<= 4); wraps mod 2^32 like the lanes.
template <int NRr>
inline void reduce_row(const __m512i (&acc)[NRr], int32_t (&s)[NRr]) {
  const __m512i z = _mm512_setzero_si512();
  alignas(16) int32_t t[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(t),
                  reduce4(acc[0], NRr > 1 ? acc[NRr > 1 ? 1 : 0] : z, NRr > 2 ? acc[NRr > 2 ? 2 : 0] : z,
                          NRr > 3 ? acc[NRr > 3 ? 3 : 0] : z));
  AG_UNROLL for (int j = 0; j < NRr; ++j) s[j] = t[j];
}

// ---- AVX-512BW: int16 pairs ----
template <int MR, int NRr>
void block_bw(float* y, int64_t ldy, const int8_t* x, const float* xs, int64_t ldx, int64_t K, const int8_t* q,
              const float* ws, const float* bias, int64_t n, const int32_t*) {
  __m512i acc[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm512_setzero_si512();
  for (int64_t k = 0; k < K; k += 32) {
    const __mmask32 mask = K - k >= 32 ? ~__mmask32{0} : (__mmask32{1} << (K - k)) - 1;
    __m512i w[NRr];
    AG_UNROLL for (int j = 0; j < NRr; ++j) w[j] =
        _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, q + (n + j) * K + k));
    AG_UNROLL for (int i = 0; i < MR; ++i) {
      const __m512i xv = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, x + i * ldx + k));
      AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm512_add_epi32(acc[i][j], _mm512_madd_epi16(xv, w[j]));
    }
  }
  int32_t s[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) reduce_row<NRr>(acc[i], s[i]);
  store_block<MR, NRr>(s, y, ldy, xs, ws, bias, n);
}

// ---- AVX-512 VNNI: u8 x s8 quads ----
// off[j] = 128 * sum_k q[n + j, k] (mod 2^32), once per block of weight rows.
template <int NRr>
__attribute__((target("avx512vnni"))) void row_offsets(const int8_t* q, int64_t K, int64_t n, int32_t (&off)[NRr]) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i acc[NRr];
  AG_UNROLL for (int j = 0; j < NRr; ++j) acc[j] = _mm512_setzero_si512();
  for (int64_t k = 0; k < K; k += 64) {
    const __mmask64 mask = K - k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (K - k)) - 1;
    AG_UNROLL for (int j = 0; j < NRr; ++j) acc[j] =
        _mm512_dpbusd_epi32(acc[j], ones, _mm512_maskz_loadu_epi8(mask, q + (n + j) * K + k));
  }
  reduce_row<NRr>(acc, off);
  AG_UNROLL for (int j = 0; j < NRr; ++j) off[j] = static_cast<int32_t>(static_cast<uint32_t>(off[j]) * 128u);
}

template <int MR, int NRr>
__attribute__((target("avx512vnni"))) void block_vnni(float* y, int64_t ldy, const int8_t* x, const float* xs,
                                                      int64_t ldx, int64_t K, const int8_t* q, const float* ws,
                                                      const float* bias, int64_t n, const int32_t* off) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm512_setzero_si512();
  for (int64_t k = 0; k < K; k += 64) {
    const __mmask64 mask = K - k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (K - k)) - 1;
    __m512i w[NRr];
    AG_UNROLL for (int j = 0; j < NRr; ++j) w[j] = _mm512_maskz_loadu_epi8(mask, q + (n + j) * K + k);
    AG_UNROLL for (int i = 0; i < MR; ++i) {
      const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, x + i * ldx + k), flip);  // x + 128
      AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], xv, w[j]);
    }
  }
  int32_t s[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) {
    reduce_row<NRr>(acc[i], s[i]);
    AG_UNROLL for (int j = 0; j < NRr; ++j)  // wraps like the lanes: the difference is the true sum
        s[i][j] = static_cast<int32_t>(static_cast<uint32_t>(s[i][j]) - static_cast<uint32_t>(off[j]));
  }
  store_block<MR, NRr>(s, y, ldy, xs, ws, bias, n);
}
#else
constexpr int MRmax = 2;

// ---- AVX2: int16 pairs, scalar K tail ----
// s[j] = sum of the lanes of acc[j], j < NRr (<= 4): three hadds and one 128-bit add.
template <int NRr>
inline void reduce_row(const __m256i (&acc)[NRr], int32_t (&s)[NRr]) {
  const __m256i z = _mm256_setzero_si256();
  const __m256i a = acc[0], b = NRr > 1 ? acc[NRr > 1 ? 1 : 0] : z, c = NRr > 2 ? acc[NRr > 2 ? 2 : 0] : z,
                d = NRr > 3 ? acc[NRr > 3 ? 3 : 0] : z;
  const __m256i v = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));  // a b c d | a b c d
  alignas(16) int32_t t[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(t),
                  _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  AG_UNROLL for (int j = 0; j < NRr; ++j) s[j] = t[j];
}

template <int MR, int NRr>
void block_avx2(float* y, int64_t ldy, const int8_t* x, const float* xs, int64_t ldx, int64_t K, const int8_t* q,
                const float* ws, const float* bias, int64_t n, const int32_t*) {
  __m256i acc[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm256_setzero_si256();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256i w[NRr];
    AG_UNROLL for (int j = 0; j < NRr; ++j) w[j] =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + (n + j) * K + k)));
    AG_UNROLL for (int i = 0; i < MR; ++i) {
      const __m256i xv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i * ldx + k)));
      AG_UNROLL for (int j = 0; j < NRr; ++j) acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(xv, w[j]));
    }
  }
  int32_t s[MR][NRr];
  AG_UNROLL for (int i = 0; i < MR; ++i) {
    reduce_row<NRr>(acc[i], s[i]);
    AG_UNROLL for (int j = 0; j < NRr; ++j) for (int64_t e = k; e < K; ++e) s[i][j] +=
        int32_t{x[i * ldx + e]} * int32_t{q[(n + j) * K + e]};
  }
  store_block<MR, NRr>(s, y, ldy, xs, ws, bias, n);
}
#endif

// One block; the last argument (VNNI only) is row_offsets' off for the block's weight rows.
using BlockFn = void (*)(float*, int64_t, const int8_t*, const float*, int64_t, int64_t, const int8_t*, const float*,
                         const float*, int64_t, const int32_t*);

// kBlocks[mr - 1][nr - 1] for one kernel family.
template <template <int, int> class F>
struct Table {
  template <int MR, int... J>
  static constexpr std::array<BlockFn, NR> row(std::integer_sequence<int, J...>) {
    return {F<MR, J + 1>::fn...};
  }
  template <int... I>
  static constexpr std::array<std::array<BlockFn, NR>, MRmax> make(std::integer_sequence<int, I...>) {
    return {row<I + 1>(std::make_integer_sequence<int, NR>{})...};
  }
  static constexpr auto blocks = make(std::make_integer_sequence<int, MRmax>{});
};

// Offsets (VNNI) of the weight rows [n, n + nr) into off.
using OffsetsFn = void (*)(const int8_t* q, int64_t K, int64_t n, int64_t nr, int32_t* off);

void run(const std::array<std::array<BlockFn, NR>, MRmax>& blocks, OffsetsFn offsets, float* y, int64_t ldy,
         const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K, const int8_t* q, const float* ws,
         const float* bias, int64_t n0, int64_t n1) {
  int32_t off[NR] = {};
  for (int64_t n = n0; n < n1; n += NR) {
    const int64_t nr = n1 - n < NR ? n1 - n : NR;
    if (offsets) offsets(q, K, n, nr, off);
    for (int64_t m = 0; m < M; m += MRmax) {
      const int64_t mr = M - m < MRmax ? M - m : MRmax;
      blocks[size_t(mr - 1)][size_t(nr - 1)](y + m * ldy, ldy, xq + m * ldx, xs + m, ldx, K, q, ws, bias, n, off);
    }
  }
}

#if defined(AG_ISA_avx512)
template <int MR, int NRr>
struct Bw {
  static constexpr BlockFn fn = &block_bw<MR, NRr>;
};
template <int MR, int NRr>
struct Vnni {
  static constexpr BlockFn fn = &block_vnni<MR, NRr>;
};
void vnni_offsets(const int8_t* q, int64_t K, int64_t n, int64_t nr, int32_t* off) {
  switch (nr) {
    case 1: row_offsets<1>(q, K, n, *reinterpret_cast<int32_t(*)[1]>(off)); break;
    case 2: row_offsets<2>(q, K, n, *reinterpret_cast<int32_t(*)[2]>(off)); break;
    case 3: row_offsets<3>(q, K, n, *reinterpret_cast<int32_t(*)[3]>(off)); break;
    default: row_offsets<4>(q, K, n, *reinterpret_cast<int32_t(*)[4]>(off)); break;
  }
}
void s8_gemm_v(float* y, int64_t ldy, const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K,
               const int8_t* q, const float* ws, const float* bias, int64_t n0, int64_t n1) {
  if (s8_vnni())
    run(Table<Vnni>::blocks, &vnni_offsets, y, ldy, xq, xs, ldx, M, K, q, ws, bias, n0, n1);
  else
    run(Table<Bw>::blocks, nullptr, y, ldy, xq, xs, ldx, M, K, q, ws, bias, n0, n1);
}
#else
template <int MR, int NRr>
struct Avx2 {
  static constexpr BlockFn fn = &block_avx2<MR, NRr>;
};
void s8_gemm_v(float* y, int64_t ldy, const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K,
               const int8_t* q, const float* ws, const float* bias, int64_t n0, int64_t n1) {
  run(Table<Avx2>::blocks, nullptr, y, ldy, xq, xs, ldx, M, K, q, ws, bias, n0, n1);
}
#endif
#endif

}  // namespace

#if defined(AG_ISA_avx512) || defined(AG_ISA_avx2)
AG_ISA_KERNEL(s8_gemm, &s8_gemm_v);
#else
AG_ISA_KERNEL(s8_gemm, &quant_ref::s8_gemm);
#endif

}  // namespace ag::kernels
