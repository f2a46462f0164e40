#pragma once
// Elementwise loops for the ops written in their family sources (ops/unary.cpp,
// ops/activation.cpp, ops/binary.cpp, ...; internal). Each op hands in its scalar formula,
// written with std:: math so that results equal PyTorch's scalar path (ATen's CPU
// kernels use the same formulas); the loops are the strided, broadcasting, thread-pooled
// rows of strided.h.
//
// map() also takes a vector form of a one-tensor function (Vectorized below): contiguous
// rows then go through xtensor, whose xsimd transcendental functions may differ from
// std:: by a few ulp (measured: exp <= 1; sin, cos <= 2; sigmoid <= 4;
// tests/kernels/test_kernel_special_values.cpp). Strided rows (and 0-d tensors) take the
// scalar form of the same function. A function whose vector form is wrong rather than an
// ulp off on some inputs names them (`redo`); those lanes are recomputed in scalar form
// after the vector pass. A function without a vector form runs its scalar form everywhere.
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "attograd/tensor.h"
#include "kernels/half.h"
#include "kernels/kernels.h"
#include "kernels/strided.h"

namespace ag::kernels::pw {

inline void check_float(const Tensor& t, const char* op) {
  AG_CHECK(t.is_floating_point(), DTypeError, op, ": expected a floating tensor (f32, f64), got ", t.dtype(),
           " with shape ", t.shape());
}

inline void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, op, ": dtypes ", a.dtype(), " and ", b.dtype(), " differ (shapes ",
           a.shape(), " and ", b.shape(), "); convert one with .to()");
}

// A one-tensor function with a vector form, for map():
//   scalar  []<class T>(T v) -> T: strided rows, 0-d tensors and the redone lanes;
//   vector  []<class T>(const auto& row) -> an xtensor expression of the row, the same
//           function on contiguous rows (xt::exp(row), row * row, ...);
//   redo    (optional) []<class T>() -> a predicate on T values: the inputs whose vector
//           result is wrong rather than inexact. It is called once per map() call, so the
//           predicate can hold constants of T computed once.
// Example: PW::Vectorized{[]<class T>(T v) { return std::sqrt(v); },
//                         []<class T>(const auto& v) { return xt::sqrt(v); }}
template <class S, class V, class R = std::nullptr_t>
struct Vectorized {
  S scalar;
  V vector;
  R redo = nullptr;
};
template <class S, class V>
Vectorized(S, V) -> Vectorized<S, V>;
template <class S, class V, class R>
Vectorized(S, V, R) -> Vectorized<S, V, R>;

// The redo predicate of functions built on xsimd's exp (exp, sigmoid): exp(v) is denormal
// (or 0) below log(smallest normal), -87.3 (f32) / -708.4 (f64), and near overflow above
// log(max) - 1, 87.7 / 708.8; there xsimd's exp is wrong, not inexact (it flushes
// denormal results to 0 and reaches inf ~1 early).
// NaN is an edge too (see exp_arg).
template <class T>
auto exp_edge() {
  const T lo = std::log(std::numeric_limits<T>::min());
  const T hi = std::log(std::numeric_limits<T>::max()) - T(1);
  return [lo, hi](T v) { return !(v >= lo && v <= hi); };
}

// The argument for xt::exp in a vector form whose redo is exp_edge (of -v when negate):
// v, with 0 on the edge lanes, which the scalar pass recomputes anyway. For f64 this is
// needed, not just cheap: xsimd's f64 exp converts its reduced argument to int64 lane by
// lane on SSE2 / AVX2, an undefined cast (UBSan float-cast-overflow) for NaN, +-inf or
// |v| past ~6e18. f32 lanes convert with cvttps2dq, defined: v itself.
template <class T, class E>
decltype(auto) exp_arg(const E& v, bool negate = false) {
  if constexpr (std::is_same_v<T, double>) {
    const T lo = std::log(std::numeric_limits<T>::min()), hi = std::log(std::numeric_limits<T>::max()) - T(1);
    // Scalars by value (xt keeps lvalue scalars by reference, which would dangle).
    return xt::where(v >= T(negate ? -hi : lo) && v <= T(negate ? -lo : hi), v, T(0));
  } else {
    (void)negate;
    return (v);
  }
}

template <class F>
inline constexpr bool is_vectorized = false;
template <class S, class V, class R>
inline constexpr bool is_vectorized<Vectorized<S, V, R>> = true;

