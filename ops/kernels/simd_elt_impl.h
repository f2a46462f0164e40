#pragma once
// Elementwise row operations (EltOps, simd.h) for one xsimd architecture A. Included
// only by simd.cpp (SSE2), simd_avx2.cpp and simd_avx512.cpp, each compiled for its
// instruction set; internal linkage throughout, as simd_rows_impl.h.
#include <immintrin.h>
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "kernels/simd.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct Elt {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  template <int Op, class X>
  static X apply(const X& x, const X& y) {
    if constexpr (Op == 0) return x + y;
    else if constexpr (Op == 1) return x - y;
    else if constexpr (Op == 2) return x * y;
    else return x / y;
  }

  // Layout 0: both rows; 1: b is one value; 2: a is one value.
  template <int Op, int L>
  static void arith(T* out, const T* a, const T* b, int64_t n) {
    if (n <= 0) return;  // a single value is read up front
    int64_t i = 0;
    if constexpr (L == 0) {
      for (; i + W <= n; i += W)
        apply<Op>(V::load_unaligned(a + i), V::load_unaligned(b + i)).store_unaligned(out + i);
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
  static void set_op(EltOps<T>& e) {
    e.arith[Op][0] = &arith<Op, 0>;
    e.arith[Op][1] = &arith<Op, 1>;
    e.arith[Op][2] = &arith<Op, 2>;
  }

  // ---- GELU, float rows through double lanes ----------------------------------------
  using D = xsimd::batch<double, A>;
  static constexpr int64_t WD = static_cast<int64_t>(D::size);
  static constexpr int64_t kChunk = 256;  // doubles per staging buffer (a multiple of WD)
  static constexpr double kAlpha = std::numbers::sqrt2 / 2;
  static constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi * kAlpha;  // 1 / sqrt(2 pi)
  // PyTorch's tanh-form constants (as ops/elementwise.cpp rounds them).
  static constexpr double kK = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, kC = 0.044715;

  // 1 + erf(x / sqrt 2) as erfc(-x / sqrt 2): no cancellation for negative x. The
  // argument is clamped to +-30 (erfc is 0 or 2 there in double) because xsimd's erfc
  // is not defined for huge arguments; NaN x stays NaN through the product with x.
  static D one_plus_erf(const D& x) {
    return xsimd::erfc(xsimd::min(xsimd::max(-x * D(kAlpha), D(-30.0)), D(30.0)));
  }

  static D tanh_u(const D& x) {
    return xsimd::tanh(xsimd::min(xsimd::max((x + x * x * x * D(kC)) * D(kK), D(-30.0)), D(30.0)));
  }

  // d gelu / dx (ops/elementwise.cpp derives both).
  template <bool Tanh>
  static D dgelu_v(const D& x) {
    if constexpr (Tanh) {
      const D t = tanh_u(x), x_sq = x * x;
      const D right = x * D(0.5) * (D(1.0) - t * t) * ((D(1.0) + x_sq * D(3.0 * kC)) * D(kK));
      return (D(1.0) + t) * D(0.5) + right;
    } else {
      return one_plus_erf(x) * D(0.5) + x * (xsimd::exp(x * x * D(-0.5)) * D(kInvSqrt2Pi));
    }
  }

  // float GELU with PyTorch's float arithmetic (its f32 kernel computes in float, and
  // tests/ops/pointwise_specials.h holds its answers: near erf = -1 the cancellation in
  // 1 + erf is part of the answer), erf / tanh computed in double lanes and rounded once
  // (libm's erff / tanhf). Chunks of kChunk, the tail zero-padded so every element takes
  // the same vector path. The loops in float are plain C++ that the compiler vectorizes
  // at this file's width (built with -ffp-contract=off: no fused multiply-adds).
  static void gelu(T* out, const T* x, int64_t n, bool tanh) {
    alignas(64) double b[kChunk];
    const float alpha = static_cast<float>(kAlpha), k = static_cast<float>(kK), c = static_cast<float>(kC);
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = std::min(kChunk, n - s), padded = (m + WD - 1) / WD * WD;
      const T* xs = x + s;
      if (tanh) {
        for (int64_t i = 0; i < m; ++i) {
          const float v = xs[i], v3 = static_cast<float>(static_cast<double>(v) * v * v);  // pow(v, 3)
          b[i] = static_cast<double>((v + v3 * c) * k);
        }
      } else {
        for (int64_t i = 0; i < m; ++i) b[i] = static_cast<double>(xs[i] * alpha);
      }
      for (int64_t i = m; i < padded; ++i) b[i] = 0.0;
      for (int64_t i = 0; i < padded; i += WD) {
        const D a = xsimd::min(xsimd::max(D::load_aligned(b + i), D(-30.0)), D(30.0));  // erf, tanh = +-1 there
        (tanh ? xsimd::tanh(a) : xsimd::erf(a)).store_aligned(b + i);
      }
      for (int64_t i = 0; i < m; ++i) out[s + i] = (xs[i] * 0.5f) * (1.0f + static_cast<float>(b[i]));
    }
  }

  // g * gelu'(x) in double lanes, rounded once: within an ulp of the float64 gradient
  // (PyTorch's f32 backward is further off; test_parity_semantics accepts either).
  static void gelu_backward(T* out, const T* g, const T* x, int64_t n, bool tanh) {
    alignas(64) double bx[kChunk], bg[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = std::min(kChunk, n - s), padded = (m + WD - 1) / WD * WD;
      for (int64_t i = 0; i < m; ++i) bx[i] = x[s + i], bg[i] = g[s + i];
      for (int64_t i = m; i < padded; ++i) bx[i] = bg[i] = 0.0;
      for (int64_t i = 0; i < padded; i += WD) {
        const D v = D::load_aligned(bx + i);
        ((tanh ? dgelu_v<true>(v) : dgelu_v<false>(v)) * D::load_aligned(bg + i)).store_aligned(bx + i);
      }
      for (int64_t i = 0; i < m; ++i) out[s + i] = static_cast<T>(bx[i]);
    }
  }

  // ---- layer norm -------------------------------------------------------------------
  // WD elements of p as double lanes.
  static D widen(const T* p) {
    if constexpr (std::is_same_v<T, double>) return D::load_unaligned(p);
    else if constexpr (WD == 2) return D(_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))));
    else if constexpr (WD == 4) return D(_mm256_cvtps_pd(_mm_loadu_ps(p)));
    else return D(_mm512_cvtps_pd(_mm256_loadu_ps(p)));
  }

  // sum of f(x_j) over a row, WD double accumulators then the tail.
  template <class F>
  static double row_sum(const T* x, int64_t n, F f) {
    D acc(0.0);
    int64_t j = 0;
    for (; j + WD <= n; j += WD) acc += f(widen(x + j));
    double s = xsimd::hadd(acc);
    for (; j < n; ++j) s += f(static_cast<double>(x[j]));
    return s;
  }

  static void layer_norm(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n,
                         double eps) {
    for (int64_t i = 0; i < rows; ++i) {
      const T* row = x + i * n;
      const double mu = row_sum(row, n, [](auto v) { return v; }) / static_cast<double>(n);
      const double var = row_sum(row, n, [mu](auto v) { return (v - mu) * (v - mu); }) / static_cast<double>(n);
      const double rs = 1.0 / std::sqrt(var + eps);
      mean[i] = static_cast<T>(mu), rstd[i] = static_cast<T>(rs);
      const T tm = static_cast<T>(mu), tr = static_cast<T>(rs);
      const V vm(tm), vr(tr);
      T* out = y + i * n;
      int64_t j = 0;
      for (; j + W <= n; j += W) {
        V h = (V::load_unaligned(row + j) - vm) * vr;
        if (w) h = h * V::load_unaligned(w + j);
        if (b) h = h + V::load_unaligned(b + j);
        h.store_unaligned(out + j);
      }
      for (; j < n; ++j) {
        T h = (row[j] - tm) * tr;
        if (w) h = h * w[j];
        if (b) h = h + b[j];
        out[j] = h;
      }
    }
  }

  static void layer_norm_backward(const T* x, const T* g, const T* w, const T* mean, const T* rstd, T* dx,
                                  double* dw, double* db, int64_t rows, int64_t n) {
    for (int64_t i = 0; i < rows; ++i) {
      const T *row = x + i * n, *gr = g + i * n;
      const T mu = mean[i], rs = rstd[i];
      const V vm(mu), vr(rs);
      D sgw(0.0), sgwx(0.0);
      double sum_gw = 0, sum_gwx = 0;
      int64_t j = 0;
      // g w, xhat, g xhat and g w xhat as float products (as the scalar form), summed in double
      alignas(64) T gw_buf[W], gwx_buf[W], gx_buf[W];
      for (; j + W <= n; j += W) {
        const V gv = V::load_unaligned(gr + j), h = (V::load_unaligned(row + j) - vm) * vr;
        const V gw = w ? gv * V::load_unaligned(w + j) : gv;
        gw.store_aligned(gw_buf), (gw * h).store_aligned(gwx_buf), (gv * h).store_aligned(gx_buf);
        for (int64_t k = 0; k < W; k += WD) {
          sgw += widen(gw_buf + k), sgwx += widen(gwx_buf + k);
          if (dw) (D::load_unaligned(dw + j + k) + widen(gx_buf + k)).store_unaligned(dw + j + k);
          if (db) (D::load_unaligned(db + j + k) + widen(gr + j + k)).store_unaligned(db + j + k);
        }
      }
      for (; j < n; ++j) {
        const T h = (row[j] - mu) * rs, gw = w ? gr[j] * w[j] : gr[j];
        sum_gw += gw, sum_gwx += gw * h;
        if (dw) dw[j] += gr[j] * h;
        if (db) db[j] += gr[j];
      }
      if (!dx) continue;
      sum_gw += xsimd::hadd(sgw), sum_gwx += xsimd::hadd(sgwx);
      const T a = static_cast<T>(sum_gw / static_cast<double>(n)), c = static_cast<T>(sum_gwx / static_cast<double>(n));
      const V va(a), vc(c);
      T* out = dx + i * n;
      for (j = 0; j + W <= n; j += W) {
        const V gv = V::load_unaligned(gr + j), h = (V::load_unaligned(row + j) - vm) * vr;
        const V gw = w ? gv * V::load_unaligned(w + j) : gv;
        (vr * (gw - va - h * vc)).store_unaligned(out + j);
      }
      for (; j < n; ++j) {
        const T h = (row[j] - mu) * rs, gw = w ? gr[j] * w[j] : gr[j];
        out[j] = rs * (gw - a - h * c);
      }
    }
  }

  // ---- optimizer rows -----------------------------------------------------------------
  template <class X>
  static void adam_one(X& w, X g, X& m, X& v, X* vmax, const typename EltOps<T>::AdamStep& h) {
    if (h.decoupled) w = w * X(h.decay);
    else if (h.wd != T(0)) g = g + X(h.wd) * w;
    m = m * X(h.b1) + X(h.c1) * g;
    v = v * X(h.b2) + X(h.c2) * g * g;
    X vv = v;
    if (vmax)  // torch.maximum: NaN in either propagates (maxps alone would drop one)
      vv = *vmax = xsimd::select(xsimd::isnan(*vmax) || xsimd::isnan(v), *vmax + v, xsimd::max(*vmax, v));
    w = w - X(h.ss) * (m / (xsimd::sqrt(vv) / X(h.bc) + X(h.eps)));
  }

  static void adam(T* w, const T* g, T* m, T* v, T* vmax, int64_t n, const typename EltOps<T>::AdamStep& h) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      V wv = V::load_unaligned(w + i), mv = V::load_unaligned(m + i), vv = V::load_unaligned(v + i), xv;
      if (vmax) xv = V::load_unaligned(vmax + i);
      adam_one(wv, V::load_unaligned(g + i), mv, vv, vmax ? &xv : nullptr, h);
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
      adam_one(wv, V::load_aligned(bg), mv, vv, vmax ? &xv : nullptr, h);
      wv.store_aligned(bw), mv.store_aligned(bm), vv.store_aligned(bv), xv.store_aligned(bx);
      std::copy(bw, bw + r, w + i), std::copy(bm, bm + r, m + i), std::copy(bv, bv + r, v + i);
      if (vmax) std::copy(bx, bx + r, vmax + i);
    }
  }

  static double sum_sq(const T* x, int64_t n) {
    return row_sum(x, n, [](auto a) { return a * a; });
  }

  static double sum(const T* x, int64_t n) {
    return row_sum(x, n, [](auto a) { return a; });
  }

  static void add_to(double* acc, const T* x, int64_t n) {
    int64_t j = 0;
    for (; j + WD <= n; j += WD) (D::load_unaligned(acc + j) + widen(x + j)).store_unaligned(acc + j);
    for (; j < n; ++j) acc[j] += static_cast<double>(x[j]);
  }

  template <int RA, int RB>
  static void where_row(T* out, const bool* c, const T* a, const T* b, int64_t n) {
    if (n <= 0) return;  // a single value is read up front
    int64_t i = 0;
    const V va(*a), vb(*b);
    for (; i + W <= n; i += W) {
      const auto m = xsimd::batch_bool<T, A>::load_unaligned(c + i);
      xsimd::select(m, RA ? V::load_unaligned(a + i) : va, RB ? V::load_unaligned(b + i) : vb).store_unaligned(out + i);
    }
    for (; i < n; ++i) out[i] = c[i] ? a[RA ? i : 0] : b[RB ? i : 0];
  }

  static EltOps<T> ops() {
    EltOps<T> e{};
    set_op<0>(e), set_op<1>(e), set_op<2>(e), set_op<3>(e);
    if constexpr (std::is_same_v<T, float>) e.gelu = &gelu, e.gelu_backward = &gelu_backward;
    e.layer_norm = &layer_norm, e.layer_norm_backward = &layer_norm_backward;
    e.adam = &adam, e.sum_sq = &sum_sq, e.sum = &sum, e.add_to = &add_to;
    e.where_row[0][0] = &where_row<0, 0>, e.where_row[0][1] = &where_row<0, 1>;
    e.where_row[1][0] = &where_row<1, 0>, e.where_row[1][1] = &where_row<1, 1>;
    return e;
  }
};

}  // namespace
}  // namespace ag::kernels
