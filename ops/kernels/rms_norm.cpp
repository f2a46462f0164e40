// Fused RMS norm: one pass per row forward (sum of squares, then the scaled row) and
// one pass per row backward, instead of the composite's ~6 and ~12 elementwise ops.
// Rows are the normalized trailing dims; sums are accumulated in double.
#include <cmath>
#include <vector>

#include "kernels/rms_norm.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {

namespace {

// sum_j a[j] * b[j] (* w[j] when w is given) in double, with four running sums so that
// the additions do not wait on each other.
template <class T>
double dot(const T* a, const T* b, const T* w, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t j = 0;
  auto at = [&](int64_t k) { return static_cast<double>(a[k]) * static_cast<double>(w ? b[k] * w[k] : b[k]); };
  if (w) {
    for (; j + 4 <= n; j += 4) s0 += at(j), s1 += at(j + 1), s2 += at(j + 2), s3 += at(j + 3);
  } else {
    for (; j + 4 <= n; j += 4)
      s0 += static_cast<double>(a[j]) * b[j], s1 += static_cast<double>(a[j + 1]) * b[j + 1],
          s2 += static_cast<double>(a[j + 2]) * b[j + 2], s3 += static_cast<double>(a[j + 3]) * b[j + 3];
  }
  for (; j < n; ++j) s0 += at(j);
  return (s0 + s1) + (s2 + s3);
}

// Rows [i0, i1) of (rows, n) contiguous x: y = x * rstd * w, and each row's rstd.
template <class T>
void rms_norm_rows(const T* px, const T* w, T* py, T* pr, int64_t i0, int64_t i1, int64_t n, double eps) {
  for (int64_t i = i0; i < i1; ++i) {
    const T* row = px + i * n;
    const double ss = dot<T>(row, row, nullptr, n);
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    pr[i] = static_cast<T>(rstd);
    const T tr = static_cast<T>(rstd);
    T* out = py + i * n;
    if (w)
      for (int64_t j = 0; j < n; ++j) out[j] = (row[j] * tr) * w[j];
    else
      for (int64_t j = 0; j < n; ++j) out[j] = row[j] * tr;
  }
}

// dx for rows [i0, i1):  with gw = g * w and r = rstd,
//   dx = r * gw - x * r^3 * mean(gw * x)
// (y = x r w and dr/dx_j = -r^3 x_j / n).
template <class T>
void rms_norm_dx_rows(const T* px, const T* pg, const T* w, const T* pr, T* dx, int64_t i0, int64_t i1, int64_t n) {
  for (int64_t i = i0; i < i1; ++i) {
    const T *row = px + i * n, *gr = pg + i * n;
    const double s = dot(row, gr, w, n);  // sum of x * g * w
    const double r = pr[i];
    const T a = static_cast<T>(r), c = static_cast<T>(r * r * r * s / static_cast<double>(n));
    T* out = dx + i * n;
    if (w)
      for (int64_t j = 0; j < n; ++j) out[j] = a * (gr[j] * w[j]) - row[j] * c;
    else
      for (int64_t j = 0; j < n; ++j) out[j] = a * gr[j] - row[j] * c;
  }
}

}  // namespace

RmsNormForward rms_norm_forward(const Tensor& x_in, const Tensor& weight, int64_t n, double eps) {
  if (is_half(x_in)) {  // rstd stays f32, y rounded once
    RmsNormForward r = rms_norm_forward(as_f32(x_in), as_f32(weight), n, eps);
    r.y = to_half(r.y, x_in.dtype());
    return r;
  }
  Tensor x = contiguous(x_in);
  Tensor wc = weight.defined() ? contiguous(weight) : Tensor{};
  const int64_t rows = n ? x.numel() / n : 0;
  RmsNormForward r{empty(x.shape(), x.dtype()), empty(Shape{rows}, x.dtype())};
  dispatch_float(x.dtype(), "rms_norm", [&]<class T>() {
    const T* w = wc.defined() ? wc.data<T>() : nullptr;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
    detail::parallel_for(rows, grain, [&](int64_t i0, int64_t i1) {
      rms_norm_rows(x.data<T>(), w, r.y.data<T>(), r.rstd.data<T>(), i0, i1, n, eps);
    });
  });
  return r;
}

// dx per row (parallel over rows); dw = sum over rows of g * x * rstd (one serial pass,
// accumulated in double so the result does not depend on the thread count).
RmsNormGrads rms_norm_backward(const Tensor& x_in, const Tensor& rstd, const Tensor& weight, const Tensor& g_in,
                               const Shape& normalized_shape, bool need_x, bool need_w) {
  if (is_half(x_in)) {
    RmsNormGrads r =
        rms_norm_backward(as_f32(x_in), as_f32(rstd), as_f32(weight), as_f32(g_in), normalized_shape, need_x, need_w);
    return {to_half(r.dx, x_in.dtype()), to_half(r.dw, weight.defined() ? weight.dtype() : x_in.dtype())};
  }
  Tensor x = contiguous(x_in), g = contiguous(g_in), rs = contiguous(rstd);
  Tensor wc = weight.defined() ? contiguous(weight) : Tensor{};
  const int64_t n = numel(normalized_shape);
  const int64_t rows = n ? x.numel() / n : 0;
  RmsNormGrads r;
  if (need_x) r.dx = empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "rms_norm_backward", [&]<class T>() {
    const T *px = x.data<T>(), *pg = g.data<T>(), *pr = rs.data<T>();
    const T* w = wc.defined() ? wc.data<T>() : nullptr;
    if (need_x) {
      T* dx = r.dx.data<T>();
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
      detail::parallel_for(rows, grain,
                           [&](int64_t i0, int64_t i1) { rms_norm_dx_rows(px, pg, w, pr, dx, i0, i1, n); });
    }
    if (need_w) {
      std::vector<double> dw(static_cast<std::size_t>(n), 0.0);
      for (int64_t i = 0; i < rows; ++i) {
        const T *row = px + i * n, *gr = pg + i * n;
        const T ri = pr[i];
        for (int64_t j = 0; j < n; ++j) dw[static_cast<std::size_t>(j)] += static_cast<double>(gr[j] * (row[j] * ri));
      }
      r.dw = empty(normalized_shape, x.dtype());
      T* p = r.dw.data<T>();
      for (int64_t j = 0; j < n; ++j) p[j] = static_cast<T>(dw[static_cast<std::size_t>(j)]);
    }
  });
  return r;
}

}  // namespace ag::kernels
