// Elementwise math of one tensor. Each op hands its elementwise function to PW::map
// (kernels/pointwise.h): a scalar form written with std:: math, as PyTorch's scalar path,
// and, where xsimd vectorizes it well, a vector form for contiguous rows (PW::Vectorized).
// Each saves what its derivative needs (its input x or its output y) and records a
// backward written with differentiable ops on g and the saved tensor, or with constant
// (piecewise) factors; the kinks and the values at 0, -0, +-inf and NaN follow PyTorch 1.13.
#include "attograd/ops/unary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "kernels/pointwise.h"
#include "op_util.h"

namespace ag {
namespace {
namespace PW = K::pw;

// The helpers check for a float x first ("expected a floating tensor", naming the shape);
// the ops that call PW::map directly get its dtype dispatch's error.

// y = f(x) recorded with dx = d(g, x) (x saved).
template <class F, class D>
Tensor unary_in(const char* name, const Tensor& x, F&& f, D d) {
  check_float(x, name);
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x},
                [sx = save_if(wants_grad(x), x), d](const Tensor& g, NeedsGrad) { return Grads{d(g, sx.get())}; });
}

// y = f(x) recorded with dx = d(g, y) (y saved).
template <class F, class D>
Tensor unary_out(const char* name, const Tensor& x, F&& f, D d) {
  check_float(x, name);
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x}, [sy = save_output_if(wants_grad(x), y), d](const Tensor& g, NeedsGrad) {
    return Grads{d(g, sy.get())};
  });
}

// Rounding ops: PyTorch's gradient is zeros (not undefined), so a graph passes through.
template <class F>
Tensor rounding(const char* name, const Tensor& x, F&& f) {
  check_float(x, name);
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x}, [](const Tensor& g, NeedsGrad) { return Grads{zeros_like(g)}; });
}

}  // namespace

// ---- arithmetic ----------------------------------------------------------------------
Tensor neg(const Tensor& x) {  // dx = -g
  Tensor out =
      PW::map(x, "neg", PW::Vectorized{[]<class T>(T v) { return -v; }, []<class T>(const auto& v) { return -v; }});
  return record("neg", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{neg(g)}; });
}

Tensor abs(const Tensor& x) {  // dx = g * sign(x)
  Tensor y = PW::map(
      x, "abs",
      PW::Vectorized{[]<class T>(T v) { return std::abs(v); }, []<class T>(const auto& v) { return xt::abs(v); }});
  return record("abs", y, {x},
                [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) { return Grads{g * sign(sx.get())}; });
}

// torch.sign: +0 for -0 and for NaN (xt::sign keeps -0 and NaN). Zero gradient.
Tensor sign(const Tensor& x) {
  return PW::map(x, "sign",
                 PW::Vectorized{[]<class T>(T v) { return v > T(0)   ? T(1)
                                                          : v < T(0) ? T(-1)
                                                                     : T(0); },
                                []<class T>(const auto& v) {
                                  return xt::where(v > T(0), T(1), xt::where(v < T(0), T(-1), T(0)));
                                }});
}

Tensor square(const Tensor& x) {  // dx = 2 g x
  Tensor y = PW::map(x, "square",
                     PW::Vectorized{[]<class T>(T v) { return v * v; }, []<class T>(const auto& v) { return v * v; }});
  return record("square", y, {x},
                [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) { return Grads{g * sx.get() * 2.0}; });
}

Tensor sqrt(const Tensor& x) {  // dx = g / (2 y)
  Tensor y = PW::map(
      x, "sqrt",
      PW::Vectorized{[]<class T>(T v) { return std::sqrt(v); }, []<class T>(const auto& v) { return xt::sqrt(v); }});
  return record("sqrt", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * 0.5 / sy.get()};
  });
}

