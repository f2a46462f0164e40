// Binary, regression and distribution losses, and distances (attograd/ops/loss.h).
// Composites of differentiable ops except binary_cross_entropy, whose clamped logs and
// clamped-denominator gradient are PyTorch's numerics rather than a composite's.
#include <cmath>
#include <limits>
#include <vector>

#include "attograd/ops/loss.h"
#include "op_util.h"

namespace ag {
namespace {

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::none: return loss;
    case Reduction::sum: return sum(loss);
    case Reduction::mean: return mean(loss);  // NaN for an empty loss, as PyTorch
  }
  return loss;
}

void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  AG_CHECK(target.shape() == input.shape(), ShapeError, op, ": target shape ", target.shape(),
           " must be the same as input shape ", input.shape());
}

void check_same_dtype(const Tensor& input, const Tensor& other, const char* what, const char* op) {
  if (!other.defined()) return;
  AG_CHECK(other.dtype() == input.dtype(), DTypeError, op, ": ", what, " dtype ", other.dtype(),
           " (shape ", other.shape(), ") differs from input dtype ", input.dtype(), " (shape ", input.shape(), ")");
}

// weight / pos_weight must broadcast to the input's shape (the loss keeps that shape).
void check_broadcasts_to(const Tensor& w, const Tensor& input, const char* what, const char* op) {
  if (!w.defined()) return;
  const Shape &ws = w.shape(), &xs = input.shape();
  bool ok = ws.size() <= xs.size();
  for (int64_t i = 1; ok && i <= ws.size(); ++i)
    ok = ws[ws.size() - i] == 1 || ws[ws.size() - i] == xs[xs.size() - i];
  AG_CHECK(ok, ShapeError, op, ": ", what, " shape ", ws, " cannot be broadcast to input shape ", xs);
}

// PyTorch 1.13 (x, t) -> (t - 1) max(log(1 - x), -100) - t max(log(x), -100), in x's dtype
// (log(1 - x), not log1p(-x): a float 1e-10 with target 0 gives 0, as PyTorch).
template <class T>
Tensor bce_values(const Tensor& x, const Tensor& t) {
  std::vector<T> xs = x.to_vector<T>(), ts = t.to_vector<T>(), out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const T xv = xs[i], tv = ts[i];
    AG_CHECK(xv >= T(0) && xv <= T(1), ValueError,
             "binary_cross_entropy: all elements of input should be between 0 and 1, got ", xv,
             " (input shape ", x.shape(), ")");
    out[i] = (tv - T(1)) * std::max(T(std::log(T(1) - xv)), T(-100)) - tv * std::max(T(std::log(xv)), T(-100));
  }
  return Tensor::from_vector(out, x.shape());
}

// Unweighted pointwise BCE with PyTorch's gradients (its EPSILON is the float 1e-12f):
//   dx = g (x - t) / max(x (1 - x), 1e-12)    dt = -g logit(x) = -g log(x / (1 - x))
Tensor bce_pointwise(const Tensor& x, const Tensor& t) {
  Tensor out = x.dtype() == DType::f64 ? bce_values<double>(x, t) : bce_values<float>(x, t);
  bool need = wants_grad(x) || wants_grad(t);
  return record("binary_cross_entropy", out, {x, t},
                [sx = save_if(need, x), st = save_if(need, t)](const Tensor& g, NeedsGrad needs) {
                  const Tensor &x = sx.get(), &t = st.get();
                  const double eps = static_cast<double>(1e-12f);
                  Tensor gx, gt;
                  if (needs[0]) gx = g * (x - t) / maximum(x * rsub(1.0, x), full(Shape{}, eps, x.dtype()));
                  if (needs[1]) gt = neg(g * log(x / rsub(1.0, x)));
                  return Grads{gx, gt};
                });
}

// x * log(y), 0 where x == 0 unless y is NaN (PyTorch's xlogy). Gradients as PyTorch's:
// dx = g log(y) (0 where x == 0), dy = g x / y (so 0 / 0 = NaN at x == y == 0).
Tensor xlogy(const Tensor& x, const Tensor& y) {
  Tensor out;
  {
    NoGradGuard ng;
    Tensor zero = logical_and(eq(x, 0.0), eq(y, y));
    out = where(zero, 0.0, x * log(y));
  }
  bool need = wants_grad(x) || wants_grad(y);
  return record("xlogy", out, {x, y},
                [sx = save_if(need, x), sy = save_if(need, y), xs = x.shape(), ys = y.shape()](
                    const Tensor& g, NeedsGrad needs) {
                  const Tensor &x = sx.get(), &y = sy.get();
                  Tensor gx, gy;
                  if (needs[0]) gx = sum_to(where(ne(x, 0.0), g * log(y), 0.0), xs);
                  if (needs[1]) gy = sum_to(g * x / y, ys);
                  return Grads{gx, gy};
                });
}

