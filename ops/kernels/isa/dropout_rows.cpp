// The dropout hash, the Philox stream and the keep mask of dropout_rows.h for one level
// (isa.h: compiled once per level, Arch its xsimd arch).
#include "isa.h"

#include <algorithm>
#include <cstdint>

#include "kernels/dropout_rows.h"

namespace ag::kernels {
namespace {

template <class A>
struct Dropout {
  using U = xsimd::batch<uint32_t, A>;
  static constexpr int64_t WU = static_cast<int64_t>(U::size);

  static U mix(U x) {
    x ^= x >> 16;
    x *= U(0x7feb352dU);
    x ^= x >> 15;
    x *= U(0x846ca68bU);
    x ^= x >> 16;
    return x;
  }

  static void hash_row(uint32_t* h, int64_t n, uint32_t lo0, uint32_t k0, uint32_t hi_key) {
    alignas(64) uint32_t iota[WU];
    for (int64_t k = 0; k < WU; ++k) iota[k] = static_cast<uint32_t>(k);
    const U step = U::load_aligned(iota), vk0(k0), vhi(hi_key);
    int64_t c = 0;
    for (; c + WU <= n; c += WU) {
      const U lo = U(lo0 + static_cast<uint32_t>(c)) + step;
      mix(mix(lo ^ vk0) + vhi).store_unaligned(h + c);
    }
    for (; c < n; ++c) h[c] = mix32(mix32((lo0 + static_cast<uint32_t>(c)) ^ k0) + hi_key);
  }

  // Philox over W64 counters at once: each 64-bit lane holds one 32-bit word of its
  // block's counter, so one pmuludq (32 x 32 -> 64 on the low halves) is a whole round's
  // product for every lane.
  using U64 = xsimd::batch<uint64_t, A>;
  static constexpr int64_t W64 = static_cast<int64_t>(U64::size);

  static U64 mul32(const U64& a, const U64& b) {
    if constexpr (W64 == 2)
      return U64(_mm_mul_epu32(a, b));
    else if constexpr (W64 == 4)
      return U64(_mm256_mul_epu32(a, b));
    else
      return U64(_mm512_mul_epu32(a, b));
  }

  // dst = p0 q0 p1 q1 ... (2 W64 words): the lane-crossing interleave at each width.
  static void store_interleaved(uint64_t* dst, const U64& p, const U64& q) {
    if constexpr (W64 == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi64(p, q));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2), _mm_unpackhi_epi64(p, q));
    } else if constexpr (W64 == 4) {
      const __m256i lo = _mm256_unpacklo_epi64(p, q), hi = _mm256_unpackhi_epi64(p, q);  // p0 q0 p2 q2, p1 q1 p3 q3
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
    } else {
      const __m512i lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
      _mm512_storeu_si512(dst, _mm512_permutex2var_epi64(p, lo, q));
      _mm512_storeu_si512(dst + 8, _mm512_permutex2var_epi64(p, hi, q));
    }
  }

  // NG vectors of counters at once: the ten rounds are one dependency chain per vector
  // (a 32 x 32 product each), so independent chains side by side keep the multiplier busy.
  template <int NG>
  static void philox_vectors(uint32_t* out, uint64_t block0, uint32_t k0, uint32_t k1) {
    const U64 lo32(0xffffffffull), m0(0xD2511F53ull), m1(0xCD9E8D57ull);
    alignas(64) uint64_t lane[W64];
    for (int64_t j = 0; j < W64; ++j) lane[j] = block0 + static_cast<uint64_t>(j);
    const U64 first = U64::load_aligned(lane);
    U64 c0[NG], c1[NG], c2[NG], c3[NG];
#pragma GCC unroll 8
    for (int g = 0; g < NG; ++g) {
      const U64 blk = first + U64(static_cast<uint64_t>(g * W64));
      c0[g] = blk & lo32, c1[g] = blk >> 32, c2[g] = U64(0ull), c3[g] = U64(0ull);
    }
    uint32_t key0 = k0, key1 = k1;
    for (int r = 0; r < 10; ++r) {
      const U64 vk0(key0), vk1(key1);
#pragma GCC unroll 8
      for (int g = 0; g < NG; ++g) {
        const U64 p0 = mul32(c0[g], m0), p1 = mul32(c2[g], m1);
        const U64 n0 = (p1 >> 32) ^ c1[g] ^ vk0, n2 = (p0 >> 32) ^ c3[g] ^ vk1;
        c1[g] = p1 & lo32, c3[g] = p0 & lo32, c0[g] = n0, c2[g] = n2;
      }
      key0 += 0x9E3779B9u, key1 += 0xBB67AE85u;
    }
    // Block j's words 0, 1 and 2, 3 as two 64-bit halves (little-endian), interleaved
    // block by block into out.
#pragma GCC unroll 8
    for (int g = 0; g < NG; ++g)
      store_interleaved(reinterpret_cast<uint64_t*>(out + 4 * g * W64), c0[g] | (c1[g] << 32), c2[g] | (c3[g] << 32));
  }

  static void philox_blocks(uint32_t* out, int64_t nblocks, uint64_t block0, uint32_t k0, uint32_t k1) {
    int64_t b = 0;
    for (; b + 4 * W64 <= nblocks; b += 4 * W64)
      philox_vectors<4>(out + 4 * b, block0 + static_cast<uint64_t>(b), k0, k1);
    for (; b + W64 <= nblocks; b += W64) philox_vectors<1>(out + 4 * b, block0 + static_cast<uint64_t>(b), k0, k1);
    for (; b < nblocks; ++b) {
      const uint64_t blk = block0 + static_cast<uint64_t>(b);
      const uint32_t ctr[4] = {static_cast<uint32_t>(blk), static_cast<uint32_t>(blk >> 32), 0, 0}, key[2] = {k0, k1};
      philox4x32_10(ctr, key, out + 4 * b);
    }
  }

  template <class T>
  static void keep_mask(T* z, const uint32_t* h, int64_t n, uint64_t keep, T scale) {
    using V = xsimd::batch<T, A>;
    constexpr int64_t W = static_cast<int64_t>(V::size);
    int64_t c = 0;
    if (keep > 0xffffffffull) {
      std::fill(z, z + n, scale);
      return;
    }
    if constexpr (std::is_same_v<T, float> && W == WU) {  // one mask lane per 32-bit word
      const U vk(static_cast<uint32_t>(keep)), bits = xsimd::bitwise_cast<U>(V(scale));
      for (; c + W <= n; c += W) {
        const U m = xsimd::select(U::load_unaligned(h + c) < vk, bits, U(0u));
        xsimd::bitwise_cast<V>(m).store_unaligned(z + c);
      }
    }
    for (; c < n; ++c) z[c] = h[c] < keep ? scale : T(0);
  }
};

}  // namespace

AG_ISA_KERNEL(hash_row, &Dropout<Arch>::hash_row);
AG_ISA_KERNEL(philox_blocks, &Dropout<Arch>::philox_blocks);
AG_ISA_KERNEL(keep_mask_f32, &Dropout<Arch>::keep_mask<float>);
AG_ISA_KERNEL(keep_mask_f64, &Dropout<Arch>::keep_mask<double>);

}  // namespace ag::kernels