Tensor rsqrt(const Tensor& x) {  // dx = -g y^3 / 2
  Tensor y = PW::map(x, "rsqrt",
                     PW::Vectorized{[]<class T>(T v) { return T(1) / std::sqrt(v); },
                                    []<class T>(const auto& v) { return T(1) / xt::sqrt(v); }});
  return record("rsqrt", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    const Tensor& y = sy.get();
    return Grads{g * (y * y * y) * -0.5};
  });
}

// ---- exponentials and logarithms -------------------------------------------------------
// xsimd's exp where it is right, std::exp near underflow and overflow (PW::exp_edge).
Tensor exp(const Tensor& x) {  // dx = g * y
  Tensor y = PW::map(x, "exp",
                     PW::Vectorized{[]<class T>(T v) { return std::exp(v); },
                                    []<class T>(const auto& v) { return xt::exp(PW::exp_arg<T>(v)); },
                                    []<class T>() { return PW::exp_edge<T>(); }});
  return record("exp", y, {x},
                [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) { return Grads{g * sy.get()}; });
}

Tensor exp2(const Tensor& x) {  // dx = g y ln 2
  return unary_out(
      "exp2", x, []<class T>(T v) { return std::exp2(v); },
      [](const Tensor& g, const Tensor& y) { return g * y * std::numbers::ln2; });
}
Tensor expm1(const Tensor& x) {  // dx = g (y + 1)
  return unary_out(
      "expm1", x, []<class T>(T v) { return std::expm1(v); },
      [](const Tensor& g, const Tensor& y) { return g * (y + 1.0); });
}

// std::log on every path: xt::log is wrong on subnormals (log(1e-310) = -746.5).
Tensor log(const Tensor& x) {  // dx = g / x
  Tensor y = PW::map(x, "log", []<class T>(T v) { return std::log(v); });
  return record("log", y, {x},
                [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) { return Grads{g / sx.get()}; });
}
Tensor log2(const Tensor& x) {  // dx = g / (x ln 2)
  return unary_in(
      "log2", x, []<class T>(T v) { return std::log2(v); },
      [](const Tensor& g, const Tensor& x) { return g / (x * std::numbers::ln2); });
}
Tensor log10(const Tensor& x) {  // dx = g / (x ln 10)
  return unary_in(
      "log10", x, []<class T>(T v) { return std::log10(v); },
      [](const Tensor& g, const Tensor& x) { return g / (x * std::numbers::ln10); });
}
Tensor log1p(const Tensor& x) {  // dx = g / (x + 1)
  return unary_in(
      "log1p", x, []<class T>(T v) { return std::log1p(v); },
      [](const Tensor& g, const Tensor& x) { return g / (x + 1.0); });
}

// ---- trigonometric and hyperbolic -----------------------------------------------------
Tensor sin(const Tensor& x) {  // dx = g cos(x)
  Tensor y = PW::map(
      x, "sin",
      PW::Vectorized{[]<class T>(T v) { return std::sin(v); }, []<class T>(const auto& v) { return xt::sin(v); }});
  return record("sin", y, {x},
                [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) { return Grads{g * cos(sx.get())}; });
}

Tensor cos(const Tensor& x) {  // dx = -g sin(x)
  Tensor y = PW::map(
      x, "cos",
      PW::Vectorized{[]<class T>(T v) { return std::cos(v); }, []<class T>(const auto& v) { return xt::cos(v); }});
  return record("cos", y, {x},
                [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) { return Grads{neg(g * sin(sx.get()))}; });
}

