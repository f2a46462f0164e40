#pragma once
// The fused attention kernel's row operations for one xsimd architecture A. Included
// only by simd.cpp (SSE2), simd_avx2.cpp and simd_avx512.cpp, each compiled for its
// instruction set. Everything here has internal linkage (the anonymous namespace) and
// calls only templates on A, so no function compiled with wide instructions can be
// picked by the linker for a caller built for the baseline.
#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/simd.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct Rows {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  static T max(const T* x, int64_t n) {
    T out = -std::numeric_limits<T>::infinity();
    int64_t i = 0;
    if (n >= W) {
      V acc = V::load_unaligned(x);
      for (i = W; i + W <= n; i += W) acc = xsimd::max(acc, V::load_unaligned(x + i));
      alignas(64) T lanes[W];
      acc.store_aligned(lanes);
      for (int64_t k = 0; k < W; ++k) out = lanes[k] > out ? lanes[k] : out;
    }
    for (; i < n; ++i) out = x[i] > out ? x[i] : out;
    return out;
  }

  static T exp_sub_sum(T* x, int64_t n, T m) {
    const V vm(m);
    V acc(T(0));
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      V e = xsimd::exp(V::load_unaligned(x + i) - vm);
      e.store_unaligned(x + i);
      acc += e;
    }
    T sum = xsimd::hadd(acc);
    if (i < n) {  // the tail through the same vector exp, so every element rounds alike
      alignas(64) T buf[W];
      for (int64_t k = 0; k < W; ++k) buf[k] = i + k < n ? x[i + k] : -std::numeric_limits<T>::infinity();
      V e = xsimd::exp(V::load_aligned(buf) - vm);
      e.store_aligned(buf);
      for (int64_t k = 0; i + k < n; ++k) sum += x[i + k] = buf[k];
    }
    return sum;
  }

  static void exp_sub(T* x, int64_t n, T m) { exp_sub_sum(x, n, m); }

  static void scale(T* x, int64_t n, T a) {
    const V va(a);
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::load_unaligned(x + i) * va).store_unaligned(x + i);
    for (; i < n; ++i) x[i] *= a;
  }

  static void mul(T* x, const T* z, int64_t n) { mul_into(x, x, z, n); }

  static void mul_into(T* out, const T* x, const T* z, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::load_unaligned(x + i) * V::load_unaligned(z + i)).store_unaligned(out + i);
    for (; i < n; ++i) out[i] = x[i] * z[i];
  }

  static void ds(T* dp, const T* p, int64_t n, T D) {
    const V vd(D);
    int64_t i = 0;
    for (; i + W <= n; i += W)
      (V::load_unaligned(p + i) * (V::load_unaligned(dp + i) - vd)).store_unaligned(dp + i);
    for (; i < n; ++i) dp[i] = p[i] * (dp[i] - D);
  }

  static T dot(const T* a, const T* b, int64_t n) {
    V acc(T(0));
    int64_t i = 0;
    for (; i + W <= n; i += W) acc = xsimd::fma(V::load_unaligned(a + i), V::load_unaligned(b + i), acc);
    T sum = xsimd::hadd(acc);
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }

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

  static RowOps<T> ops() {
    return RowOps<T>{&max, &exp_sub_sum, &exp_sub, &scale, &mul, &mul_into, &ds, &dot, &hash_row};
  }
};

}  // namespace
}  // namespace ag::kernels
