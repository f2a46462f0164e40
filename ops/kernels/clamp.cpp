// Unary float math. Contiguous rows go through xtensor (vectorized exp, sin, ...);
// strided rows fall back to the scalar form of the same function. Both forms must give
// the same bits (tests/test_kernel_special_values.cpp), except that xsimd's transcendental
// functions may differ from std:: by a few ulp (measured: exp <= 1; sin, cos <= 2;
// sigmoid <= 4). Where xsimd is wrong rather than an ulp off, those lanes are recomputed
// in scalar form (`fix`): exp and sigmoid near underflow (xsimd flushes denormal results
// to 0) and overflow (xsimd gives inf ~1 early). Where PyTorch parity needs libm's
// answer, every row takes the scalar form: log (xsimd is wrong on denormals), tanh (its
// gradient 1 - y^2 magnifies an ulp ~70x), erf (xsimd up to 68 ulp off), pow (special
// values).
#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/strided.h"
#include "xt_rows.h"

namespace ag::kernels {
namespace {

// out = xf(x) on contiguous rows, sf(x) on strided ones. With `fix`, contiguous lanes
// whose input satisfies fix(v) are recomputed with sf after the vector pass.
template <class T, class XF, class SF, class Fix = std::nullptr_t>
Tensor map_rows(const Tensor& x, XF&& xf, SF&& sf, Fix fix = nullptr) {
  Tensor out = empty(x.shape(), x.dtype());
  std::array<Strides, 2> st{out.strides(), x.strides()};
  T* o = out.data<T>();
  const T* a = x.data<T>();
  for_each_row_parallel<2>(x.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
    if (inc[0] == 1 && inc[1] == 1) {
      auto xo = xrow(o + off[0], n);
      auto xa = xrow(a + off[1], n);
      xt::noalias(xo) = xf(xa);
      if constexpr (!std::is_same_v<Fix, std::nullptr_t>)
        for (int64_t i = 0; i < n; ++i)
          if (fix(a[off[1] + i])) o[off[0] + i] = sf(a[off[1] + i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[off[0] + i * inc[0]] = sf(a[off[1] + i * inc[1]]);
    }
  });
  return out;
}

// map_rows without the vectorized path: sf on every element, contiguous or not.
template <class T, class SF>
Tensor map_scalar(const Tensor& x, SF&& sf) {
  Tensor out = empty(x.shape(), x.dtype());
  std::array<Strides, 2> st{out.strides(), x.strides()};
  T* o = out.data<T>();
  const T* a = x.data<T>();
  for_each_row_parallel<2>(x.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
    for (int64_t i = 0; i < n; ++i) o[off[0] + i * inc[0]] = sf(a[off[1] + i * inc[1]]);
  });
  return out;
}

// The op's public name, for dtype errors ("exp: expected a floating dtype ...").
const char* unary_name(Unary op) {
  switch (op) {
    case Unary::neg: return "neg";
    case Unary::exp: return "exp";
    case Unary::log: return "log";
    case Unary::sqrt: return "sqrt";
    case Unary::rsqrt: return "rsqrt";
    case Unary::abs: return "abs";
    case Unary::sign: return "sign";
    case Unary::tanh: return "tanh";
    case Unary::sigmoid: return "sigmoid";
    case Unary::relu: return "relu";
    case Unary::erf: return "erf";
    case Unary::sin: return "sin";
    case Unary::cos: return "cos";
    case Unary::square: return "square";
    case Unary::step: return "step";
  }
  return "unary";
}

}  // namespace

Tensor unary(Unary op, const Tensor& x) {
  return dispatch_float(x.dtype(), unary_name(op), [&]<class T>() -> Tensor {
    const T one = 1, zero = 0;
    // exp(v) is denormal (or 0) below log(smallest normal), -87.3 (f32) / -708.4 (f64), and
    // near overflow above log(max) - 1, 87.7 / 708.8: there xsimd's exp is wrong, not inexact.
    const T exp_lo = std::log(std::numeric_limits<T>::min());
    const T exp_hi = std::log(std::numeric_limits<T>::max()) - one;
    auto exp_edge = [exp_lo, exp_hi](T v) { return v < exp_lo || v > exp_hi; };
    switch (op) {
      case Unary::neg: return map_rows<T>(x, [](auto& v) { return -v; }, [](T v) { return -v; });
      case Unary::exp:
        return map_rows<T>(x, [](auto& v) { return xt::exp(v); }, [](T v) { return std::exp(v); }, exp_edge);
      case Unary::log:
        // std::log on every path: xt::log is wrong on subnormals (log(1e-310) = -746.5).
        return map_scalar<T>(x, [](T v) { return std::log(v); });
      case Unary::sqrt:
        return map_rows<T>(x, [](auto& v) { return xt::sqrt(v); }, [](T v) { return std::sqrt(v); });
      case Unary::rsqrt:
        return map_rows<T>(x, [&](auto& v) { return one / xt::sqrt(v); },
                           [&](T v) { return one / std::sqrt(v); });
      case Unary::abs:
        return map_rows<T>(x, [](auto& v) { return xt::abs(v); }, [](T v) { return std::abs(v); });
      case Unary::sign:
        // torch.sign: +0 for -0 and for NaN (xt::sign keeps -0 and NaN).
        return map_rows<T>(x, [&](auto& v) { return xt::where(v > zero, one, xt::where(v < zero, -one, zero)); },
                           [&](T v) { return v > zero ? one : v < zero ? -one : zero; });
      case Unary::tanh:
        // std::tanh on every path: xt::tanh is a few ulps off, and tanh's gradient
        // 1 - y^2 magnifies that ~70x near |x| = 2.5 (PyTorch parity, tests/fixtures).
        return map_scalar<T>(x, [](T v) { return std::tanh(v); });
      case Unary::sigmoid:
        return map_rows<T>(x, [&](auto& v) { return one / (one + xt::exp(-v)); },
                           [&](T v) { return one / (one + std::exp(-v)); },
                           [exp_edge](T v) { return exp_edge(-v); });
      case Unary::relu:  // PyTorch: x < 0 ? 0 : x, so relu(NaN) = NaN and relu(-0) = -0
        return map_rows<T>(x, [&](auto& v) { return xt::where(v < zero, zero, v); },
                           [&](T v) { return v < zero ? zero : v; });
      case Unary::erf:
        // std::erf on every path: torch matches libm's erf; xt::erf is ~15 ulps off it (f64
        // up to 68, NaN for |x| > 1e4).
        return map_scalar<T>(x, [](T v) { return std::erf(v); });
      case Unary::sin:
        return map_rows<T>(x, [](auto& v) { return xt::sin(v); }, [](T v) { return std::sin(v); });
      case Unary::cos:
        return map_rows<T>(x, [](auto& v) { return xt::cos(v); }, [](T v) { return std::cos(v); });
      case Unary::square:
        return map_rows<T>(x, [](auto& v) { return v * v; }, [](T v) { return v * v; });
      case Unary::step:
        return map_rows<T>(x, [&](auto& v) { return xt::where(v > zero, one, zero); },
                           [&](T v) { return v > zero ? one : zero; });
    }
    throw Error("unary: unknown op");
  });
}

// xsimd's pow disagreed with std::pow on special values (0^-1 = 0, 0^0 = 0,
// (-inf)^0.3 = NaN in the vector body; inf, 1, inf in the tail), so no xsimd here.
// x * x is std::pow(x, 2) bit for bit (checked over every float and 1e8 random doubles).
Tensor pow_scalar(const Tensor& x, double e) {
  // As torch: 2 squares, 0.5 and -0.5 are sqrt and rsqrt (so pow(-inf, 0.5) is NaN and
  // pow(-0, -0.5) is -inf), the rest std::pow on every path (xt::pow's vectorized path
  // gets 0, -0, -inf, subnormals and 0 exponents wrong).
  if (e == 2.0) return unary(Unary::square, x);
  if (e == 0.5) return unary(Unary::sqrt, x);
  if (e == -0.5) return unary(Unary::rsqrt, x);
  return dispatch_float(x.dtype(), "pow", [&]<class T>() -> Tensor {
    // In double, with the exponent as given: f32's rounded 0.3 is 7 ulps off at 1e30.
    return map_scalar<T>(x, [&](T v) { return static_cast<T>(std::pow(static_cast<double>(v), e)); });
  });
}

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