Tensor tan(const Tensor& x) {  // dx = g (1 + y^2)
  return unary_out(
      "tan", x, []<class T>(T v) { return std::tan(v); },
      [](const Tensor& g, const Tensor& y) { return g * (square(y) + 1.0); });
}
Tensor asin(const Tensor& x) {  // dx = g / sqrt(1 - x^2)
  return unary_in(
      "asin", x, []<class T>(T v) { return std::asin(v); },
      [](const Tensor& g, const Tensor& x) { return g * rsqrt(rsub(1.0, square(x))); });
}
Tensor acos(const Tensor& x) {  // dx = -g / sqrt(1 - x^2)
  return unary_in(
      "acos", x, []<class T>(T v) { return std::acos(v); },
      [](const Tensor& g, const Tensor& x) { return neg(g * rsqrt(rsub(1.0, square(x)))); });
}
Tensor atan(const Tensor& x) {  // dx = g / (1 + x^2)
  return unary_in(
      "atan", x, []<class T>(T v) { return std::atan(v); },
      [](const Tensor& g, const Tensor& x) { return g / (square(x) + 1.0); });
}
Tensor sinh(const Tensor& x) {  // dx = g cosh(x)
  return unary_in(
      "sinh", x, []<class T>(T v) { return std::sinh(v); },
      [](const Tensor& g, const Tensor& x) { return g * cosh(x); });
}
Tensor cosh(const Tensor& x) {  // dx = g sinh(x)
  return unary_in(
      "cosh", x, []<class T>(T v) { return std::cosh(v); },
      [](const Tensor& g, const Tensor& x) { return g * sinh(x); });
}
// std::tanh on every path: xt::tanh is a few ulps off, and tanh's gradient 1 - y^2
// magnifies that ~70x near |x| = 2.5 (PyTorch parity, tests/fixtures).
Tensor tanh(const Tensor& x) {  // dx = g (1 - y^2)
  Tensor y = PW::map(x, "tanh", []<class T>(T v) { return std::tanh(v); });
  return record("tanh", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * rsub(1.0, square(sy.get()))};
  });
}
Tensor asinh(const Tensor& x) {  // dx = g / sqrt(x^2 + 1)
  return unary_in(
      "asinh", x, []<class T>(T v) { return std::asinh(v); },
      [](const Tensor& g, const Tensor& x) { return g * rsqrt(square(x) + 1.0); });
}
Tensor acosh(const Tensor& x) {  // dx = g / sqrt(x^2 - 1)
  return unary_in(
      "acosh", x, []<class T>(T v) { return std::acosh(v); },
      [](const Tensor& g, const Tensor& x) { return g * rsqrt(square(x) - 1.0); });
}
Tensor atanh(const Tensor& x) {  // dx = g / (1 - x^2)
  return unary_in(
      "atanh", x, []<class T>(T v) { return std::atanh(v); },
      [](const Tensor& g, const Tensor& x) { return g / rsub(1.0, square(x)); });
}

// ---- special functions -----------------------------------------------------------------
// std::erf on every path: torch matches libm's erf; xt::erf is ~15 ulps off it (f64 up
// to 68, NaN for |x| > 1e4).
Tensor erf(const Tensor& x) {  // dx = g 2/sqrt(pi) exp(-x^2)
  Tensor y = PW::map(x, "erf", []<class T>(T v) { return std::erf(v); });
  return record("erf", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g * exp(neg(square(sx.get()))) * (2.0 / std::sqrt(std::numbers::pi))};
  });
}

// ---- rounding ---------------------------------------------------------------------
Tensor floor(const Tensor& x) {
  return rounding("floor", x, []<class T>(T v) { return std::floor(v); });
}
Tensor ceil(const Tensor& x) {
  return rounding("ceil", x, []<class T>(T v) { return std::ceil(v); });
}
Tensor trunc(const Tensor& x) {
  return rounding("trunc", x, []<class T>(T v) { return std::trunc(v); });
}
// nearbyint rounds half to even in the default rounding mode.
Tensor round(const Tensor& x) {
  return rounding("round", x, []<class T>(T v) { return std::nearbyint(v); });
}

// PyTorch's round_decimals kernel, in x's dtype: negative decimals divide first.
Tensor round(const Tensor& x, int64_t decimals) {
  const bool neg_flag = decimals < 0;
  const double ten_pow = std::pow(10.0, static_cast<double>(neg_flag ? -decimals : decimals));
  return rounding("round", x, [&]<class T>(T v) {
    const T p = static_cast<T>(ten_pow);
    return neg_flag ? std::nearbyint(v / p) * p : std::nearbyint(v * p) / p;
  });
}

