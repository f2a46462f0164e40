// Elementwise math beyond ops.h's core set. Forwards run PyTorch's scalar formulas
// (kernels/pointwise.h); each backward sits below its forward and is written with
// differentiable ops on g and the saved tensors, or with constant (piecewise) factors.
#include <cmath>
#include <numbers>

#include "attograd/ops/pointwise.h"
#include "attograd/ops/reduction.h"
#include "kernels/pointwise.h"
#include "op_util.h"

namespace ag {
namespace {
namespace PW = K::pw;

// y = f(x) recorded with dx = d(g, x) (x saved).
template <class F, class D>
Tensor unary_in(const char* name, const Tensor& x, F&& f, D d) {
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x}, [sx = save_if(wants_grad(x), x), d](const Tensor& g, NeedsGrad) {
    return Grads{d(g, sx.get())};
  });
}

// y = f(x) recorded with dx = d(g, y) (y saved).
template <class F, class D>
Tensor unary_out(const char* name, const Tensor& x, F&& f, D d) {
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x}, [sy = save_output_if(wants_grad(x), y), d](const Tensor& g, NeedsGrad) {
    return Grads{d(g, sy.get())};
  });
}

// Rounding ops: PyTorch's gradient is zeros (not undefined), so a graph passes through.
template <class F>
Tensor rounding(const char* name, const Tensor& x, F&& f) {
  Tensor y = PW::map(x, name, f);
  return record(name, y, {x}, [](const Tensor& g, NeedsGrad) { return Grads{zeros_like(g)}; });
}

Tensor scalar_like(const Tensor& x, double v) { return full(Shape{}, v, x.dtype()); }

// PyTorch's div(a, b, rounding_mode="floor") for floats: the floor of the exact quotient,
// from fmod (a / b alone rounds 0.3 / 0.1 up to 3).
template <class T>
T div_floor(T a, T b) {
  if (b == 0) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
  if (div == 0) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

}  // namespace

// ---- trigonometric and hyperbolic ----------------------------------------------
Tensor tan(const Tensor& x) {  // dx = g (1 + y^2)
  return unary_out("tan", x, []<class T>(T v) { return std::tan(v); },
                   [](const Tensor& g, const Tensor& y) { return g * (square(y) + 1.0); });
}
Tensor asin(const Tensor& x) {  // dx = g / sqrt(1 - x^2)
  return unary_in("asin", x, []<class T>(T v) { return std::asin(v); },
                  [](const Tensor& g, const Tensor& x) { return g * rsqrt(rsub(1.0, square(x))); });
}
Tensor acos(const Tensor& x) {  // dx = -g / sqrt(1 - x^2)
  return unary_in("acos", x, []<class T>(T v) { return std::acos(v); },
                  [](const Tensor& g, const Tensor& x) { return neg(g * rsqrt(rsub(1.0, square(x)))); });
}
Tensor atan(const Tensor& x) {  // dx = g / (1 + x^2)
  return unary_in("atan", x, []<class T>(T v) { return std::atan(v); },
                  [](const Tensor& g, const Tensor& x) { return g / (square(x) + 1.0); });
}
Tensor sinh(const Tensor& x) {  // dx = g cosh(x)
  return unary_in("sinh", x, []<class T>(T v) { return std::sinh(v); },
                  [](const Tensor& g, const Tensor& x) { return g * cosh(x); });
}
Tensor cosh(const Tensor& x) {  // dx = g sinh(x)
  return unary_in("cosh", x, []<class T>(T v) { return std::cosh(v); },
                  [](const Tensor& g, const Tensor& x) { return g * sinh(x); });
}
Tensor asinh(const Tensor& x) {  // dx = g / sqrt(x^2 + 1)
  return unary_in("asinh", x, []<class T>(T v) { return std::asinh(v); },
                  [](const Tensor& g, const Tensor& x) { return g * rsqrt(square(x) + 1.0); });
}
Tensor acosh(const Tensor& x) {  // dx = g / sqrt(x^2 - 1)
  return unary_in("acosh", x, []<class T>(T v) { return std::acosh(v); },
                  [](const Tensor& g, const Tensor& x) { return g * rsqrt(square(x) - 1.0); });
}
Tensor atanh(const Tensor& x) {  // dx = g / (1 - x^2)
  return unary_in("atanh", x, []<class T>(T v) { return std::atanh(v); },
                  [](const Tensor& g, const Tensor& x) { return g / rsub(1.0, square(x)); });
}

