// Binary elementwise kernels with broadcasting, comparisons, logic and where.
// (Arithmetic and where rows call the dispatched vector rows (elementwise_rows.h)
// directly: rows here are often short, e.g. a bias row of 64, where an xtensor adaptor
// per row cost more than the math.)
#include <algorithm>
#include <cmath>

#include "attograd/detail/parallel.h"
#include "kernels/kernels.h"
#include "kernels/elementwise_rows.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

void check_same_dtype(const Tensor& a, const Tensor& b, const char* name) {
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, name, ": dtypes ", a.dtype(), " and ", b.dtype(), " differ (shapes ",
           a.shape(), " and ", b.shape(), "); convert one with .to()");
}

// out = f(a, b) over the broadcast shape. With `rows` (arith_row at the run-time level,
// for op), rows where the output and both inputs are contiguous, or one input is
// constant along the row (a bias, a scalar), run in SIMD registers; other rows use f.
template <class T, class O, class F>
Tensor zip_rows(const Tensor& a, const Tensor& b, const char* name, F&& f, ArithRowFn<T> rows = nullptr, int op = 0) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = empty(shape, dtype_v<O>, name);
  std::array<Strides, 3> st{out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape)};
  O* o = out.data<O>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  for_each_row_parallel<3>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
    if constexpr (std::is_same_v<T, O>) {
      if (rows && inc[0] == 1) {
        const int layout = inc[1] == 1 && inc[2] == 1   ? 0
                           : inc[1] == 1 && inc[2] == 0 ? 1
                           : inc[1] == 0 && inc[2] == 1 ? 2
                                                        : -1;
        if (layout >= 0) return rows(op, layout, o + off[0], pa + off[1], pb + off[2], n);
      }
    }
    for (int64_t i = 0; i < n; ++i) o[off[0] + i * inc[0]] = f(pa[off[1] + i * inc[1]], pb[off[2] + i * inc[2]]);
  });
  return out;
}

// Arithmetic: floats through the dispatched rows (op is add, sub, mul or div, the
// first four of Binary), integers through f.
template <class T, class F>
Tensor arith(Binary op, const Tensor& a, const Tensor& b, const char* name, F&& f) {
  if constexpr (std::is_floating_point_v<T>)
    return zip_rows<T, T>(a, b, name, std::forward<F>(f), arith_row.of<T>().get(), static_cast<int>(op));
  else
    return zip_rows<T, T>(a, b, name, std::forward<F>(f));
}

// Integer arithmetic wraps modulo 2^N as PyTorch's does (two's complement), computed in
// the unsigned type: signed overflow would be undefined behaviour.
template <class T>
using Unsigned = std::make_unsigned_t<T>;
template <class T>
T wrap_add(T x, T y) {
  return static_cast<T>(static_cast<Unsigned<T>>(x) + static_cast<Unsigned<T>>(y));
}
template <class T>
T wrap_sub(T x, T y) {
  return static_cast<T>(static_cast<Unsigned<T>>(x) - static_cast<Unsigned<T>>(y));
}
template <class T>
T wrap_mul(T x, T y) {
  return static_cast<T>(static_cast<Unsigned<T>>(x) * static_cast<Unsigned<T>>(y));
}

// PyTorch's message for an integer division by zero (its CPU kernels raise
// "ZeroDivisionError"; the hardware would trap with SIGFPE).
template <class T>
void check_divisor(T x, T y, const char* name) {
  AG_CHECK(y != 0, ValueError, name, ": integer division by zero (ZeroDivisionError: ", x, " / 0)");
}

// x / y truncated toward zero. MIN / -1 traps on x86 (the quotient 2^(N-1) does not fit):
// y == -1 is the wrapped negation, so MIN / -1 = MIN (and MIN % -1 = 0).
template <class T>
T trunc_div(T x, T y, const char* name) {
  check_divisor(x, y, name);
  return y == -1 ? wrap_sub(T(0), x) : T(x / y);
}

// x^y in T by repeated squaring, wrapping as the products do (c10's powi): a negative
// exponent gives 1 / x^|y| truncated: 1 for x = 1, +-1 for x = -1, else 0.
template <class T>
T int_pow(T x, T y) {
  if (y < 0) {
    if (x == 1) return 1;
    if (x == -1) return (y & 1) ? T(-1) : T(1);
    return 0;
  }
  T result = 1;
  for (Unsigned<T> e = static_cast<Unsigned<T>>(y); e != 0; e >>= 1) {
    if (e & 1) result = wrap_mul(result, x);
    x = wrap_mul(x, x);
  }
  return result;
}

