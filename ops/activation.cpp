// Activation functions. Forwards run PyTorch 1.13's scalar formulas (so 0, -0, +-inf
// and NaN come out as in PyTorch) through PW::map (kernels/pointwise.h), relu and sigmoid
// with a vector form too, and GELU in its fused kernel (kernels/gelu.cpp). Backwards are
// PyTorch's derivative formulas written with differentiable ops on g and the saved input,
// or with constant piecewise factors (the kinks follow PyTorch: leaky_relu's slope at 0,
// hardtanh's zero at its bounds).
#include "attograd/ops/activation.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/pointwise.h"
#include "op_util.h"

namespace ag {
namespace {
namespace PW = K::pw;

// Records y with dx = d(g, x) (x saved).
template <class D>
Tensor with_input(const char* name, Tensor y, const Tensor& x, D d) {
  return record(name, std::move(y), {x},
                [sx = save_if(wants_grad(x), x), d](const Tensor& g, NeedsGrad) { return Grads{d(g, sx.get())}; });
}

// Records y with dx = g * factor, a constant piecewise factor made from x (no graph).
template <class F>
Tensor with_factor(const char* name, Tensor y, const Tensor& x, F&& factor) {
  Tensor f = wants_grad(x) ? PW::map(x, name, factor) : Tensor{};
  return record(name, std::move(y), {x}, [sf = Saved(f)](const Tensor& g, NeedsGrad) { return Grads{g * sf.get()}; });
}

// PyTorch's elu kernel: x <= 0 ? (exp(x * input_scale) - 1) * alpha * scale : x * scale
// (expm1 for the exp - 1, as its vectorized path). elu, celu and selu are this.
// dx = x <= 0 ? g * input_scale * alpha * scale * exp(x * input_scale) : g * scale
Tensor elu_general(const char* name, const Tensor& x, double alpha, double scale, double input_scale) {
  check_float(x, name);
  Tensor y = PW::map(x, name, [&]<class T>(T v) {
    const T neg = static_cast<T>(alpha * scale), pos = static_cast<T>(scale), in = static_cast<T>(input_scale);
    // + 0 turns expm1(-0) = -0 into +0: torch's elu(-0) is +0.
    return v <= T(0) ? std::expm1(v * in) * neg + T(0) : v * pos;
  });
  Tensor nonpos = wants_grad(x) ? PW::map_bool(x, name, []<class T>(T v) { return v <= T(0); }) : Tensor{};
  return record(
      name, y, {x},
      [sx = save_if(wants_grad(x), x), sm = Saved(nonpos), alpha, scale, input_scale](const Tensor& g, NeedsGrad) {
        // min(x, 0) keeps exp finite on the branch where(...) drops (a NaN-free double backward).
        Tensor neg_branch = g * exp(clamp(sx.get(), std::nullopt, 0.0) * input_scale) * (input_scale * alpha * scale);
        return Grads{where(sm.get(), neg_branch, g * scale)};
      });
}

}  // namespace

// ---- rectifiers and sigmoids ----------------------------------------------------------
// PyTorch: x < 0 ? 0 : x, so relu(NaN) = NaN and relu(-0) = -0.   dx = g where y > 0
Tensor relu(const Tensor& x) {
  Tensor y = PW::map(x, "relu",
                     PW::Vectorized{[]<class T>(T v) { return v < T(0) ? T(0) : v; },
                                    []<class T>(const auto& v) { return xt::where(v < T(0), T(0), v); }});
  return record("relu", y, {x}, [sy = save_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    // The step 1 where y > 0, else 0 (NaN included), as a constant factor (no graph).
    Tensor step = PW::map(sy.get(), "step",
                          PW::Vectorized{[]<class T>(T v) { return v > T(0) ? T(1) : T(0); },
                                         []<class T>(const auto& v) { return xt::where(v > T(0), T(1), T(0)); }});
    return Grads{g * step};
  });
}

// 1 / (1 + exp(-x)): xsimd's exp where it is right, std::exp near underflow and overflow
// of exp(-x) (PW::exp_edge).
Tensor sigmoid(const Tensor& x) {  // dx = g y (1 - y)
  Tensor y =
      PW::map(x, "sigmoid",
              PW::Vectorized{[]<class T>(T v) { return T(1) / (T(1) + std::exp(-v)); },
                             []<class T>(const auto& v) { return T(1) / (T(1) + xt::exp(-PW::exp_arg<T>(v, true))); },
                             []<class T>() { return [edge = PW::exp_edge<T>()](T v) { return edge(-v); }; }});
  return record("sigmoid", y, {x}, [sy = save_output_if(wants_grad(x), y)](const Tensor& g, NeedsGrad) {
    const Tensor& y = sy.get();
    return Grads{g * y * rsub(1.0, y)};
  });
}

// x / (1 + exp(-x)).   dx = g s (1 + x (1 - s)), s = sigmoid(x)
Tensor silu(const Tensor& x) {
  check_float(x, "silu");
  Tensor y = PW::map(x, "silu", []<class T>(T v) { return v / (T(1) + std::exp(-v)); });
  return with_input("silu", y, x, [](const Tensor& g, const Tensor& x) {
    Tensor s = sigmoid(x);
    return g * s * (x * rsub(1.0, s) + 1.0);
  });
}

// beta x > threshold ? x : log1p(exp(beta x)) / beta (beta, threshold in x's dtype).
// dx = beta x > threshold ? g : g sigmoid(beta x)
Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_float(x, "softplus");
  auto linear = [beta, threshold]<class T>(T v) { return v * static_cast<T>(beta) > static_cast<T>(threshold); };
  Tensor y = PW::map(x, "softplus", [&]<class T>(T v) {
    const T b = static_cast<T>(beta);
    return linear(v) ? v : std::log1p(std::exp(v * b)) / b;
  });
  Tensor lin = wants_grad(x) ? PW::map_bool(x, "softplus", linear) : Tensor{};
  return record("softplus", y, {x},
                [sx = save_if(wants_grad(x), x), sl = Saved(lin), beta](const Tensor& g, NeedsGrad) {
                  return Grads{where(sl.get(), g, g * sigmoid(sx.get() * beta))};
                });
}

