// Elementwise ops of two (or three) tensors: arithmetic with broadcasting and PyTorch's
// type promotion, its operators, and the math functions atan2, copysign, logaddexp,
// lerp, fmod and remainder. Each forward calls a kernel; its backward sits right below
// it. Broadcasting is undone by sum_to. Arithmetic converts mixed dtypes to their
// result_type by promote_pair (differentiable), then the same-dtype op runs; the math
// functions run PyTorch's scalar formulas (kernels/pointwise.h) on operands of one dtype.
#include "attograd/ops/binary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "kernels/pointwise.h"
#include "op_util.h"

namespace ag {
namespace {
namespace PW = K::pw;

// A 0-d tensor holding v in x's dtype (the math functions' scalar operands).
Tensor scalar_in_dtype(const Tensor& x, double v) { return full(Shape{}, v, x.dtype()); }

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

// x^e's values as torch computes them: 2 squares, 0.5 and -0.5 are sqrt and rsqrt (so
// pow(-inf, 0.5) is NaN and pow(-0, -0.5) is -inf), the rest std::pow on every path:
// xsimd's pow disagrees with std::pow on special values (0^-1 = 0, 0^0 = 0, (-inf)^0.3 =
// NaN in its vector body), and in double, with the exponent as given (f32's rounded 0.3
// is 7 ulps off at 1e30). x * x is std::pow(x, 2) bit for bit (checked over every float
// and 1e8 random doubles). x is detached: pow records its own backward.
Tensor pow_values(const Tensor& x, double e) {
  if (e == 2.0) return square(x);
  if (e == 0.5) return sqrt(x);
  if (e == -0.5) return rsqrt(x);
  return PW::map(x, "pow", [e]<class T>(T v) { return static_cast<T>(std::pow(static_cast<double>(v), e)); });
}

}  // namespace

// ---- add / sub ----------------------------------------------------------
// out = a + b.   da = sum_to(g, a.shape)   db = sum_to(g, b.shape)
Tensor add(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return add(x, y);
  }
  if (a.dtype() == DType::b8) return logical_or(a, b);  // PyTorch: bool + bool is bool
  Tensor out = K::binary(K::Binary::add, a, b, "add");
  return record("add", out, {a, b}, [as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? sum_to(g, as) : Tensor{}, need[1] ? sum_to(g, bs) : Tensor{}};
  });
}

// out = a - b.   da = sum_to(g)   db = -sum_to(g)
Tensor sub(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return sub(x, y);
  }
  Tensor out = K::binary(K::Binary::sub, a, b, "sub");
  return record("sub", out, {a, b}, [as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? sum_to(g, as) : Tensor{}, need[1] ? neg(sum_to(g, bs)) : Tensor{}};
  });
}

// ---- mul / div ----------------------------------------------------------
// out = a * b.   da = sum_to(g * b)   db = sum_to(g * a)
Tensor mul(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return mul(x, y);
  }
  if (a.dtype() == DType::b8) return logical_and(a, b);  // PyTorch: bool * bool is bool
  Tensor out = K::binary(K::Binary::mul, a, b, "mul");
  Saved sa = save_if(wants_grad(b), a), sb = save_if(wants_grad(a), b);
  return record("mul", out, {a, b}, [sa, sb, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? sum_to(g * sb.get(), as) : Tensor{}, need[1] ? sum_to(g * sa.get(), bs) : Tensor{}};
  });
}

// out = a / b.   da = sum_to(g / b)   db = -sum_to(g * a / b^2)
// True division: integer and bool operands divide in the default float dtype.
Tensor div(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !a.is_floating_point()) {
    auto [x, y] = promote_pair(a, b, /*int_to_float=*/true);
    return div(x, y);
  }
  Tensor out = K::binary(K::Binary::div, a, b, "div");
  Saved sa = save_if(wants_grad(b), a), sb = save_if(wants_grad(a) || wants_grad(b), b);
  return record("div", out, {a, b}, [sa, sb, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    const Tensor& b = sb.get();
    return Grads{need[0] ? sum_to(g / b, as) : Tensor{},
                 need[1] ? neg(sum_to(g * sa.get() / square(b), bs)) : Tensor{}};
  });
}

// ---- pow ----------------------------------------------------------------
// out = a^b. PyTorch's formulas (FunctionsManual.cpp), which fix the gradient at a = 0:
//   da = sum_to(where(b == 0, 0, g * (b * a^(b-1))))                 (pow_backward_self)
//   db = sum_to(g * where((a == 0) & (b >= 0), 0, out * log(a)))     (pow_backward_exponent)
// Built from differentiable ops only, so the closure can itself be differentiated.
Tensor pow(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return pow(x, y);
  }
  check_float(a, "pow");
  Tensor out = K::binary(K::Binary::pow, a, b, "pow");
  bool need_any = wants_grad(a) || wants_grad(b);
  Saved sa = save_if(need_any, a), sb = save_if(need_any, b), so = save_output_if(wants_grad(b), out);
  return record("pow", out, {a, b}, [sa, sb, so, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    const Tensor &a = sa.get(), &b = sb.get();
    Grads grads(2);
    if (need[0]) grads[0] = sum_to(where(eq(b, 0.0), 0.0, g * (b * pow(a, b - 1.0))), as);
    if (need[1]) {
      Tensor skip = logical_and(eq(a, 0.0), ge(b, 0.0));  // 0^b for b >= 0: log(0) unused
      grads[1] = sum_to(g * where(skip, 0.0, so.get() * log(a)), bs);
    }
    return grads;
  });
}

