// The Adam / AdamW update and sum_sq of adam.h for one level (isa.h: compiled once per
// level, Arch its xsimd arch).
#include "isa.h"

#include <algorithm>
#include <cstdint>

#include "kernels/adam.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct Adam {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  template <class X>
  static void one(X& w, X g, X& m, X& v, X* vmax, const AdamStep<T>& h) {
    if (h.decoupled)
      w = w * X(h.decay);
    else if (h.wd != T(0))
      g = g + X(h.wd) * w;
    m = m * X(h.b1) + X(h.c1) * g;
    v = v * X(h.b2) + X(h.c2) * g * g;
    X vv = v;
    if (vmax)  // torch.maximum: NaN in either propagates (maxps alone would drop one)
      vv = *vmax = xsimd::select(xsimd::isnan(*vmax) || xsimd::isnan(v), *vmax + v, xsimd::max(*vmax, v));
    w = w - X(h.ss) * (m / (xsimd::sqrt(vv) / X(h.bc) + X(h.eps)));
  }

  static void update(T* w, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamStep<T>& h) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      V wv = V::load_unaligned(w + i), mv = V::load_unaligned(m + i), vv = V::load_unaligned(v + i), xv;
      if (vmax) xv = V::load_unaligned(vmax + i);
      one(wv, V::load_unaligned(g + i), mv, vv, vmax ? &xv : nullptr, h);
      wv.store_unaligned(w + i), mv.store_unaligned(m + i), vv.store_unaligned(v + i);
      if (vmax) xv.store_unaligned(vmax + i);
    }
    // The tail through one padded vector: the same operations as the body.
    if (i < n) {
      alignas(64) T bw[W] = {}, bg[W] = {}, bm[W] = {}, bv[W] = {}, bx[W] = {};
      const int64_t r = n - i;
      std::copy(w + i, w + n, bw), std::copy(g + i, g + n, bg), std::copy(m + i, m + n, bm),
          std::copy(v + i, v + n, bv);
      if (vmax) std::copy(vmax + i, vmax + n, bx);
      V wv = V::load_aligned(bw), mv = V::load_aligned(bm), vv = V::load_aligned(bv), xv = V::load_aligned(bx);
      one(wv, V::load_aligned(bg), mv, vv, vmax ? &xv : nullptr, h);
      wv.store_aligned(bw), mv.store_aligned(bm), vv.store_aligned(bv), xv.store_aligned(bx);
      std::copy(bw, bw + r, w + i), std::copy(bm, bm + r, m + i), std::copy(bv, bv + r, v + i);
      if (vmax) std::copy(bx, bx + r, vmax + i);
    }
  }

  static double sum_sq(const T* x, int64_t n) {
    return widened_sum<A>(x, n, [](auto a) { return a * a; });
  }
};

}  // namespace

AG_ISA_KERNEL(adam_update_f32, &Adam<float, Arch>::update);
AG_ISA_KERNEL(adam_update_f64, &Adam<double, Arch>::update);
AG_ISA_KERNEL(sum_sq_f32, &Adam<float, Arch>::sum_sq);
AG_ISA_KERNEL(sum_sq_f64, &Adam<double, Arch>::sum_sq);

}  // namespace ag::kernels
