// Elementwise ops. Each forward calls a kernel; its backward sits right below it.
// Broadcasting is undone by sum_to. Mixed dtypes are first converted to their
// result_type by promote_pair (differentiable), then the same-dtype op runs.
#include <cmath>
#include <numbers>

#include "op_util.h"

namespace ag {

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
  return record("mul", out, {a, b},
                [sa, sb, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  return Grads{need[0] ? sum_to(g * sb.get(), as) : Tensor{},
                               need[1] ? sum_to(g * sa.get(), bs) : Tensor{}};
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
  return record("div", out, {a, b},
                [sa, sb, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
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
  return record("pow", out, {a, b},
                [sa, sb, so, as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
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
  Tensor out = K::pow_scalar(x, e);
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
                [st = Saved(tie), sa = Saved(a_loses), sb = Saved(b_loses), as = a.shape(),
                 bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  Tensor shared = where(st.get(), g * 0.5, g);
                  return Grads{need[0] ? sum_to(where(sa.get(), 0.0, shared), as) : Tensor{},
                               need[1] ? sum_to(where(sb.get(), 0.0, shared), bs) : Tensor{}};
                });
}
Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

// ---- scalar forms: the scalar becomes a 0-d tensor of result_type(x, v) ------
// (x * 0.5 for an i64 x is f32; x * 2 for an i32 x stays i32.)
static Tensor scalar_like(const Tensor& x, Scalar v) { return full(Shape{}, v, result_type(x, v)); }
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

// ---- unary ----------------------------------------------------------------
// Each saves what its derivative needs: its input x or its output y.

Tensor neg(const Tensor& x) {  // dx = -g
  Tensor out = K::unary(K::Unary::neg, x);
  return record("neg", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{neg(g)}; });
}

Tensor exp(const Tensor& x) {  // dx = g * y
  Tensor y = K::unary(K::Unary::exp, x);
  return record("exp", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * sy.get()};
  });
}

Tensor log(const Tensor& x) {  // dx = g / x
  Tensor y = K::unary(K::Unary::log, x);
  return record("log", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g / sx.get()};
  });
}

Tensor sqrt(const Tensor& x) {  // dx = g / (2 y)
  Tensor y = K::unary(K::Unary::sqrt, x);
  return record("sqrt", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * 0.5 / sy.get()};
  });
}

Tensor rsqrt(const Tensor& x) {  // dx = -g y^3 / 2
  Tensor y = K::unary(K::Unary::rsqrt, x);
  return record("rsqrt", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    const Tensor& y = sy.get();
    return Grads{g * (y * y * y) * -0.5};
  });
}

Tensor abs(const Tensor& x) {  // dx = g * sign(x)
  Tensor y = K::unary(K::Unary::abs, x);
  return record("abs", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g * sign(sx.get())};
  });
}

Tensor sign(const Tensor& x) { return K::unary(K::Unary::sign, x); }  // zero gradient

Tensor tanh(const Tensor& x) {  // dx = g (1 - y^2)
  Tensor y = K::unary(K::Unary::tanh, x);
  return record("tanh", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * rsub(1.0, square(sy.get()))};
  });
}

Tensor sigmoid(const Tensor& x) {  // dx = g y (1 - y)
  Tensor y = K::unary(K::Unary::sigmoid, x);
  return record("sigmoid", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    const Tensor& y = sy.get();
    return Grads{g * y * rsub(1.0, y)};
  });
}

Tensor relu(const Tensor& x) {  // dx = g where y > 0
  Tensor y = K::unary(K::Unary::relu, x);
  return record("relu", y, {x}, [sy = save_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    return Grads{g * K::unary(K::Unary::step, sy.get())};
  });
}

Tensor erf(const Tensor& x) {  // dx = g 2/sqrt(pi) exp(-x^2)
  Tensor y = K::unary(K::Unary::erf, x);
  return record("erf", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g * exp(neg(square(sx.get()))) * (2.0 / std::sqrt(std::numbers::pi))};
  });
}

Tensor sin(const Tensor& x) {  // dx = g cos(x)
  Tensor y = K::unary(K::Unary::sin, x);
  return record("sin", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g * cos(sx.get())};
  });
}

Tensor cos(const Tensor& x) {  // dx = -g sin(x)
  Tensor y = K::unary(K::Unary::cos, x);
  return record("cos", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{neg(g * sin(sx.get()))};
  });
}

Tensor square(const Tensor& x) {  // dx = 2 g x
  Tensor y = K::unary(K::Unary::square, x);
  return record("square", y, {x}, [sx = save_if(wants_grad(x), x)](const Tensor& g, NeedsGrad) {
    return Grads{g * sx.get() * 2.0};
  });
}

// y = 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in one fused pass (kernels/gelu.cpp).
// Its gradient is the op gelu_backward with PyTorch's own formulas, so gradients match
// torch's to a few ulps where the composite's chain rule drifts (e.g. exp(-x^2/2)
// against erf's derivative at x = -20):
//   none:  dx = g (cdf + x pdf),  cdf = 0.5 (1 + erf(x / sqrt 2)),  pdf = exp(-x^2/2) / sqrt(2 pi)
//   tanh:  dx = g (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)),  t = tanh(k (x + c x^3))
Tensor gelu(const Tensor& x, GeluApprox approximate) {
  check_float(x, "gelu");
  Tensor y = K::gelu(x, approximate == GeluApprox::tanh);
  return record("gelu", y, {x}, [sx = save_if(wants_grad(x), x), approximate](const Tensor& g, NeedsGrad) {
    return Grads{gelu_backward(g, sx.get(), approximate)};
  });
}

