// softmax / log_softmax along one dim, forward and backward, one row at a time after
// moving `dim` last; exp runs in the run-time level's vector rows (row_exp_sub,
// attention_rows.h), tails too. Rows are stabilized by their max; a row that is all
// -inf (every key masked) gives softmax 0 and log_softmax -inf, and a zero gradient in
// both.
#include <cmath>
#include <limits>

#include <algorithm>

#include "kernels/kernels.h"
#include "kernels/attention_rows.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

// x with `dim` moved last, as a contiguous tensor (a copy only when needed).
Tensor dim_last(const Tensor& x, int64_t dim) {
  Shape s;
  Strides st;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim) s.push_back(x.shape()[d]), st.push_back(x.strides()[d]);
  s.push_back(x.shape()[dim]);
  st.push_back(x.strides()[dim]);
  return contiguous(Tensor(x.storage(), s, st, x.offset(), x.dtype()));
}

// Inverse of dim_last for a contiguous result: a view with x's shape.
Tensor dim_back(const Tensor& y, const Shape& shape, int64_t dim) {
  Strides cs = y.strides();
  Strides st = Dims::filled(shape.size(), 0);
  for (int64_t d = 0, j = 0; d < shape.size(); ++d) st[d] = d == dim ? cs[cs.size() - 1] : cs[j++];
  return Tensor(y.storage(), shape, st, y.offset(), y.dtype());
}

// Rows [r0, r1) of (rows, n) contiguous x into y.
template <class T>
void softmax_rows(const T* px, T* py, int64_t r0, int64_t r1, int64_t n, bool log) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const auto exp_sub = row_exp_sub.of<T>().get();
  for (int64_t r = r0; r < r1; ++r) {
    const T* in = px + r * n;
    T* out = py + r * n;
    T m = ninf;
    for (int64_t i = 0; i < n; ++i) m = in[i] > m || std::isnan(in[i]) ? in[i] : m;
    if (m == ninf) {
      for (int64_t i = 0; i < n; ++i) out[i] = log ? ninf : T(0);
      continue;
    }
    std::copy(in, in + n, out);
    exp_sub(out, n, m);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += out[i];
    if (log) {
      T ls = static_cast<T>(std::log(s));
      for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - m) - ls;
    } else {
      T inv = static_cast<T>(1.0 / s);
      for (int64_t i = 0; i < n; ++i) out[i] *= inv;
    }
  }
}

// Rows [r0, r1) of the gradient, from y = softmax(x) (or log_softmax) and g = dL/dy.
template <class T>
void softmax_backward_rows(const T* py, const T* pg, T* px, int64_t r0, int64_t r1, int64_t n, bool log) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const auto exp_sub = row_exp_sub.of<T>().get();
  for (int64_t r = r0; r < r1; ++r) {
    const T* yr = py + r * n;
    const T* gr = pg + r * n;
    T* xr = px + r * n;
    double dot = 0;
    bool all_masked = true;
    for (int64_t i = 0; i < n; ++i) {
      all_masked = all_masked && (log ? yr[i] == ninf : yr[i] == T(0));
      dot += log ? static_cast<double>(gr[i]) : static_cast<double>(gr[i]) * yr[i];
    }
    if (log && all_masked) {
      for (int64_t i = 0; i < n; ++i) xr[i] = 0;
      continue;
    }
    const T d = static_cast<T>(dot);
    if (log) {  // exp(y) = softmax, through the same vector exp as the forward
      std::copy(yr, yr + n, xr);
      exp_sub(xr, n, T(0));
      for (int64_t i = 0; i < n; ++i) xr[i] = gr[i] - xr[i] * d;
    } else {
      for (int64_t i = 0; i < n; ++i) xr[i] = yr[i] * (gr[i] - d);
    }
  }
}

// Rows per thread chunk: about kParallelGrain elements.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)); }

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, bool log) {
  if (is_half(x)) return to_half(softmax(as_f32(x), dim, log), x.dtype());
  if (x.dim() == 0) dim = 0;
  Tensor xc = x.dim() == 0 ? contiguous(x) : dim_last(x, dim);
  Tensor y = empty(xc.shape(), xc.dtype());
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[dim];
  const int64_t rows = n ? xc.numel() / n : 0;
  dispatch_float(x.dtype(), "softmax", [&]<class T>() {
    const T* px = xc.data<T>();
    T* py = y.data<T>();
    detail::parallel_for(rows, row_grain(n), [&](int64_t r0, int64_t r1) { softmax_rows(px, py, r0, r1, n, log); });
  });
  return x.dim() == 0 ? y : dim_back(y, x.shape(), dim);
}

Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t dim, bool log) {
  if (is_half(y) || is_half(g)) return to_half(softmax_backward(as_f32(y), as_f32(g), dim, log), g.dtype());
  if (y.dim() == 0) {  // a single element: softmax is constant
    Tensor z = empty(Shape{}, y.dtype());
    fill(z, 0);
    return z;
  }
  Tensor yc = dim_last(y, dim), gc = dim_last(g, dim);
  Tensor gx = empty(yc.shape(), yc.dtype());
  const int64_t n = y.shape()[dim];
  const int64_t rows = n ? yc.numel() / n : 0;
  dispatch_float(y.dtype(), "softmax_backward", [&]<class T>() {
    const T* py = yc.data<T>();
    const T* pg = gc.data<T>();
    T* px = gx.data<T>();
    detail::parallel_for(rows, row_grain(n),
                         [&](int64_t r0, int64_t r1) { softmax_backward_rows(py, pg, px, r0, r1, n, log); });
  });
  return dim_back(gx, y.shape(), dim);
}

}  // namespace ag::kernels
