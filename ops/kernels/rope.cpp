// Rotary embedding in one pass over x (the composite takes five: two products, a
// negation, a concatenation and a sum), rows of d in parallel.
#include "kernels/rope.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {

Tensor rotary(const Tensor& x_in, const Tensor& cos, const Tensor& sin) {
  if (is_half(x_in) || is_half(cos)) return to_half(rotary(as_f32(x_in), as_f32(cos), as_f32(sin)), x_in.dtype());
  Tensor x = contiguous(x_in);
  Tensor out = empty(x.shape(), x.dtype());
  const int64_t d = x.shape()[x.dim() - 1], h = d / 2;
  const int64_t rows = d ? x.numel() / d : 0, table_rows = d ? cos.numel() / d : 0;
  if (rows == 0 || table_rows == 0) return out;
  dispatch_float(x.dtype(), "rotary_embedding", [&]<class T>() {
    const T *px = x.data<T>(), *pc = cos.data<T>(), *ps = sin.data<T>();
    T* po = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(d, 1));
    detail::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = px + r * d;
        const T *c = pc + (r % table_rows) * d, *s = ps + (r % table_rows) * d;
        T* o = po + r * d;
        for (int64_t j = 0; j < h; ++j) o[j] = xr[j] * c[j] - xr[j + h] * s[j];
        for (int64_t j = h; j < d; ++j) o[j] = xr[j] * c[j] + xr[j - h] * s[j];
      }
    });
  });
  return out;
}

}  // namespace ag::kernels
