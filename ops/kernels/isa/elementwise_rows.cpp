// Arithmetic and where rows of elementwise_rows.h for one level (isa.h: compiled once
// per level, Arch its xsimd arch).
#include "isa.h"

#include <cstdint>

#include "kernels/elementwise_rows.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct Elementwise {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  template <int Op, class X>
  static X apply(const X& x, const X& y) {
    if constexpr (Op == 0)
      return x + y;
    else if constexpr (Op == 1)
      return x - y;
    else if constexpr (Op == 2)
      return x * y;
    else
      return x / y;
  }

  // Layout 0: both rows; 1: b is one value; 2: a is one value.
  template <int Op, int L>
  static void arith(T* out, const T* a, const T* b, int64_t n) {
    if (n <= 0) return;  // a single value is read up front
    int64_t i = 0;
    if constexpr (L == 0) {
      for (; i + W <= n; i += W) apply<Op>(V::load_unaligned(a + i), V::load_unaligned(b + i)).store_unaligned(out + i);
    } else if constexpr (L == 1) {
      const V y(*b);
      for (; i + W <= n; i += W) apply<Op>(V::load_unaligned(a + i), y).store_unaligned(out + i);
    } else {
      const V x(*a);
      for (; i + W <= n; i += W) apply<Op>(x, V::load_unaligned(b + i)).store_unaligned(out + i);
    }
    for (; i < n; ++i) out[i] = apply<Op>(L == 2 ? *a : a[i], L == 1 ? *b : b[i]);
  }

  template <int Op>
  static void arith_layout(int layout, T* out, const T* a, const T* b, int64_t n) {
    switch (layout) {
      case 0: return arith<Op, 0>(out, a, b, n);
      case 1: return arith<Op, 1>(out, a, b, n);
      default: return arith<Op, 2>(out, a, b, n);
    }
  }

  static void arith_row(int op, int layout, T* out, const T* a, const T* b, int64_t n) {
    switch (op) {
      case 0: return arith_layout<0>(layout, out, a, b, n);
      case 1: return arith_layout<1>(layout, out, a, b, n);
      case 2: return arith_layout<2>(layout, out, a, b, n);
      default: return arith_layout<3>(layout, out, a, b, n);
    }
  }

  template <bool RA, bool RB>
  static void where(T* out, const bool* c, const T* a, const T* b, int64_t n) {
    if (n <= 0) return;  // a single value is read up front
    int64_t i = 0;
    const V va(*a), vb(*b);
    for (; i + W <= n; i += W) {
      const auto m = xsimd::batch_bool<T, A>::load_unaligned(c + i);
      xsimd::select(m, RA ? V::load_unaligned(a + i) : va, RB ? V::load_unaligned(b + i) : vb).store_unaligned(out + i);
    }
    for (; i < n; ++i) out[i] = c[i] ? a[RA ? i : 0] : b[RB ? i : 0];
  }

  static void where_row(T* out, const bool* c, const T* a, const T* b, int64_t n, bool a_row, bool b_row) {
    if (a_row) return b_row ? where<true, true>(out, c, a, b, n) : where<true, false>(out, c, a, b, n);
    return b_row ? where<false, true>(out, c, a, b, n) : where<false, false>(out, c, a, b, n);
  }
};

}  // namespace

AG_ISA_KERNEL(arith_row_f32, &Elementwise<float, Arch>::arith_row);
AG_ISA_KERNEL(arith_row_f64, &Elementwise<double, Arch>::arith_row);
AG_ISA_KERNEL(where_row_f32, &Elementwise<float, Arch>::where_row);
AG_ISA_KERNEL(where_row_f64, &Elementwise<double, Arch>::where_row);

}  // namespace ag::kernels
