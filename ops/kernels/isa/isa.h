#pragma once
// Included first by every vector kernel source in this directory. ag_add_isa_kernels
// (cmake/attogradIsa.cmake) compiles each such source once per level of dispatch.h,
// through a generated wrapper that defines AG_ISA (sse2, avx2, avx512) and
// AG_ISA_<level>, with that level's instruction-set flags and -ffp-contract=off (no
// fused multiply-adds the baseline cannot do, so plain C++ arithmetic rounds the same at
// every level; xsimd's own fma calls are explicit).
//
// A source defines its kernels as templates on the xsimd arch in an anonymous
// namespace, instantiates them for `Arch` only, and fills this level's slot of each
// stub with AG_ISA_KERNEL. Internal linkage throughout: no function compiled with wide
// instructions can be picked by the linker for a caller built for the baseline.
#include <immintrin.h>
#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/dispatch.h"

#if !defined(AG_ISA)
#error "ops/kernels/isa/*.cpp are compiled through ag_add_isa_kernels (cmake/attogradIsa.cmake) only"
#endif

namespace ag::kernels {

// The xsimd arch of this compilation.
#if defined(AG_ISA_avx512)
using Arch = xsimd::avx512bw;  // F + CD + DQ + BW + VL, as dispatch.cpp checks
#elif defined(AG_ISA_avx2)
using Arch = xsimd::fma3<xsimd::avx2>;
#elif defined(AG_ISA_sse2)
using Arch = xsimd::sse2;
#else
#error "isa.h: no xsimd arch for this AG_ISA"
#endif

}  // namespace ag::kernels

// Put before a loop over a register block (accumulators of NB rows by M columns, say) so
// that it unrolls completely and the block's arrays become registers: GCC's -O2 keeps
// them on the stack otherwise, a load and a store around every fused multiply-add
// (gemv.cpp: 5.0 against 3.0 us for a 512 x 128 f32 product from L2).
#if defined(__clang__)
#define AG_UNROLL _Pragma("unroll")
#else
#define AG_UNROLL _Pragma("GCC unroll 16")
#endif

#define AG_ISA_CAT2(a, b) a##_##b
#define AG_ISA_CAT(a, b) AG_ISA_CAT2(a, b)

// Inside namespace ag::kernels: AG_ISA_KERNEL(name, fn) defines this level's slot of
// stub `name` (for a FloatDispatchStub, name_f32 or name_f64) as the function fn (which
// may hold commas: &Rows<float, Arch>::max), whose type must be the stub's Fn.
// Constant initialization, before any code runs.
#define AG_ISA_KERNEL(name, ...) \
  constinit decltype(isa::AG_ISA_CAT(name, AG_ISA)) isa::AG_ISA_CAT(name, AG_ISA) = __VA_ARGS__

namespace ag::kernels {
namespace {

// ---- helpers shared by the sources (one copy per source and level) ----------------

// WD elements of p as double lanes (WD = the double batch width of A).
template <class A, class T>
xsimd::batch<double, A> widen(const T* p) {
  using D = xsimd::batch<double, A>;
  constexpr std::size_t WD = D::size;
  if constexpr (std::is_same_v<T, double>)
    return D::load_unaligned(p);
  else if constexpr (WD == 2)
    return D(_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))));
  else if constexpr (WD == 4)
    return D(_mm256_cvtps_pd(_mm_loadu_ps(p)));
  else
    return D(_mm512_cvtps_pd(_mm256_loadu_ps(p)));
}

// xsimd::exp(x), defined for every f64 lane. xsimd's f64 exp converts its reduced
// argument to int64 lane by lane on SSE2 and AVX2 (they have no vector double -> int64
// conversion), an undefined cast (UBSan float-cast-overflow) for NaN, +-inf or |x| past
// ~6e18. Lanes outside [-800, 800] go through exp(0) and take exp's answer there by a
// select instead: 0 below (xsimd's exp is 0 from -708.4 on), inf above (from 709.8 on),
// NaN for NaN. f32 lanes convert with cvttps2dq, defined in C++ terms: left as they are.
template <class A, class T>
xsimd::batch<T, A> exp_guarded(const xsimd::batch<T, A>& x) {
  if constexpr (std::is_same_v<T, double>) {
    using B = xsimd::batch<double, A>;
    const auto in = (x >= B(-800.0)) & (x <= B(800.0));  // false for NaN
    const B e = xsimd::exp(xsimd::select(in, x, B(0.0)));
    const B out = xsimd::select(x < B(0.0), B(0.0), B(std::numeric_limits<double>::infinity()));
    return xsimd::select(in, e, xsimd::select(xsimd::isnan(x), x, out));
  } else {
    return xsimd::exp(x);
  }
}

// sum of f(x_j) over a row of n, in WD double accumulators, then the tail in order.
template <class A, class T, class F>
double widened_sum(const T* x, int64_t n, F f) {
  using D = xsimd::batch<double, A>;
  constexpr int64_t WD = static_cast<int64_t>(D::size);
  D acc(0.0);
  int64_t j = 0;
  for (; j + WD <= n; j += WD) acc += f(widen<A>(x + j));
  double s = xsimd::hadd(acc);
  for (; j < n; ++j) s += f(static_cast<double>(x[j]));
  return s;
}

}  // namespace
}  // namespace ag::kernels