Tensor frac(const Tensor& x) {  // dx = g
  check_float(x, "frac");
  Tensor y = PW::map(x, "frac", []<class T>(T v) { return v - std::trunc(v); });
  return record("frac", y, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

// ---- clamp -----------------------------------------------------------------------------
// dx = g where min <= x <= max. NaN inputs stay NaN (PyTorch).
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  AG_CHECK(lo || hi, ValueError, "clamp: at least one of min and max must be given (input shape ", x.shape(),
           ", dtype ", x.dtype(), ")");
  Tensor y = K::clamp(x, lo, hi);
  if (!x.is_floating_point()) return y;
  return record("clamp", y, {x}, [sx = save_if(wants_grad(x), x), lo, hi](const Tensor& g, NeedsGrad) {
    return Grads{g * K::in_range(sx.get(), lo, hi)};
  });
}

// PyTorch: both bounds -> NaN if a bound is NaN, else min(max(x, lo), hi); one bound ->
// maximum / minimum (NaN-propagating). The gradient goes where each is picked
// (clamp_backward_min_max): x where lo <= x <= hi, lo where x < lo < hi, hi where
// x > hi or hi < lo.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const bool has_lo = min && min->defined(), has_hi = max && max->defined();
  AG_CHECK(has_lo || has_hi, ValueError, "clamp: at least one of min or max must be given (input shape ", x.shape(),
           ")");
  const Tensor lo = has_lo ? *min : Tensor{}, hi = has_hi ? *max : Tensor{};
  const bool need = wants_grad(x) || wants_grad(lo) || wants_grad(hi);
  Tensor out, keep_x, to_lo, to_hi;  // out; bool masks over out's shape (when needed)
  if (has_lo && has_hi) {
    out = PW::zip3(x, lo, hi, "clamp", []<class T>(T v, T l, T h) {
      if (std::isnan(l) || std::isnan(h)) return std::numeric_limits<T>::quiet_NaN();
      return std::min(std::max(v, l), h);
    });
    if (!need) return out;
    keep_x = PW::zip3<bool>(x, lo, hi, "clamp", []<class T>(T v, T l, T h) { return v >= l && v <= h; });
    to_lo = PW::zip3<bool>(x, lo, hi, "clamp", []<class T>(T v, T l, T h) { return v < l && l < h; });
    to_hi = PW::zip3<bool>(x, lo, hi, "clamp", []<class T>(T v, T l, T h) { return v > h || h < l; });
  } else {
    const bool is_lo = has_lo;
    const Tensor& b = is_lo ? lo : hi;
    out = PW::zip(x, b, "clamp", [is_lo]<class T>(T v, T c) {
      if (std::isnan(v) || std::isnan(c)) return std::numeric_limits<T>::quiet_NaN();
      return is_lo ? std::max(v, c) : std::min(v, c);
    });
    if (!need) return out;
    keep_x = PW::zip<bool>(x, b, "clamp", [is_lo]<class T>(T v, T c) { return is_lo ? v >= c : v <= c; });
    Tensor to_b = PW::zip<bool>(x, b, "clamp", [is_lo]<class T>(T v, T c) { return is_lo ? v < c : v > c; });
    (is_lo ? to_lo : to_hi) = to_b;
  }
  Shape s0 = x.shape(), s1 = has_lo ? lo.shape() : Shape{}, s2 = has_hi ? hi.shape() : Shape{};
  return record(
      "clamp", out, {x, lo, hi},
      [kx = Saved(keep_x), kl = Saved(to_lo), kh = Saved(to_hi), s0, s1, s2](const Tensor& g, NeedsGrad need) {
        auto pick = [&](const Saved& m, const Shape& s) { return sum_to(where(m.get(), g, 0.0), s); };
        return Grads{need[0] ? pick(kx, s0) : Tensor{}, need[1] ? pick(kl, s1) : Tensor{},
                     need[2] ? pick(kh, s2) : Tensor{}};
      });
}

}  // namespace ag