// xtensor over one contiguous row of raw memory.
template <class T>
auto xrow(T* p, int64_t n) {
  auto len = static_cast<std::size_t>(n);
  return xt::adapt(p, len, xt::no_ownership(), std::array<std::size_t, 1>{len});
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
      if constexpr (N == 3) *dst = f(p[0][off[1] + i * inc[1]], p[1][off[2] + i * inc[2]], p[2][off[3] + i * inc[3]]);
    }
  });
  return out;
}

// y = f(x) in x's float dtype (DTypeError naming `op` for other dtypes); f is a generic
// lambda []<class T>(T v) -> T, or a Vectorized function.
template <class F>
Tensor map(const Tensor& x, const char* op, F&& f) {
  if (is_half(x)) return to_half(map(as_f32(x), op, f), x.dtype());
  return dispatch_float(x.dtype(), op, [&]<class T>() -> Tensor {
    if constexpr (!is_vectorized<std::decay_t<F>>) {
      return zip_n<T, T, 1>({&x}, x.shape(), [&](T v) { return f(v); });
    } else {
      Tensor out = kernels::empty(x.shape(), x.dtype());
      std::array<Strides, 2> st{out.strides(), x.strides()};
      T* o = out.data<T>();
      const T* a = x.data<T>();
      auto redo = [&] {
        if constexpr (std::is_null_pointer_v<decltype(f.redo)>)
          return nullptr;
        else
          return f.redo.template operator()<T>();
      }();
      for_each_row_parallel<2>(x.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
        if (inc[0] == 1 && inc[1] == 1) {
          auto xo = xrow(o + off[0], n);
          auto xa = xrow(a + off[1], n);
          xt::noalias(xo) = f.vector.template operator()<T>(xa);
          if constexpr (!std::is_null_pointer_v<decltype(redo)>)
            for (int64_t i = 0; i < n; ++i)
              if (redo(a[off[1] + i])) o[off[0] + i] = f.scalar(a[off[1] + i]);
        } else {
          for (int64_t i = 0; i < n; ++i) o[off[0] + i * inc[0]] = f.scalar(a[off[1] + i * inc[1]]);
        }
      });
      return out;
    }
  });
}

// Bool result of a predicate on a float x.
template <class F>
Tensor map_bool(const Tensor& x, const char* op, F&& f) {
  if (is_half(x)) return map_bool(as_f32(x), op, f);
  pw::check_float(x, op);  // qualified: ADL would also find ag::check_float (op_util.h) in a unity batch
  return dispatch_float(x.dtype(), op, [&]<class T>() {
    return zip_n<bool, T, 1>({&x}, x.shape(), [&](T v) { return static_cast<bool>(f(v)); });
  });
}

// out = f(a, b) with broadcasting; a and b share a float dtype. O = void gives a's dtype.
template <class O = void, class F>
Tensor zip(const Tensor& a, const Tensor& b, const char* op, F&& f) {
  pw::check_float(a, op);
  check_same_dtype(a, b, op);
  if (is_half(a)) return to_half(zip<O>(as_f32(a), as_f32(b), op, f), a.dtype());
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  return dispatch_float(a.dtype(), op, [&]<class T>() {
    using Out = std::conditional_t<std::is_void_v<O>, T, O>;
    return zip_n<Out, T, 2>({&a, &b}, shape, [&](T x, T y) { return static_cast<Out>(f(x, y)); });
  });
}

// out = f(a, b, c) with broadcasting; all three share a float dtype.
template <class O = void, class F>
Tensor zip3(const Tensor& a, const Tensor& b, const Tensor& c, const char* op, F&& f) {
  pw::check_float(a, op);
  check_same_dtype(a, b, op);
  check_same_dtype(a, c, op);
  if (is_half(a)) return to_half(zip3<O>(as_f32(a), as_f32(b), as_f32(c), op, f), a.dtype());
  Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), op), c.shape(), op);
  return dispatch_float(a.dtype(), op, [&]<class T>() {
    using Out = std::conditional_t<std::is_void_v<O>, T, O>;
    return zip_n<Out, T, 3>({&a, &b, &c}, shape, [&](T x, T y, T z) { return static_cast<Out>(f(x, y, z)); });
  });
}

}  // namespace ag::kernels::pw