// floor(x / y) as PyTorch computes it (c10 div_floor_integer / div_floor_floating): for
// floats via fmod so that the quotient of exact multiples is exact, a zero keeps the sign
// of x / y, and y = 0 gives x / y (inf or nan).
template <class T>
T floor_div(T x, T y, const char* name) {
  if constexpr (std::is_integral_v<T>) {
    const T q = trunc_div(x, y, name);  // MIN / -1 wraps to MIN (exact: the remainder is 0)
    return y != -1 && ((x < 0) != (y < 0)) && T(x % y) != 0 ? T(q - 1) : q;
  } else {
    if (y == 0) return x / y;
    const T mod = std::fmod(x, y);
    T div = (x - mod) / y;
    if (mod != 0 && (y < 0) != (mod < 0)) div -= T(1);
    if (div == 0) return std::copysign(T(0), x / y);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  }
}

// x - trunc(x / y) y (C's fmod: the dividend's sign). Integers: x % y, with MIN % -1 = 0
// (the hardware's idiv would trap) and zero divisors refused as in trunc_div.
template <class T>
T fmod_of(T x, T y, const char* name) {
  if constexpr (std::is_integral_v<T>) {
    check_divisor(x, y, name);
    return y == -1 ? T(0) : T(x % y);
  } else {
    return std::fmod(x, y);
  }
}

// x - floor(x / y) y (Python's %: the divisor's sign), as PyTorch's remainder kernel:
// fmod, then + y when the signs of the remainder and y differ.
template <class T>
T remainder_of(T x, T y, const char* name) {
  T mod = fmod_of(x, y, name);
  if (mod != 0 && (y < 0) != (mod < 0)) mod = T(mod + y);  // opposite signs: no overflow
  return mod;
}

template <class T>
Tensor binary_typed(Binary op, const Tensor& a, const Tensor& b, const char* name) {
  switch (op) {
    case Binary::add:
      if constexpr (std::is_integral_v<T>) return arith<T>(op, a, b, name, wrap_add<T>);
      return arith<T>(op, a, b, name, [](T x, T y) { return T(x + y); });
    case Binary::sub:
      if constexpr (std::is_integral_v<T>) return arith<T>(op, a, b, name, wrap_sub<T>);
      return arith<T>(op, a, b, name, [](T x, T y) { return T(x - y); });
    case Binary::mul:
      if constexpr (std::is_integral_v<T>) return arith<T>(op, a, b, name, wrap_mul<T>);
      return arith<T>(op, a, b, name, [](T x, T y) { return T(x * y); });
    case Binary::div:
      if constexpr (std::is_integral_v<T>)
        return zip_rows<T, T>(a, b, name, [&](T x, T y) { return trunc_div(x, y, name); });
      else
        return arith<T>(op, a, b, name, [](T x, T y) { return x / y; });
    case Binary::pow:
      if constexpr (std::is_integral_v<T>) return zip_rows<T, T>(a, b, name, int_pow<T>);
      return zip_rows<T, T>(a, b, name, [](T x, T y) { return T(std::pow(x, y)); });
    case Binary::maximum:
      return zip_rows<T, T>(a, b, name, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>)
          if (std::isnan(x) || std::isnan(y)) return T(NAN);
        return x >= y ? x : y;
      });
    case Binary::minimum:
      return zip_rows<T, T>(a, b, name, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>)
          if (std::isnan(x) || std::isnan(y)) return T(NAN);
        return x <= y ? x : y;
      });
    case Binary::ge_mask: return zip_rows<T, T>(a, b, name, [](T x, T y) { return x >= y ? T(1) : T(0); });
    case Binary::floor_div: return zip_rows<T, T>(a, b, name, [&](T x, T y) { return floor_div(x, y, name); });
    case Binary::trunc_div:
      if constexpr (std::is_integral_v<T>)
        return zip_rows<T, T>(a, b, name, [&](T x, T y) { return trunc_div(x, y, name); });
      else
        return zip_rows<T, T>(a, b, name, [](T x, T y) { return T(std::trunc(x / y)); });
    case Binary::fmod: return zip_rows<T, T>(a, b, name, [&](T x, T y) { return fmod_of(x, y, name); });
    case Binary::remainder: return zip_rows<T, T>(a, b, name, [&](T x, T y) { return remainder_of(x, y, name); });
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