// ---- logarithms and exponentials -------------------------------------------------
Tensor log2(const Tensor& x) {  // dx = g / (x ln 2)
  return unary_in("log2", x, []<class T>(T v) { return std::log2(v); },
                  [](const Tensor& g, const Tensor& x) { return g / (x * std::numbers::ln2); });
}
Tensor log10(const Tensor& x) {  // dx = g / (x ln 10)
  return unary_in("log10", x, []<class T>(T v) { return std::log10(v); },
                  [](const Tensor& g, const Tensor& x) { return g / (x * std::numbers::ln10); });
}
Tensor log1p(const Tensor& x) {  // dx = g / (x + 1)
  return unary_in("log1p", x, []<class T>(T v) { return std::log1p(v); },
                  [](const Tensor& g, const Tensor& x) { return g / (x + 1.0); });
}
Tensor expm1(const Tensor& x) {  // dx = g (y + 1)
  return unary_out("expm1", x, []<class T>(T v) { return std::expm1(v); },
                   [](const Tensor& g, const Tensor& y) { return g * (y + 1.0); });
}
Tensor exp2(const Tensor& x) {  // dx = g y ln 2
  return unary_out("exp2", x, []<class T>(T v) { return std::exp2(v); },
                   [](const Tensor& g, const Tensor& y) { return g * y * std::numbers::ln2; });
}

// ---- rounding ---------------------------------------------------------------------
Tensor floor(const Tensor& x) { return rounding("floor", x, []<class T>(T v) { return std::floor(v); }); }
Tensor ceil(const Tensor& x) { return rounding("ceil", x, []<class T>(T v) { return std::ceil(v); }); }
Tensor trunc(const Tensor& x) { return rounding("trunc", x, []<class T>(T v) { return std::trunc(v); }); }
// nearbyint rounds half to even in the default rounding mode.
Tensor round(const Tensor& x) { return rounding("round", x, []<class T>(T v) { return std::nearbyint(v); }); }

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
  Tensor y = PW::map(x, "frac", []<class T>(T v) { return v - std::trunc(v); });
  return record("frac", y, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

// ---- predicates ---------------------------------------------------------------------
Tensor isinf(const Tensor& x) {
  if (!x.is_floating_point()) return full(x.shape(), 0.0, DType::b8);
  return PW::map_bool(x, "isinf", []<class T>(T v) { return std::isinf(v); });
}
Tensor isnan(const Tensor& x) {
  if (!x.is_floating_point()) return full(x.shape(), 0.0, DType::b8);
  return PW::map_bool(x, "isnan", []<class T>(T v) { return std::isnan(v); });
}

// ---- binary -------------------------------------------------------------------------
// out = atan2(a, b).   da = g b / (a^2 + b^2)   db = -g a / (a^2 + b^2)
Tensor atan2(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "atan2", []<class T>(T x, T y) { return std::atan2(x, y); });
  bool need = wants_grad(a) || wants_grad(b);
  return record("atan2", out, {a, b},
                [sa = save_if(need, a), sb = save_if(need, b), as = a.shape(), bs = b.shape()](
                    const Tensor& g, NeedsGrad need) {
                  const Tensor &a = sa.get(), &b = sb.get();
                  Tensor r = g / (square(a) + square(b));
                  return Grads{need[0] ? sum_to(r * b, as) : Tensor{},
                               need[1] ? sum_to(neg(r * a), bs) : Tensor{}};
                });
}

// out = |a| with b's sign.   da = g * (a == 0 ? 0 : out / a)   db = 0 (PyTorch's zeros)
Tensor copysign(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "copysign", []<class T>(T x, T y) { return std::copysign(x, y); });
  // The factor is +-1 (or 0, NaN) and piecewise constant: computed here, no graph.
  Tensor factor = wants_grad(a) ? PW::zip(a, out, "copysign", []<class T>(T x, T r) { return x == 0 ? T(0) : r / x; })
                                : Tensor{};
  return record("copysign", out, {a, b},
                [sf = Saved(factor), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g * sf.get(), as) : Tensor{},
                               need[1] ? zeros(bs, g.dtype()) : Tensor{}};
                });
}

// PyTorch 1.13's form: equal infinities give themselves, else max + log(1 + exp(-|a - b|))
// (log, not log1p: logaddexp(0, -20) is 0 in f32, as in PyTorch).
// da = g / (1 + exp(b - a)) = g sigmoid(a - b)   db = g sigmoid(b - a)
// (sigmoid keeps the second derivative finite where exp(b - a) overflows)
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "logaddexp", []<class T>(T x, T y) {
    if (std::isinf(x) && x == y) return x;
    T m = std::max(x, y);
    return m + std::log(T(1) + std::exp(-std::abs(x - y)));
  });
  bool need = wants_grad(a) || wants_grad(b);
  return record("logaddexp", out, {a, b},
                [sa = save_if(need, a), sb = save_if(need, b), as = a.shape(), bs = b.shape()](
                    const Tensor& g, NeedsGrad need) {
                  const Tensor &a = sa.get(), &b = sb.get();
                  return Grads{need[0] ? sum_to(g * sigmoid(a - b), as) : Tensor{},
                               need[1] ? sum_to(g * sigmoid(b - a), bs) : Tensor{}};
                });
}