// dx = g f''(x) for dy = g f'(x), written with differentiable ops (so backward goes on):
//   none:  f'' = pdf (2 - x^2)
//   tanh:  f'' = s (u' - x t u'^2 + 3 k c x^2),  u = k (x + c x^3), u' = k (1 + 3 c x^2),
//          t = tanh(u), s = 1 - t^2
// and d(dy)/dg = f'(x), which is gelu_backward again.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& x, GeluApprox approximate) {
  check_float(x, "gelu_backward");
  AG_CHECK(grad_output.shape() == x.shape() && grad_output.dtype() == x.dtype(), ShapeError,
           "gelu_backward: grad_output ", grad_output.shape(), " ", grad_output.dtype(), " must match input ",
           x.shape(), " ", x.dtype());
  const bool tanh_form = approximate == GeluApprox::tanh;
  Tensor dx = K::gelu_backward(grad_output, x, tanh_form);
  return record("gelu_backward", dx, {grad_output, x},
                [sg = save_if(wants_grad(x), grad_output), sx = Saved(x), approximate, tanh_form](const Tensor& gg,
                                                                                                  NeedsGrad need) {
                  const Tensor x = sx.get();
                  Tensor d_g = need[0] ? gelu_backward(gg, x, approximate) : Tensor{};
                  if (!need[1]) return Grads{d_g, Tensor{}};
                  const double k = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, c = 0.044715;
                  Tensor x_sq = x * x, f2;
                  if (tanh_form) {
                    Tensor du = (1.0 + x_sq * (3.0 * c)) * k;
                    Tensor t = tanh((x + x_sq * x * c) * k);
                    f2 = (1.0 - t * t) * (du - x * t * du * du + x_sq * (3.0 * k * c));
                  } else {
                    f2 = exp(x_sq * -0.5) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2) * (2.0 - x_sq);
                  }
                  return Grads{d_g, gg * sg.get() * f2};
                });
}

// dx = g where min <= x <= max. NaN inputs stay NaN (PyTorch).
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  AG_CHECK(lo || hi, ValueError, "clamp: at least one of min and max must be given (input shape ",
           x.shape(), ", dtype ", x.dtype(), ")");
  Tensor y = K::clamp(x, lo, hi);
  if (!x.is_floating_point()) return y;
  return record("clamp", y, {x}, [sx = save_if(wants_grad(x), x), lo, hi](const Tensor& g, NeedsGrad) {
    return Grads{g * K::in_range(sx.get(), lo, hi)};
  });
}

// ---- where / masked_fill ----------------------------------------------------
// out = cond ? a : b.   da = sum_to(g where cond)   db = sum_to(g where !cond)
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    auto [x, y] = promote_pair(a, b);
    return where(cond, x, y);
  }
  Tensor out = K::where(cond, a, b);
  return record("where", out, {cond, a, b},
                [sc = Saved(cond), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  const Tensor c = sc.get();
                  Tensor zero = zeros(Shape{}, g.dtype());
                  return Grads{Tensor{}, need[1] ? sum_to(where(c, g, zero), as) : Tensor{},
                               need[2] ? sum_to(where(c, zero, g), bs) : Tensor{}};
                });
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) { return where(cond, a, scalar_like(a, b)); }
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) { return where(cond, scalar_like(b, a), b); }
// Both branches scalars: their own promoted dtype (torch.where(c, 1.0, 0.0) is the default
// float dtype, two integers give i64).
Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  const DType t = promote_types(a.dtype(), b.dtype());
  return where(cond, full(Shape{}, a, t), full(Shape{}, b, t));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  AG_CHECK(mask.dtype() == DType::b8, DTypeError, "masked_fill: mask must be bool, got ", mask.dtype(),
           " (shape ", mask.shape(), ")");
  AG_CHECK(broadcast_shapes(mask.shape(), x.shape(), "masked_fill") == x.shape(), ShapeError,
           "masked_fill: mask shape ", mask.shape(), " cannot be broadcast to input shape ", x.shape());
  return where(mask, full(Shape{}, value, x.dtype()), x);
}

// ---- comparisons and logic: no gradient -------------------------------------
// Compared in the promoted dtype (detached: a comparison records nothing).
static Tensor promoted_compare(K::Compare op, const Tensor& a, const Tensor& b, const char* name) {
  if (a.dtype() == b.dtype()) return K::compare(op, a, b, name);
  auto [x, y] = promote_pair(a.detach(), b.detach());
  return K::compare(op, x, y, name);
}
Tensor eq(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::eq, a, b, "eq"); }
Tensor ne(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::ne, a, b, "ne"); }
Tensor lt(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::lt, a, b, "lt"); }
Tensor le(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::le, a, b, "le"); }
Tensor gt(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::gt, a, b, "gt"); }
Tensor ge(const Tensor& a, const Tensor& b) { return promoted_compare(K::Compare::ge, a, b, "ge"); }
Tensor eq(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::eq, a, scalar_like(a, b), "eq"); }
Tensor ne(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::ne, a, scalar_like(a, b), "ne"); }
Tensor lt(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::lt, a, scalar_like(a, b), "lt"); }
Tensor le(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::le, a, scalar_like(a, b), "le"); }
Tensor gt(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::gt, a, scalar_like(a, b), "gt"); }
Tensor ge(const Tensor& a, Scalar b) { return promoted_compare(K::Compare::ge, a, scalar_like(a, b), "ge"); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return K::logical(K::Logic::and_, a, b, "logical_and"); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return K::logical(K::Logic::or_, a, b, "logical_or"); }
Tensor logical_not(const Tensor& a) { return K::logical_not(a); }
Tensor isfinite(const Tensor& a) { return K::isfinite(a); }

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
Tensor operator!(const Tensor& mask) { return logical_not(mask); }

}  // namespace ag
