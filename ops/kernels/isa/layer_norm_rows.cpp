// The layer norm rows of layer_norm_rows.h for one level (isa.h: compiled once per
// level, Arch its xsimd arch).
#include "isa.h"

#include <cmath>
#include <cstdint>

#include "kernels/layer_norm_rows.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct LayerNorm {
  using V = xsimd::batch<T, A>;
  using D = xsimd::batch<double, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size), WD = static_cast<int64_t>(D::size);

  static void forward(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n, double eps) {
    for (int64_t i = 0; i < rows; ++i) {
      const T* row = x + i * n;
      const double mu = widened_sum<A>(row, n, [](auto v) { return v; }) / static_cast<double>(n);
      const double var = widened_sum<A>(row, n, [mu](auto v) { return (v - mu) * (v - mu); }) / static_cast<double>(n);
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

  static void backward(const T* x, const T* g, const T* w, const T* mean, const T* rstd, T* dx, double* dw, double* db,
                       int64_t rows, int64_t n) {
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
          sgw += widen<A>(gw_buf + k), sgwx += widen<A>(gwx_buf + k);
          if (dw) (D::load_unaligned(dw + j + k) + widen<A>(gx_buf + k)).store_unaligned(dw + j + k);
          if (db) (D::load_unaligned(db + j + k) + widen<A>(gr + j + k)).store_unaligned(db + j + k);
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
};

}  // namespace

AG_ISA_KERNEL(layer_norm_rows_f32, &LayerNorm<float, Arch>::forward);
AG_ISA_KERNEL(layer_norm_rows_f64, &LayerNorm<double, Arch>::forward);
AG_ISA_KERNEL(layer_norm_backward_rows_f32, &LayerNorm<float, Arch>::backward);
AG_ISA_KERNEL(layer_norm_backward_rows_f64, &LayerNorm<double, Arch>::backward);

}  // namespace ag::kernels
