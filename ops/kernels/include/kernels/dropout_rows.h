#pragma once
// The random words behind dropout: the keyed hash of the fused attention kernel
// (flash_attention.cpp) and the Philox stream of dropout (fused.cpp), and the mask made
// from them. Integer operations, bit-identical at every level; the scalar references
// (philox4x32_10, mix32) are here too.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// h[c] = mix32(mix32(lo ^ k0) + hi_key) for lo = lo0 + c, c < n (no wrap past 2^32: the
// caller splits there).
using HashRowFn = void (*)(uint32_t* h, int64_t n, uint32_t lo0, uint32_t k0, uint32_t hi_key);
AG_DECLARE_DISPATCH(HashRowFn, hash_row);

// out[4 b + w] = word w of philox4x32_10({lo, hi of block0 + b, 0, 0}, {k0, k1}) for
// b < nblocks.
using PhiloxBlocksFn = void (*)(uint32_t* out, int64_t nblocks, uint64_t block0, uint32_t k0, uint32_t k1);
AG_DECLARE_DISPATCH(PhiloxBlocksFn, philox_blocks);

// z[c] = h[c] < keep ? scale : 0 for c < n (keep <= 2^32): float and double.
template <class T>
using KeepMaskFn = void (*)(T* z, const uint32_t* h, int64_t n, uint64_t keep, T scale);
AG_DECLARE_FLOAT_DISPATCH(KeepMaskFn, keep_mask);

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011),
// the counter-based generator PyTorch's GPU kernels draw dropout masks from: ten rounds
// of two 32 x 32 -> 64-bit products on a 128-bit counter under a 64-bit key. The scalar
// reference; philox_blocks is the vectorized form.
inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0, p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1), c3 = static_cast<uint32_t>(p0), c0 = n0, c2 = n2;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

// The 32-bit integer finalizer the dropout hash is built from (also the scalar
// reference for hash_row).
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace ag::kernels