// out = x^e.   dx = e == 0 ? 0 : g * (e * x^(e-1))   (PyTorch's pow_backward)
// i64 tensor ** 2.0 is f32 (promoted); integer tensor ** integer stays integral (unsupported).
Tensor pow(const Tensor& x, Scalar exponent) {
  if (DType t = result_type(x, exponent); t != x.dtype()) return pow(x.to(t), exponent);
  const double e = exponent.to_double();
  check_float(x, "pow");
  Tensor out = pow_values(x.detach(), e);
  return record("pow", out, {x}, [sx = save_if(wants_grad(x), x), e](const Tensor& g, NeedsGrad) {
    if (e == 0.0) return Grads{zeros_like(g)};
    return Grads{g * (pow(sx.get(), e - 1.0) * e)};
  });
}

// ---- maximum / minimum: ties split the gradient --------------------------
// PyTorch's rule, for maximum:  da = sum_to(where(a == b, g/2, g) masked to 0 where a < b)
//                               db = sum_to(where(a == b, g/2, g) masked to 0 where b < a)
// (minimum: the masks flip). A NaN pair compares neither equal nor less, so both sides
// get the whole g.
static Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return extremum(x, y, is_max);
  }
  if (a.dtype() == DType::b8) return is_max ? logical_or(a, b) : logical_and(a, b);
  const char* name = is_max ? "maximum" : "minimum";
  Tensor out = K::binary(is_max ? K::Binary::maximum : K::Binary::minimum, a, b, name);
  bool need = wants_grad(a) || wants_grad(b);
  Tensor tie, a_loses, b_loses;  // bool masks over the broadcast shape
  if (need) {
    tie = K::compare(K::Compare::eq, a, b, name);
    a_loses = K::compare(is_max ? K::Compare::lt : K::Compare::gt, a, b, name);
    b_loses = K::compare(is_max ? K::Compare::gt : K::Compare::lt, a, b, name);
  }
  return record(name, out, {a, b},
                [st = Saved(tie), sa = Saved(a_loses), sb = Saved(b_loses), as = a.shape(), bs = b.shape()](
                    const Tensor& g, NeedsGrad need) {
                  Tensor shared = where(st.get(), g * 0.5, g);
                  return Grads{need[0] ? sum_to(where(sa.get(), 0.0, shared), as) : Tensor{},
                               need[1] ? sum_to(where(sb.get(), 0.0, shared), bs) : Tensor{}};
                });
}
Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

// ---- scalar forms: the scalar becomes a 0-d tensor of result_type(x, v) ------
// (x * 0.5 for an i64 x is f32; x * 2 for an i32 x stays i32.)
Tensor add(const Tensor& a, Scalar b) { return add(a, scalar_like(a, b)); }
Tensor sub(const Tensor& a, Scalar b) { return sub(a, scalar_like(a, b)); }
Tensor mul(const Tensor& a, Scalar b) { return mul(a, scalar_like(a, b)); }
Tensor div(const Tensor& a, Scalar b) { return div(a, scalar_like(a, b)); }
Tensor rsub(Scalar a, const Tensor& b) { return sub(scalar_like(b, a), b); }
Tensor rdiv(Scalar a, const Tensor& b) { return div(scalar_like(b, a), b); }

// floor(a / b) rounding toward -inf (PyTorch 1.13); no gradient, like PyTorch's.
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a.detach(), b.detach());
    return floor_divide(x, y);
  }
  return K::binary(K::Binary::floor_div, a, b, "floor_divide");
}
Tensor floor_divide(const Tensor& a, Scalar b) { return floor_divide(a, scalar_like(a, b)); }

// torch.div with rounding_mode: "trunc" is trunc(a / b) (PyTorch's div_trunc kernel),
// "floor" is floor_divide's floor(a / b); mixed dtypes promote without the true division's
// int -> float. Float results record a zero gradient (derivatives.yaml: a rounded quotient
// is piecewise constant), so a graph through them backpropagates as PyTorch's does.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  const bool trunc = *rounding_mode == "trunc";
  AG_CHECK(trunc || *rounding_mode == "floor", ValueError,
           "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode, "'");
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return div(x, y, rounding_mode);
  }
  Tensor out = K::binary(trunc ? K::Binary::trunc_div : K::Binary::floor_div, a, b, "div");
  if (!out.is_floating_point()) return out;
  return record("div", out, {a, b}, [as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? zeros(as, g.dtype()) : Tensor{}, need[1] ? zeros(bs, g.dtype()) : Tensor{}};
  });
}
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> rounding_mode) {
  return div(a, scalar_like(a, b), rounding_mode);
}