// x > 0 ? x : slope x.   dx = x > 0 ? g : slope g (so the slope at 0, as PyTorch)
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  check_float(x, "leaky_relu");
  Tensor y = PW::map(x, "leaky_relu", [&]<class T>(T v) { return v > T(0) ? v : v * static_cast<T>(negative_slope); });
  return with_factor("leaky_relu", y, x,
                     [&]<class T>(T v) { return v > T(0) ? T(1) : static_cast<T>(negative_slope); });
}

Tensor elu(const Tensor& x, double alpha) { return elu_general("elu", x, alpha, 1.0, 1.0); }

Tensor celu(const Tensor& x, double alpha) {
  AG_CHECK(alpha != 0, ValueError, "celu: alpha cannot be 0 (input shape ", x.shape(), ")");
  return elu_general("celu", x, alpha, 1.0, 1.0 / alpha);
}

Tensor selu(const Tensor& x) {
  return elu_general("selu", x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0);
}

// clamp(x, min_val, max_val) (NaN stays NaN).   dx = (x <= min || x >= max) ? 0 : g
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  check_float(x, "hardtanh");
  Tensor y = K::clamp(x, min_val, max_val);
  return with_factor("hardtanh", y, x, [&]<class T>(T v) {
    return v <= static_cast<T>(min_val) || v >= static_cast<T>(max_val) ? T(0) : T(1);
  });
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }

// min(max(x + 3, 0), 6) / 6.   dx = -3 < x < 3 ? g / 6 : 0 (1/6 rounded to f32 even
// in f64, as PyTorch)
Tensor hardsigmoid(const Tensor& x) {
  check_float(x, "hardsigmoid");
  Tensor y = PW::map(x, "hardsigmoid", []<class T>(T v) { return std::min(std::max(v + T(3), T(0)), T(6)) / T(6); });
  return with_factor("hardsigmoid", y, x,
                     []<class T>(T v) { return v > T(-3) && v < T(3) ? static_cast<T>(1.0f / 6.0f) : T(0); });
}

// x min(max(x + 3, 0), 6) / 6.   dx = x < -3 ? 0 : x <= 3 ? g (x / 3 + 1/2) : g
Tensor hardswish(const Tensor& x) {
  check_float(x, "hardswish");
  Tensor y = PW::map(x, "hardswish", []<class T>(T v) { return v * std::min(std::max(v + T(3), T(0)), T(6)) / T(6); });
  const bool need = wants_grad(x);
  Tensor mid = need ? PW::map_bool(x, "hardswish", []<class T>(T v) { return v >= T(-3) && v <= T(3); }) : Tensor{};
  Tensor outer = need ? PW::map(x, "hardswish", []<class T>(T v) { return v < T(-3) ? T(0) : T(1); }) : Tensor{};
  return record("hardswish", y, {x},
                [sx = save_if(need, x), sm = Saved(mid), so = Saved(outer)](const Tensor& g, NeedsGrad) {
                  return Grads{where(sm.get(), g * (sx.get() / 3.0 + 0.5), g * so.get())};
                });
}

// x tanh(log1p(exp(x))).   dx = g (t + x s (1 - t^2)), t = tanh(softplus(x)), s = sigmoid(x)
Tensor mish(const Tensor& x) {
  check_float(x, "mish");
  Tensor y = PW::map(x, "mish", []<class T>(T v) { return v * std::tanh(std::log1p(std::exp(v))); });
  return with_input("mish", y, x, [](const Tensor& g, const Tensor& x) {
    Tensor t = tanh(softplus(x));
    return g * (t + x * sigmoid(x) * rsub(1.0, square(t)));
  });
}

// min(x, 0) - log1p(exp(-|x|)).   dx = g sigmoid(-x)
Tensor logsigmoid(const Tensor& x) {
  check_float(x, "logsigmoid");
  Tensor y =
      PW::map(x, "logsigmoid", []<class T>(T v) { return std::min(v, T(0)) - std::log1p(std::exp(-std::abs(v))); });
  return with_input("logsigmoid", y, x, [](const Tensor& g, const Tensor& x) { return g * sigmoid(neg(x)); });
}

// A composite, as in PyTorch.
Tensor softsign(const Tensor& x) {
  check_float(x, "softsign");
  return x / (abs(x) + 1.0);
}

// ---- GELU ------------------------------------------------------------------------------
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

Tensor gelu(const Tensor& x, const std::string& approximate) {
  AG_CHECK(approximate == "none" || approximate == "tanh", ValueError,
           "gelu: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  return gelu(x, approximate == "tanh" ? GeluApprox::tanh : GeluApprox::none);
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

}  // namespace ag
