// Binary elementwise kernels with broadcasting, comparisons, logic and where.
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/strided.h"
#include "kernels/xt_rows.h"

namespace ag::kernels {
namespace {

void check_same_dtype(const Tensor& a, const Tensor& b, const char* name) {
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, name, ": dtypes ", a.dtype(), " and ", b.dtype(),
           " differ (shapes ", a.shape(), " and ", b.shape(), "); convert one with .to()");
}

// out = f(a, b) over the broadcast shape. xf works on xtensor rows (or a row and a
// scalar when one operand is constant along the row); sf on scalars.
template <class T, class O, class XF, class SF>
Tensor zip_rows(const Tensor& a, const Tensor& b, const char* name, XF&& xf, SF&& sf) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = empty(shape, dtype_v<O>);
  std::array<Strides, 3> st{out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape)};
  O* o = out.data<O>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  for_each_row<3>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
    if constexpr (!std::is_same_v<std::decay_t<XF>, std::nullptr_t>) {
      if (inc[0] == 1) {
        auto xo = xrow(o + off[0], n);
        if (inc[1] == 1 && inc[2] == 1) {
          xt::noalias(xo) = xf(xrow(pa + off[1], n), xrow(pb + off[2], n));
          return;
        }
        if (inc[1] == 1 && inc[2] == 0) {
          xt::noalias(xo) = xf(xrow(pa + off[1], n), pb[off[2]]);
          return;
        }
        if (inc[1] == 0 && inc[2] == 1) {
          xt::noalias(xo) = xf(pa[off[1]], xrow(pb + off[2], n));
          return;
        }
      }
    }
    for (int64_t i = 0; i < n; ++i)
      o[off[0] + i * inc[0]] = sf(pa[off[1] + i * inc[1]], pb[off[2] + i * inc[2]]);
  });
  return out;
}

template <class T>
Tensor binary_typed(Binary op, const Tensor& a, const Tensor& b, const char* name) {
  switch (op) {
    case Binary::add:
      return zip_rows<T, T>(a, b, name, [](auto&& x, auto&& y) { return x + y; },
                            [](T x, T y) { return T(x + y); });
    case Binary::sub:
      return zip_rows<T, T>(a, b, name, [](auto&& x, auto&& y) { return x - y; },
                            [](T x, T y) { return T(x - y); });
    case Binary::mul:
      return zip_rows<T, T>(a, b, name, [](auto&& x, auto&& y) { return x * y; },
                            [](T x, T y) { return T(x * y); });
    case Binary::div:
      if constexpr (std::is_integral_v<T>) {
        return zip_rows<T, T>(a, b, name, nullptr, [&](T x, T y) {
          AG_CHECK(y != 0, ValueError, name, ": integer division by zero");
          return T(x / y);
        });
      } else {
        return zip_rows<T, T>(a, b, name, [](auto&& x, auto&& y) { return x / y; },
                              [](T x, T y) { return T(x / y); });
      }
    case Binary::pow:
      return zip_rows<T, T>(a, b, name, nullptr, [](T x, T y) { return T(std::pow(x, y)); });
    case Binary::maximum:
      return zip_rows<T, T>(a, b, name, nullptr, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>) if (std::isnan(x) || std::isnan(y)) return T(NAN);
        return x >= y ? x : y;
      });
    case Binary::minimum:
      return zip_rows<T, T>(a, b, name, nullptr, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>) if (std::isnan(x) || std::isnan(y)) return T(NAN);
        return x <= y ? x : y;
      });
    case Binary::ge_mask:
      return zip_rows<T, T>(a, b, name, nullptr, [](T x, T y) { return x >= y ? T(1) : T(0); });
  }
  throw Error("binary: unknown op");
}

template <class T>
bool cmp(Compare op, T x, T y) {
  switch (op) {
    case Compare::eq: return x == y;
    case Compare::ne: return x != y;
    case Compare::lt: return x < y;
    case Compare::le: return x <= y;
    case Compare::gt: return x > y;
    case Compare::ge: return x >= y;
  }
  return false;
}

}  // namespace

Tensor binary(Binary op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(a, b, name);
  return dispatch_numeric(a.dtype(), name, [&]<class T>() { return binary_typed<T>(op, a, b, name); });
}

Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first) {
  Tensor st = empty(Shape{}, a.dtype());
  fill(st, s);
  return scalar_first ? binary(op, st, a, "binary") : binary(op, a, st, "binary");
}

Tensor compare(Compare op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(a, b, name);
  return dispatch_all(a.dtype(), name, [&]<class T>() {
    return zip_rows<T, bool>(a, b, name, nullptr, [op](T x, T y) { return cmp(op, x, y); });
  });
}

Tensor compare_scalar(Compare op, const Tensor& a, double s) {
  Tensor b = empty(Shape{}, DType::f64);
  fill(b, s);
  return compare(op, convert(a, DType::f64), b, "compare");
}

Tensor logical(Logic op, const Tensor& a, const Tensor& b, const char* name) {
  AG_CHECK(a.dtype() == DType::b8 && b.dtype() == DType::b8, DTypeError, name,
           ": expected bool tensors, got ", a.dtype(), " and ", b.dtype());
  return zip_rows<bool, bool>(a, b, name, nullptr,
                              [op](bool x, bool y) { return op == Logic::and_ ? x && y : x || y; });
}

Tensor logical_not(const Tensor& a) {
  AG_CHECK(a.dtype() == DType::b8, DTypeError, "logical_not: expected a bool tensor, got ", a.dtype());
  Tensor t = empty(Shape{}, DType::b8);
  fill(t, 1);
  return zip_rows<bool, bool>(a, t, "logical_not", nullptr, [](bool x, bool) { return !x; });
}

Tensor isfinite(const Tensor& a) {
  if (!is_floating(a.dtype())) {
    Tensor out = empty(a.shape(), DType::b8);
    fill(out, 1);
    return out;
  }
  return dispatch_float(a.dtype(), "isfinite", [&]<class T>() {
    Tensor z = empty(Shape{}, a.dtype());
    fill(z, 0);
    return zip_rows<T, bool>(a, z, "isfinite", nullptr, [](T x, T) { return std::isfinite(x); });
  });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  AG_CHECK(cond.dtype() == DType::b8, DTypeError, "where: condition must be bool, got ", cond.dtype());
  check_same_dtype(a, b, "where");
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = empty(shape, a.dtype());
  std::array<Strides, 4> st{out.strides(), broadcast_strides(cond, shape), broadcast_strides(a, shape),
                            broadcast_strides(b, shape)};
  dispatch_all(a.dtype(), "where", [&]<class T>() {
    T* o = out.data<T>();
    const bool* c = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    for_each_row<4>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
      for (int64_t i = 0; i < n; ++i)
        o[off[0] + i * inc[0]] = c[off[1] + i * inc[1]] ? pa[off[2] + i * inc[2]] : pb[off[3] + i * inc[3]];
    });
  });
  return out;
}

}  // namespace ag::kernels