// ---- operators ----------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
Tensor operator-(Scalar a, const Tensor& b) { return rsub(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
Tensor operator/(Scalar a, const Tensor& b) { return rdiv(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }

// ---- math functions: f32 or f64 operands of one dtype ------------------------------
// out = atan2(a, b).   da = g b / (a^2 + b^2)   db = -g a / (a^2 + b^2)
Tensor atan2(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "atan2", []<class T>(T x, T y) { return std::atan2(x, y); });
  bool need = wants_grad(a) || wants_grad(b);
  return record(
      "atan2", out, {a, b},
      [sa = save_if(need, a), sb = save_if(need, b), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
        const Tensor &a = sa.get(), &b = sb.get();
        Tensor r = g / (square(a) + square(b));
        return Grads{need[0] ? sum_to(r * b, as) : Tensor{}, need[1] ? sum_to(neg(r * a), bs) : Tensor{}};
      });
}

// out = |a| with b's sign.   da = g * (a == 0 ? 0 : out / a)   db = 0 (PyTorch's zeros)
Tensor copysign(const Tensor& a, const Tensor& b) {
  Tensor out = PW::zip(a, b, "copysign", []<class T>(T x, T y) { return std::copysign(x, y); });
  // The factor is +-1 (or 0, NaN) and piecewise constant: computed here, no graph.
  Tensor factor =
      wants_grad(a) ? PW::zip(a, out, "copysign", []<class T>(T x, T r) { return x == 0 ? T(0) : r / x; }) : Tensor{};
  return record(
      "copysign", out, {a, b}, [sf = Saved(factor), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
        return Grads{need[0] ? sum_to(g * sf.get(), as) : Tensor{}, need[1] ? zeros(bs, g.dtype()) : Tensor{}};
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
  return record(
      "logaddexp", out, {a, b},
      [sa = save_if(need, a), sb = save_if(need, b), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
        const Tensor &a = sa.get(), &b = sb.get();
        return Grads{need[0] ? sum_to(g * sigmoid(a - b), as) : Tensor{},
                     need[1] ? sum_to(g * sigmoid(b - a), bs) : Tensor{}};
      });
}

// PyTorch 1.13's lerp: w < 0.5 ? start + w (end - start) : end - (end - start) (1 - w).
// dstart = g (1 - w)   dend = g w   dw = g (end - start)
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  Tensor out = PW::zip3(start, end, weight, "lerp",
                        []<class T>(T s, T e, T w) { return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w); });
  bool nw = wants_grad(start) || wants_grad(end), nd = wants_grad(weight);
  return record("lerp", out, {start, end, weight},
                [sw = save_if(nw, weight), ss = save_if(nd, start), se = save_if(nd, end), s0 = start.shape(),
                 s1 = end.shape(), s2 = weight.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g * rsub(1.0, sw.get()), s0) : Tensor{},
                               need[1] ? sum_to(g * sw.get(), s1) : Tensor{},
                               need[2] ? sum_to(g * (se.get() - ss.get()), s2) : Tensor{}};
                });
}
Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  return lerp(start, end, scalar_in_dtype(start, weight));
}

// fmod: a - trunc(a / b) b.   da = g   db = -g trunc(a / b)
// Mixed dtypes promote as the arithmetic ops do; integers give integers (no gradient,
// an integer divisor of 0 throws as integer division does).
Tensor fmod(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return fmod(x, y);
  }
  if (!a.is_floating_point()) return K::binary(K::Binary::fmod, a, b, "fmod");
  Tensor out = PW::zip(a, b, "fmod", []<class T>(T x, T y) { return std::fmod(x, y); });
  bool need = wants_grad(b);
  Tensor q = need ? PW::zip(a, b, "fmod", []<class T>(T x, T y) { return std::trunc(x / y); }) : Tensor{};
  return record("fmod", out, {a, b}, [sq = Saved(q), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? sum_to(g, as) : Tensor{}, need[1] ? sum_to(neg(g * sq.get()), bs) : Tensor{}};
  });
}
Tensor fmod(const Tensor& a, Scalar b) { return fmod(a, scalar_like(a, b)); }

// remainder: a - floor(a / b) b (PyTorch's: fmod, then + b when the signs differ).
// da = g   db = -g floor_divide(a, b)
// Mixed dtypes promote, integers stay integral, as for fmod.
Tensor remainder(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return remainder(x, y);
  }
  if (!a.is_floating_point()) return K::binary(K::Binary::remainder, a, b, "remainder");
  Tensor out = PW::zip(a, b, "remainder", []<class T>(T x, T y) {
    T mod = std::fmod(x, y);
    if (mod != 0 && (y < 0) != (mod < 0)) mod += y;
    return mod;
  });
  bool need = wants_grad(b);
  Tensor q = need ? PW::zip(a, b, "remainder", []<class T>(T x, T y) { return div_floor(x, y); }) : Tensor{};
  return record("remainder", out, {a, b},
                [sq = Saved(q), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g, as) : Tensor{}, need[1] ? sum_to(neg(g * sq.get()), bs) : Tensor{}};
                });
}
Tensor remainder(const Tensor& a, Scalar b) { return remainder(a, scalar_like(a, b)); }

}  // namespace ag
