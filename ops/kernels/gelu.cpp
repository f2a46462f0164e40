// GELU forward and backward in one pass each. float runs the dispatched rows
// (gelu_rows.h: computed in double lanes, rounded once); double runs the scalar libm
// formulas of PyTorch's float64 kernel, in the order ops/elementwise.cpp derives them:
//   none:  y = x/2 (1 + erf(x / sqrt 2)),      y' = cdf + x pdf
//   tanh:  y = x/2 (1 + tanh(k (x + c x^3))),  y' = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2)
#include <cmath>
#include <numbers>

#include "kernels/kernels.h"
#include "kernels/gelu_rows.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

constexpr double kAlpha = std::numbers::sqrt2 / 2;
constexpr double kK = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, kC = 0.044715;

double gelu_scalar(double x, bool tanh) {
  if (tanh) return x * 0.5 * (1.0 + std::tanh((x + std::pow(x, 3.0) * kC) * kK));
  return x * 0.5 * (1.0 + std::erf(x * kAlpha));
}

double dgelu_scalar(double x, bool tanh) {
  if (tanh) {
    const double x_sq = x * x, t = std::tanh((x + x_sq * x * kC) * kK);
    return (1.0 + t) * 0.5 + x * 0.5 * (1.0 - t * t) * ((1.0 + x_sq * (3.0 * kC)) * kK);
  }
  const double cdf = (1.0 + std::erf(x * kAlpha)) * 0.5;
  return cdf + x * (std::exp(x * x * -0.5) * (2.0 * std::numbers::inv_sqrtpi * kAlpha * 0.5));
}

// out (contiguous, x's shape) from contiguous x and g (g may be undefined), in chunks on
// the thread pool: every element goes through the same row function whatever the split.
template <class T, class Row>
Tensor run(const Tensor& x, const Tensor& g, const char* name, Row row) {
  const Tensor xc = contiguous(x), gc = g.defined() ? contiguous(g) : Tensor{};
  Tensor out = empty(x.shape(), x.dtype(), name);
  const T* px = xc.data<T>();
  const T* pg = gc.defined() ? gc.data<T>() : nullptr;
  T* po = out.data<T>();
  const Shape flat{out.numel()};
  const Strides one{1};
  for_each_row_parallel<1>(flat, {one}, [&](const auto& off, int64_t n, const auto&) {
    row(po + off[0], pg ? pg + off[0] : nullptr, px + off[0], n);
  });
  return out;
}

}  // namespace

// bf16 / f16: the f32 rows on L1-sized chunks (half.h's in_f32_chunks), rounded once.
Tensor gelu(const Tensor& x, bool tanh) {
  return dispatch_float_and_half(x.dtype(), "gelu", [&]<class T>() {
    return run<T>(x, Tensor{}, "gelu", [&](T* o, const T*, const T* a, int64_t n) {
      if constexpr (std::is_same_v<T, float>)
        gelu_row(o, a, n, tanh);
      else if constexpr (std::is_same_v<T, double>)
        for (int64_t i = 0; i < n; ++i) o[i] = gelu_scalar(a[i], tanh);
      else
        in_f32_chunks(o, static_cast<const T*>(nullptr), a, n,
                      [&](float* fo, const float*, const float* fa, int64_t m) { gelu_row(fo, fa, m, tanh); });
    });
  });
}

Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) {
  AG_CHECK(g.shape() == x.shape() && g.dtype() == x.dtype(), ShapeError, "gelu_backward: grad_output ", g.shape(), " ",
           g.dtype(), " must match input ", x.shape(), " ", x.dtype());
  return dispatch_float_and_half(x.dtype(), "gelu_backward", [&]<class T>() {
    return run<T>(x, g, "gelu_backward", [&](T* o, const T* pg, const T* a, int64_t n) {
      if constexpr (std::is_same_v<T, float>)
        gelu_backward_row(o, pg, a, n, tanh);
      else if constexpr (std::is_same_v<T, double>)
        for (int64_t i = 0; i < n; ++i) o[i] = pg[i] * dgelu_scalar(a[i], tanh);
      else
        in_f32_chunks(o, pg, a, n, [&](float* fo, const float* fg, const float* fa, int64_t m) {
          gelu_backward_row(fo, fg, fa, m, tanh);
        });
    });
  });
}

}  // namespace ag::kernels