// PyTorch 1.13's lerp: w < 0.5 ? start + w (end - start) : end - (end - start) (1 - w).
// dstart = g (1 - w)   dend = g w   dw = g (end - start)
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  Tensor out = PW::zip3(start, end, weight, "lerp", []<class T>(T s, T e, T w) {
    return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
  });
  bool nw = wants_grad(start) || wants_grad(end), nd = wants_grad(weight);
  return record("lerp", out, {start, end, weight},
                [sw = save_if(nw, weight), ss = save_if(nd, start), se = save_if(nd, end),
                 s0 = start.shape(), s1 = end.shape(), s2 = weight.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g * rsub(1.0, sw.get()), s0) : Tensor{},
                               need[1] ? sum_to(g * sw.get(), s1) : Tensor{},
                               need[2] ? sum_to(g * (se.get() - ss.get()), s2) : Tensor{}};
                });
}
Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  return lerp(start, end, scalar_like(start, weight));
}

// fmod: a - trunc(a / b) b.   da = g   db = -g trunc(a / b)
Tensor fmod(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "fmod", []<class T>(T x, T y) { return std::fmod(x, y); });
  bool need = wants_grad(b);
  Tensor q = need ? PW::zip(a, b, "fmod", []<class T>(T x, T y) { return std::trunc(x / y); }) : Tensor{};
  return record("fmod", out, {a, b}, [sq = Saved(q), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? sum_to(g, as) : Tensor{}, need[1] ? sum_to(neg(g * sq.get()), bs) : Tensor{}};
  });
}
Tensor fmod(const Tensor& a, double b) { return fmod(a, scalar_like(a, b)); }

// remainder: a - floor(a / b) b (PyTorch's: fmod, then + b when the signs differ).
// da = g   db = -g floor_divide(a, b)
Tensor remainder(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "remainder", []<class T>(T x, T y) {
    T mod = std::fmod(x, y);
    if (mod != 0 && (y < 0) != (mod < 0)) mod += y;
    return mod;
  });
  bool need = wants_grad(b);
  Tensor q = need ? PW::zip(a, b, "remainder", []<class T>(T x, T y) { return div_floor(x, y); }) : Tensor{};
  return record("remainder", out, {a, b},
                [sq = Saved(q), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g, as) : Tensor{},
                               need[1] ? sum_to(neg(g * sq.get()), bs) : Tensor{}};
                });
}
Tensor remainder(const Tensor& a, double b) { return remainder(a, scalar_like(a, b)); }

// ---- clamp with tensor bounds ---------------------------------------------------------
// PyTorch: both bounds -> NaN if a bound is NaN, else min(max(x, lo), hi); one bound ->
// maximum / minimum (NaN-propagating). The gradient goes where each is picked
// (clamp_backward_min_max): x where lo <= x <= hi, lo where x < lo < hi, hi where
// x > hi or hi < lo.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const bool has_lo = min && min->defined(), has_hi = max && max->defined();
  AG_CHECK(has_lo || has_hi, ValueError, "clamp: at least one of min or max must be given (input shape ",
           x.shape(), ")");
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
  return record("clamp", out, {x, lo, hi},
                [kx = Saved(keep_x), kl = Saved(to_lo), kh = Saved(to_hi), s0, s1, s2](const Tensor& g,
                                                                                        NeedsGrad need) {
                  auto pick = [&](const Saved& m, const Shape& s) { return sum_to(where(m.get(), g, 0.0), s); };
                  return Grads{need[0] ? pick(kx, s0) : Tensor{}, need[1] ? pick(kl, s1) : Tensor{},
                               need[2] ? pick(kh, s2) : Tensor{}};
                });
}

// ---- isclose / allclose ---------------------------------------------------------------
// PyTorch's isclose, in the inputs' dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  AG_CHECK(rtol >= 0, ValueError, "isclose: rtol must be greater than or equal to zero, but got ", rtol);
  AG_CHECK(atol >= 0, ValueError, "isclose: atol must be greater than or equal to zero, but got ", atol);
  return PW::zip<bool>(a, b, "isclose", [&]<class T>(T x, T y) {
    if (x == y) return true;
    if (equal_nan && std::isnan(x) && std::isnan(y)) return true;
    T err = std::abs(x - y);
    return std::isfinite(err) && err <= static_cast<T>(atol) + std::abs(static_cast<T>(rtol) * y);
  });
}

// torch.allclose: isclose everywhere, with broadcasting (ShapeError when the shapes do
// not broadcast). Unlike PyTorch, mixed or non-float dtypes compare in f64.
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  NoGradGuard no_grad;
  if (a.dtype() == b.dtype() && a.is_floating_point()) return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
  return all(isclose(a.to(DType::f64), b.to(DType::f64), rtol, atol, equal_nan)).item<bool>();
}

}  // namespace ag
