#include "kernels/shaping.h"

#include <algorithm>

#include "kernels/kernels.h"
#include "kernels/half.h"

namespace ag::kernels {

Tensor triangle(const Tensor& x, int64_t diagonal, bool lower) {
  if (is_half(x)) return to_half(triangle(as_f32(x), diagonal, lower), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  copy(x, out);
  const int64_t R = x.shape()[x.dim() - 2], C = x.shape()[x.dim() - 1];
  if (R * C == 0) return out;
  const int64_t batches = out.numel() / (R * C);
  const int64_t k = std::clamp<int64_t>(diagonal, -R - 1, C + 1);  // no overflow below
  dispatch_all(out.dtype(), "triangle", [&]<class T>() {
    T* p = out.data<T>();
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < R; ++i) {
        T* row = p + (b * R + i) * C;
        // Zeroed columns: j > i + diagonal (lower) or j < i + diagonal (upper).
        int64_t edge = std::clamp<int64_t>(i + k + (lower ? 1 : 0), 0, C);
        if (lower)
          std::fill(row + edge, row + C, T(0));
        else
          std::fill(row, row + edge, T(0));
      }
    }
  });
  return out;
}

}  // namespace ag::kernels
