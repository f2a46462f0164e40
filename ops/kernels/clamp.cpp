// Clamping with scalar bounds (any numeric dtype) and its 0/1 gradient mask.
#include <cmath>
#include <limits>

#include "attograd/detail/convert.h"
#include "kernels/kernels.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {

namespace {
// A bound in T. Integer tensors: truncated toward zero and saturated to T's range (a
// static_cast of 1e300 or NaN would be undefined); a NaN bound is a ValueError there.
template <class T>
std::optional<T> bound(std::optional<double> b, const Tensor& x) {
  if (!b) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    AG_CHECK(!std::isnan(*b), ValueError, "clamp: a NaN bound cannot clamp an integer tensor (", x.dtype(), ", shape ",
             x.shape(), ")");
    if (!detail::float_fits_int<T>(*b)) return *b < 0 ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
  return static_cast<T>(*b);
}
}  // namespace

Tensor clamp(const Tensor& x, std::optional<double> lo_in, std::optional<double> hi_in) {
  if (is_half(x)) return to_half(clamp(as_f32(x), lo_in, hi_in), x.dtype());
  return dispatch_numeric(x.dtype(), "clamp", [&]<class T>() -> Tensor {
    const std::optional<T> lo = bound<T>(lo_in, x), hi = bound<T>(hi_in, x);
    auto f = [&](T v) {
      if (lo && v < *lo) v = *lo;
      if (hi && v > *hi) v = *hi;
      return v;
    };
    Tensor out = empty(x.shape(), x.dtype());
    std::array<Strides, 2> st{out.strides(), x.strides()};
    T* o = out.data<T>();
    const T* a = x.data<T>();
    for_each_row<2>(x.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
      for (int64_t i = 0; i < n; ++i) o[off[0] + i * inc[0]] = f(a[off[1] + i * inc[1]]);
    });
    return out;
  });
}

Tensor in_range(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  if (is_half(x)) return to_half(in_range(as_f32(x), lo, hi), x.dtype());
  return dispatch_float(x.dtype(), "clamp", [&]<class T>() -> Tensor {
    Tensor out = empty(x.shape(), x.dtype());
    std::array<Strides, 2> st{out.strides(), x.strides()};
    T* o = out.data<T>();
    const T* a = x.data<T>();
    for_each_row<2>(x.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
      for (int64_t i = 0; i < n; ++i) {
        T v = a[off[1] + i * inc[1]];
        bool in = (!lo || v >= static_cast<T>(*lo)) && (!hi || v <= static_cast<T>(*hi));
        o[off[0] + i * inc[0]] = in ? T(1) : T(0);
      }
    });
    return out;
  });
}

}  // namespace ag::kernels