// max(x, lo) whose gradient passes through unchanged (PyTorch 1.13's cosine_similarity
// clamps its squared norms in place under no_grad).
Tensor clamp_min_passthrough(const Tensor& x, double lo) {
  Tensor out = K::clamp(x, lo, std::nullopt);
  return record("clamp_min_passthrough", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

// The p-norm along dim (keepdim) with a zero gradient at a zero row (as PyTorch's
// norm backward masks), instead of the composite's 0 * inf.
Tensor safe_norm(const Tensor& x, double p, int64_t dim) {
  if (std::isinf(p)) return max(abs(x), dim, true).first;
  if (p == 1.0) return sum(abs(x), {dim}, true);
  Tensor s;
  if (p == 2.0) {
    s = sum(square(x), {dim}, true);
  } else {
    Tensor a = abs(x);
    Tensor za = eq(a, 0.0);
    s = sum(where(za, 0.0, pow(where(za, 1.0, a), p)), {dim}, true);
  }
  Tensor z = eq(s, 0.0);
  Tensor safe = where(z, 1.0, s);
  return where(z, 0.0, p == 2.0 ? sqrt(safe) : pow(safe, 1.0 / p));
}

}  // namespace

// ---- binary classification ----------------------------------------------------
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  check_float(input, "binary_cross_entropy");
  check_same_shape(input, target, "binary_cross_entropy");
  check_same_dtype(input, target, "target", "binary_cross_entropy");
  check_same_dtype(input, weight, "weight", "binary_cross_entropy");
  Tensor loss = bce_pointwise(input, target);
  check_broadcasts_to(weight, input, "weight", "binary_cross_entropy");
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

// PyTorch 1.13's forward, term for term: m = max(-x, 0);
// (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), lw = (pw - 1) t + 1.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_float(input, op);
  check_same_shape(input, target, op);
  check_same_dtype(input, target, "target", op);
  check_same_dtype(input, weight, "weight", op);
  check_same_dtype(input, pos_weight, "pos_weight", op);
  check_broadcasts_to(weight, input, "weight", op);
  check_broadcasts_to(pos_weight, input, "pos_weight", op);
  Tensor m = relu(neg(input));
  Tensor log_sum = log(exp(neg(m)) + exp(neg(input) - m));  // log(1 + exp(-x)) - m
  Tensor loss;  // summed in PyTorch's order, so that values agree to the last bit
  if (pos_weight.defined()) {
    Tensor lw = (pos_weight - 1.0) * target + 1.0;
    loss = rsub(1.0, target) * input + lw * (log_sum + m);
  } else {
    loss = rsub(1.0, target) * input + m + log_sum;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

// ---- regression -----------------------------------------------------------------
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_float(input, "l1_loss");
  broadcast_shapes(input.shape(), target.shape(), "l1_loss");
  return reduce(abs(input - target), reduction);
}

// The quadratic branch squares clamp(d, -beta, beta), so an infinite d sends no 0 * inf
// into the gradient through the branch that where() leaves out.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_float(input, "smooth_l1_loss");
  AG_CHECK(beta >= 0, ValueError, "smooth_l1_loss: beta must not be negative, got ", beta);
  broadcast_shapes(input.shape(), target.shape(), "smooth_l1_loss");
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = input - target, ad = abs(d);
  Tensor quad = square(clamp(d, -beta, beta)) * 0.5 / beta;
  return reduce(where(lt(ad, beta), quad, ad - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_float(input, "huber_loss");
  AG_CHECK(delta > 0, ValueError, "huber_loss: delta must be positive, got ", delta);
  broadcast_shapes(input.shape(), target.shape(), "huber_loss");
  Tensor d = input - target, ad = abs(d);
  Tensor quad = square(clamp(d, -delta, delta)) * 0.5;
  return reduce(where(lt(ad, delta), quad, (ad - 0.5 * delta) * delta), reduction);
}

// ---- distributions --------------------------------------------------------------
Tensor kl_div(const Tensor& input, const Tensor& target, KLDivReduction reduction, bool log_target) {
  check_float(input, "kl_div");
  check_same_dtype(input, target, "target", "kl_div");
  broadcast_shapes(input.shape(), target.shape(), "kl_div");
  Tensor loss = log_target ? exp(target) * (target - input) : xlogy(target, target) - target * input;
  switch (reduction) {
    case KLDivReduction::none: return loss;
    case KLDivReduction::sum: return sum(loss);
    case KLDivReduction::mean: return mean(loss);
    case KLDivReduction::batchmean:
      return input.dim() == 0 ? sum(loss) : sum(loss) / static_cast<double>(input.shape()[0]);
  }
  return loss;
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  const KLDivReduction r = reduction == Reduction::none  ? KLDivReduction::none
                           : reduction == Reduction::sum ? KLDivReduction::sum
                                                         : KLDivReduction::mean;
  return kl_div(input, target, r, log_target);
}

// ---- distances ------------------------------------------------------------------
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  check_float(x1, "cosine_similarity");
  check_same_dtype(x1, x2, "x2", "cosine_similarity");
  Shape s = broadcast_shapes(x1.shape(), x2.shape(), "cosine_similarity");
  const int64_t d = wrap_dim(dim, s.size(), "cosine_similarity");
  Tensor a = expand(x1, s), b = expand(x2, s);
  Tensor n1 = sqrt(clamp_min_passthrough(sum(a * a, {d}, true), eps * eps));  // s with dim d = 1
  Tensor n2 = sqrt(clamp_min_passthrough(sum(b * b, {d}, true), eps * eps));
  return sum((a / n1) * (b / n2), {d});
}

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  check_float(x, "normalize");
  AG_CHECK(p > 0, ValueError, "normalize: p must be positive (or infinity), got ", p);
  const int64_t d = wrap_dim(dim, x.dim(), "normalize");
  Tensor denom = clamp(safe_norm(x, p, d), eps, std::nullopt);  // x's shape with dim d = 1
  return x / denom;
}

}  // namespace ag