// bf16 / f16 add, sub, mul, div when a and b are contiguous and b has a's shape or its
// trailing dims (a bias): each row widened, computed and rounded in L1-sized chunks
// (in_f32_chunks) with the f32 rows, so the bits of the f32 path without its three f32
// tensors (a decode step's bias adds in bf16 spent most of their time there). Undefined
// otherwise.
Tensor half_arith(Binary op, const Tensor& a, const Tensor& b, const char* name) {
  if (static_cast<int>(op) > static_cast<int>(Binary::div) || !a.is_contiguous() || !b.is_contiguous() ||
      b.numel() == 0 || b.dim() > a.dim())
    return {};
  for (int64_t i = 1; i <= b.dim(); ++i)
    if (b.shape()[b.dim() - i] != a.shape()[a.dim() - i]) return {};
  Tensor out = empty(a.shape(), a.dtype(), name);
  const int64_t n = b.numel(), rows = a.numel() / n;
  auto row = arith_row.of<float>().get();
  dispatch_float_and_half(a.dtype(), name, [&]<class H>() {
    if constexpr (!std::is_floating_point_v<H>) {
      const H *pa = a.data<H>(), *pb = b.data<H>();
      H* po = out.data<H>();
      detail::parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          in_f32_chunks(po + r * n, pb, pa + r * n, n, [&](float* o, const float* y, const float* x, int64_t m) {
            row(static_cast<int>(op), 0, o, x, y, m);
          });
      });
    }
  });
  return out;
}

}  // namespace

Tensor binary(Binary op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(a, b, name);
  if (is_half(a)) {
    if (Tensor r = half_arith(op, a, b, name); r.defined()) return r;
    return to_half(binary(op, as_f32(a), as_f32(b), name), a.dtype());
  }
  return dispatch_numeric(a.dtype(), name, [&]<class T>() { return binary_typed<T>(op, a, b, name); });
}

Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first) {
  if (is_half(a)) return to_half(binary_scalar(op, as_f32(a), s, scalar_first), a.dtype());
  Tensor st = empty(Shape{}, a.dtype());
  fill(st, s);
  return scalar_first ? binary(op, st, a, "binary") : binary(op, a, st, "binary");
}

Tensor compare(Compare op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(a, b, name);
  if (is_half(a)) return compare(op, as_f32(a), as_f32(b), name);
  return dispatch_all(a.dtype(), name, [&]<class T>() {
    return zip_rows<T, bool>(a, b, name, [op](T x, T y) { return cmp(op, x, y); });
  });
}

Tensor logical(Logic op, const Tensor& a, const Tensor& b, const char* name) {
  AG_CHECK(a.dtype() == DType::b8 && b.dtype() == DType::b8, DTypeError, name, ": expected bool tensors, got ",
           a.dtype(), " and ", b.dtype());
  return zip_rows<bool, bool>(a, b, name, [op](bool x, bool y) { return op == Logic::and_ ? x && y : x || y; });
}

// PyTorch: x == 0 as bool for every dtype (so -0 gives true, NaN gives false).
Tensor logical_not(const Tensor& a) {
  if (is_half(a)) return logical_not(as_f32(a));
  return dispatch_all(a.dtype(), "logical_not", [&]<class T>() {
    Tensor z = empty(Shape{}, a.dtype());
    fill(z, 0);
    return zip_rows<T, bool>(a, z, "logical_not", [](T x, T zero) { return x == zero; });
  });
}

Tensor isfinite(const Tensor& a) {
  if (is_half(a)) return isfinite(as_f32(a));
  if (!is_floating(a.dtype())) {
    Tensor out = empty(a.shape(), DType::b8);
    fill(out, 1);
    return out;
  }
  return dispatch_float(a.dtype(), "isfinite", [&]<class T>() {
    Tensor z = empty(Shape{}, a.dtype());
    fill(z, 0);
    return zip_rows<T, bool>(a, z, "isfinite", [](T x, T) { return std::isfinite(x); });
  });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  AG_CHECK(cond.dtype() == DType::b8, DTypeError, "where: condition must be bool, got ", cond.dtype());
  check_same_dtype(a, b, "where");
  if (is_half(a)) return to_half(where(cond, as_f32(a), as_f32(b)), a.dtype());
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = empty(shape, a.dtype(), "where");
  std::array<Strides, 4> st{out.strides(), broadcast_strides(cond, shape), broadcast_strides(a, shape),
                            broadcast_strides(b, shape)};
  dispatch_all(a.dtype(), "where", [&]<class T>() {
    T* o = out.data<T>();
    const bool* c = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    WhereRowFn<T> rows = nullptr;
    if constexpr (std::is_floating_point_v<T>) rows = where_row.of<T>().get();
    for_each_row_parallel<4>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
      if (rows && inc[0] == 1 && inc[1] == 1 && inc[2] <= 1 && inc[3] <= 1 && inc[2] >= 0 && inc[3] >= 0)
        return rows(o + off[0], c + off[1], pa + off[2], pb + off[3], n, inc[2] == 1, inc[3] == 1);
      for (int64_t i = 0; i < n; ++i)
        o[off[0] + i * inc[0]] = c[off[1] + i * inc[1]] ? pa[off[2] + i * inc[2]] : pb[off[3] + i * inc[3]];
    });
  });
  return out;
}

}  // namespace ag::kernels
