#pragma once
// Scalar elementwise loops for ops/math.cpp and ops/activation.cpp (internal). Each op
// hands in its scalar formula, written with std:: math so that results equal PyTorch's
// scalar path (ATen's CPU kernels use the same formulas); the loops are the strided,
// broadcasting, thread-pooled rows of strided.h. No SIMD here on purpose: xsimd's
// transcendental functions may differ from std:: by an ulp.
#include <array>

#include "attograd/tensor.h"
#include "kernels/kernels.h"
#include "kernels/strided.h"

namespace ag::kernels::pw {

inline void check_float(const Tensor& t, const char* op) {
  AG_CHECK(t.is_floating_point(), DTypeError, op, ": expected a floating tensor (f32, f64), got ",
           t.dtype(), " with shape ", t.shape());
}

inline void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, op, ": dtypes ", a.dtype(), " and ", b.dtype(),
           " differ (shapes ", a.shape(), " and ", b.shape(), "); convert one with .to()");
}

// out[i] = f(a[i], ...) over the broadcast shape of the operands. O is the output type
// (T, or bool for predicates); f is called with T values.
template <class O, class T, std::size_t N, class F>
Tensor zip_n(const std::array<const Tensor*, N>& in, const Shape& shape, F&& f) {
  Tensor out = kernels::empty(shape, dtype_v<O>);
  std::array<Strides, N + 1> st;
  st[0] = out.strides();
  std::array<const T*, N> p;
  for (std::size_t k = 0; k < N; ++k) {
    st[k + 1] = broadcast_strides(*in[k], shape);
    p[k] = in[k]->template data<T>();
  }
  O* o = out.data<O>();
  for_each_row_parallel<N + 1>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
    for (int64_t i = 0; i < n; ++i) {
      O* dst = o + off[0] + i * inc[0];
      if constexpr (N == 1) *dst = f(p[0][off[1] + i * inc[1]]);
      if constexpr (N == 2) *dst = f(p[0][off[1] + i * inc[1]], p[1][off[2] + i * inc[2]]);
      if constexpr (N == 3)
        *dst = f(p[0][off[1] + i * inc[1]], p[1][off[2] + i * inc[2]], p[2][off[3] + i * inc[3]]);
    }
  });
  return out;
}

// y = f(x) in x's float dtype; f is a generic lambda `[]<class T>(T v) -> T`.
template <class F>
Tensor map(const Tensor& x, const char* op, F&& f) {
  check_float(x, op);
  return dispatch_float(x.dtype(), op, [&]<class T>() {
    return zip_n<T, T, 1>({&x}, x.shape(), [&](T v) { return f(v); });
  });
}

// Bool result of a predicate on a float x.
template <class F>
Tensor map_bool(const Tensor& x, const char* op, F&& f) {
  check_float(x, op);
  return dispatch_float(x.dtype(), op, [&]<class T>() {
    return zip_n<bool, T, 1>({&x}, x.shape(), [&](T v) { return static_cast<bool>(f(v)); });
  });
}

// out = f(a, b) with broadcasting; a and b share a float dtype. O = void gives a's dtype.
template <class O = void, class F>
Tensor zip(const Tensor& a, const Tensor& b, const char* op, F&& f) {
  check_float(a, op);
  check_same_dtype(a, b, op);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  return dispatch_float(a.dtype(), op, [&]<class T>() {
    using Out = std::conditional_t<std::is_void_v<O>, T, O>;
    return zip_n<Out, T, 2>({&a, &b}, shape, [&](T x, T y) { return static_cast<Out>(f(x, y)); });
  });
}

// out = f(a, b, c) with broadcasting; all three share a float dtype.
template <class O = void, class F>
Tensor zip3(const Tensor& a, const Tensor& b, const Tensor& c, const char* op, F&& f) {
  check_float(a, op);
  check_same_dtype(a, b, op);
  check_same_dtype(a, c, op);
  Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), op), c.shape(), op);
  return dispatch_float(a.dtype(), op, [&]<class T>() {
    using Out = std::conditional_t<std::is_void_v<O>, T, O>;
    return zip_n<Out, T, 3>({&a, &b, &c}, shape,
                            [&](T x, T y, T z) { return static_cast<Out>(f(x, y, z)); });
  });
}

}  // namespace ag::kernels::pw
