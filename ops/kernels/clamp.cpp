// Clamping with scalar bounds (any numeric dtype) and its 0/1 gradient mask.
#include "kernels/kernels.h"
#include "kernels/strided.h"

namespace ag::kernels {

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  return dispatch_numeric(x.dtype(), "clamp", [&]<class T>() -> Tensor {
    auto f = [&](T v) {
      if (lo && v < static_cast<T>(*lo)) v = static_cast<T>(*lo);
      if (hi && v > static_cast<T>(*hi)) v = static_cast<T>(*hi);
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
