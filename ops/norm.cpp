// Normalization: layer_norm and rms_norm are fused primitives (kernels/fused.cpp,
// kernels/rms_norm.cpp) with the composite formula as their create_graph backward;
// normalize is a composite.
#include "attograd/ops/norm.h"

#include <cmath>
#include <limits>
#include <utility>

#include "kernels/fused.h"
#include "kernels/rms_norm.h"
#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {
namespace {

// y = x * rsqrt(mean(x^2 over the last n dims) + eps) [* w], from primitives: the fused
// kernel's definition, differentiated under create_graph.
Tensor rms_norm_composite(const Tensor& x, const Tensor& w, int64_t n, double eps) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(-1 - i);
  Tensor y = x * rsqrt(mean(square(x), dims, true) + eps);
  return w.defined() ? y * w : y;
}

// The p-norm along dim (keepdim) with a zero gradient at a zero row (as PyTorch's
// norm backward masks), instead of the composite's 0 * inf.
// p = 0 counts the non-zeros (NaN counts; a constant: no gradient), -inf is min |x|, and
// p < 0 is (sum |x|^p)^(1/p): a zero entry makes the sum inf and the norm 0 (as torch),
// entered as inf so that its gradient is 0 rather than 0 * inf.
Tensor safe_norm(const Tensor& x, double p, int64_t dim) {
  if (p == 0.0) return sum(ne(x.detach(), 0.0).to(x.dtype()), {dim}, true);
  if (std::isinf(p)) return p > 0 ? max(abs(x), dim, true).first : min(abs(x), dim, true).first;
  if (p < 0) {
    Tensor a = abs(x);
    Tensor za = eq(a, 0.0);
    Tensor s = sum(where(za, std::numeric_limits<double>::infinity(), pow(where(za, 1.0, a), p)), {dim}, true);
    return pow(s, 1.0 / p);
  }
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

// ---- layer_norm -------------------------------------------------------------------
// y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized dims
// (biased variance, as PyTorch).
Tensor layer_norm(const Tensor& x_in, const Shape& normalized_shape, const Tensor& weight_in, const Tensor& bias_in,
                  double eps) try {
  const Tensor x = detail::autocast_f32(x_in), weight = detail::autocast_f32(weight_in),
               bias = detail::autocast_f32(bias_in);
  check_float(x, "layer_norm");
  const int64_t n = normalized_shape.size();
  bool ok = n >= 1 && x.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i) ok = x.shape()[x.dim() - n + i] == normalized_shape[i];
  AG_CHECK(ok, ShapeError, "layer_norm: input shape ", x.shape(), " does not end with normalized_shape ",
           normalized_shape);
  if (weight.defined())
    AG_CHECK(weight.shape() == normalized_shape, ShapeError, "layer_norm: weight shape ", weight.shape(),
             " differs from normalized_shape ", normalized_shape);
  if (bias.defined())
    AG_CHECK(bias.shape() == normalized_shape, ShapeError, "layer_norm: bias shape ", bias.shape(),
             " differs from normalized_shape ", normalized_shape);
  for (const Tensor* t : {&weight, &bias})  // the kernel reads them as x's dtype
    AG_CHECK(!t->defined() || t->dtype() == x.dtype(), DTypeError, "layer_norm: ", t == &weight ? "weight" : "bias",
             " dtype ", t->dtype(), " differs from input dtype ", x.dtype(), " (input shape ", x.shape(), ")");
  // Fused primitive (kernels/fused.cpp); it equals the composite
  //   xc = x - mean(x);  y = xc * rsqrt(mean(xc^2) + eps) * weight + bias
  // (tests/test_fused.cpp checks both values and gradients against it).
  const int64_t len = numel(normalized_shape);
  K::LayerNormForward f = K::layer_norm_forward(x, weight, bias, len, eps);
  bool need = wants_grad(x) || wants_grad(weight) || wants_grad(bias);
  // The composite, differentiated instead of the fused backward under create_graph.
  auto composite = [normalized_shape, eps](const std::vector<Tensor>& in) {
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < normalized_shape.size(); ++i) dims.push_back(-1 - i);
    Tensor xc = in[0] - mean(in[0], dims, true);
    Tensor y = xc * rsqrt(mean(square(xc), dims, true) + eps);
    if (in[1].defined()) y = y * in[1];
    return in[2].defined() ? y + in[2] : y;
  };
  return record(
      "layer_norm", f.y, {x, weight, bias},
      [sx = save_if(need, x), sm = save_if(need, f.mean), sr = save_if(need, f.rstd), sw = save_if(need, weight),
       normalized_shape](const Tensor& g, NeedsGrad needs) {
        K::LayerNormGrads gr = K::layer_norm_backward(sx.get(), sm.get(), sr.get(), sw.get(), g, normalized_shape,
                                                      needs[0], needs[1], needs[2]);
        return Grads{gr.dx, gr.dw, gr.db};
      },
      [&] {
        return Composite{composite, {Saved(x), Saved(weight), Saved(bias)}};
      });
} catch (const Error& e) { detail::rethrow_in_op("layer_norm", e); }

// ---- rms_norm (LLaMA's norm) --------------------------------------------------------
Tensor rms_norm(const Tensor& x_in, const Shape& normalized_shape, const Tensor& weight_in,
                std::optional<double> eps_in) try {
  const Tensor x = detail::autocast_f32(x_in), weight = detail::autocast_f32(weight_in);
  check_float(x, "rms_norm");
  const int64_t n = normalized_shape.size();
  bool ok = n >= 1 && x.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i) ok = x.shape()[x.dim() - n + i] == normalized_shape[i];
  AG_CHECK(ok, ShapeError, "rms_norm: input shape ", x.shape(), " does not end with normalized_shape ",
           normalized_shape);
  if (weight.defined()) {
    AG_CHECK(weight.shape() == normalized_shape, ShapeError, "rms_norm: weight shape ", weight.shape(),
             " differs from normalized_shape ", normalized_shape);
    AG_CHECK(weight.dtype() == x.dtype(), DTypeError, "rms_norm: weight dtype ", weight.dtype(),
             " differs from input dtype ", x.dtype(), " (input shape ", x.shape(), ")");
  }
  // PyTorch's default: torch.finfo(x.dtype).eps (bf16 2^-7, f16 2^-10).
  const double eps = eps_in                     ? *eps_in
                     : x.dtype() == DType::f64  ? std::numeric_limits<double>::epsilon()
                     : x.dtype() == DType::bf16 ? std::ldexp(1.0, -7)
                     : x.dtype() == DType::f16  ? std::ldexp(1.0, -10)
                                                : static_cast<double>(std::numeric_limits<float>::epsilon());
  AG_CHECK(eps >= 0, ValueError, "rms_norm: eps must be >= 0, got ", eps);
  const int64_t len = numel(normalized_shape);
  K::RmsNormForward f = K::rms_norm_forward(x, weight, len, eps);
  bool need = wants_grad(x) || wants_grad(weight);
  const int64_t nd = normalized_shape.size();
  auto composite = [nd, eps](const std::vector<Tensor>& in) { return rms_norm_composite(in[0], in[1], nd, eps); };
  return record(
      "rms_norm", f.y, {x, weight},
      [sx = save_if(need, x), sr = save_if(need, f.rstd), sw = save_if(need, weight), normalized_shape](
          const Tensor& g, NeedsGrad needs) {
        K::RmsNormGrads gr =
            K::rms_norm_backward(sx.get(), sr.get(), sw.get(), g, normalized_shape, needs[0], needs[1]);
        return Grads{gr.dx, gr.dw};
      },
      [&] {
        return Composite{composite, {Saved(x), Saved(weight)}};
      });
} catch (const Error& e) { detail::rethrow_in_op("rms_norm", e); }

// ---- normalize ----------------------------------------------------------------------
// F.normalize: x / max(norm_p(x along dim), eps), any order p as torch's norm (0, < 0,
// +-inf included).
Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) try {
  check_float(x, "normalize");
  const int64_t d = wrap_dim(dim, x.dim(), "normalize");
  Tensor denom = clamp(safe_norm(x, p, d), eps, std::nullopt);  // x's shape with dim d = 1
  return x / denom;
} catch (const Error& e) { detail::rethrow_in_op("normalize", e); }

// ---- vector and matrix norms ----------------------------------------------------------
// The dims move to the end and merge into one, so safe_norm's one-dim rules (zero
// gradient at 0, p <= 0, inf) serve any set of dims: x (..., K) -> (..., 1) -> the
// keepdim shape (dims of size 1) or without them.
Tensor linalg_vector_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim) try {
  check_float(x, "linalg_vector_norm");
  AG_CHECK(!std::isnan(ord), ValueError, "linalg_vector_norm: ord must not be NaN");
  const int64_t n = x.dim();
  std::vector<char> reduced(static_cast<std::size_t>(n), dims.empty() ? 1 : 0);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, n, "linalg_vector_norm");
    AG_CHECK(!reduced[static_cast<std::size_t>(w)], ValueError, "linalg_vector_norm: dim ", d,
             " appears twice in the dims of input shape ", x.shape());
    reduced[static_cast<std::size_t>(w)] = 1;
  }
  std::vector<int64_t> order;
  Shape kept, keep_shape;
  for (int64_t d = 0; d < n; ++d)
    if (!reduced[static_cast<std::size_t>(d)]) {
      order.push_back(d);
      kept.push_back(x.shape()[d]);
    }
  for (int64_t d = 0; d < n; ++d) {
    if (reduced[static_cast<std::size_t>(d)]) order.push_back(d);
    keep_shape.push_back(reduced[static_cast<std::size_t>(d)] ? 1 : x.shape()[d]);
  }
  Shape merged = kept;
  merged.push_back(-1);
  AG_CHECK(x.numel() > 0 || ord > 0, ValueError, "linalg_vector_norm: ord ", ord, " of an empty input (shape ",
           x.shape(), ") is undefined");
  Tensor r = safe_norm(reshape(permute(x, order), merged), ord, static_cast<int64_t>(kept.size()));
  return reshape(r, keepdim ? keep_shape : kept);
} catch (const Error& e) { detail::rethrow_in_op("linalg_vector_norm", e); }

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) try {
  return linalg_vector_norm(x, p, dims, keepdim);
} catch (const Error& e) { detail::rethrow_in_op("norm", e); }

Tensor frobenius_norm(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) try {
  return linalg_vector_norm(x, 2.0, dims, keepdim);
} catch (const Error& e) { detail::rethrow_in_op("frobenius_norm", e); }

Tensor linalg_matrix_norm(const Tensor& x, const std::string& ord, const std::vector<int64_t>& dims, bool keepdim) try {
  AG_CHECK(ord == "fro", ValueError, "linalg_matrix_norm: ord '", ord,
           "' is not supported ('fro' and the numbers 1, -1, inf, -inf are; 'nuc' needs singular values)");
  AG_CHECK(dims.size() == 2, ValueError, "linalg_matrix_norm: dims must name 2 dims, got ", dims.size());
  AG_CHECK(x.dim() >= 2, ShapeError, "linalg_matrix_norm: input shape ", x.shape(), " has fewer than 2 dims");
  return linalg_vector_norm(x, 2.0, dims, keepdim);
} catch (const Error& e) { detail::rethrow_in_op("linalg_matrix_norm", e); }

// ord +-1: the vector 1-norm down dims[0] (column sums of |x|), then the max (min) over
// dims[1]; ord +-inf: the same with the dims swapped (row sums). PyTorch 1.13's order of
// reductions, so a tie among columns splits the gradient as amax / amin do there.
Tensor linalg_matrix_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim) try {
  const double a = std::abs(ord);
  AG_CHECK(a == 1 || std::isinf(a), ValueError, "linalg_matrix_norm: ord ", ord,
           " is not supported (1, -1, inf, -inf and 'fro' are; 2, -2 and 'nuc' need singular values)");
  AG_CHECK(dims.size() == 2, ValueError, "linalg_matrix_norm: dims must name 2 dims, got ", dims.size());
  AG_CHECK(x.dim() >= 2, ShapeError, "linalg_matrix_norm: input shape ", x.shape(), " has fewer than 2 dims");
  int64_t d0 = wrap_dim(dims[0], x.dim(), "linalg_matrix_norm"), d1 = wrap_dim(dims[1], x.dim(), "linalg_matrix_norm");
  AG_CHECK(d0 != d1, ValueError, "linalg_matrix_norm: dims must be different, got (", dims[0], ", ", dims[1], ")");
  if (std::isinf(a)) std::swap(d0, d1);
  if (!keepdim && d0 < d1) --d1;  // the first reduction removed d0
  Tensor s = linalg_vector_norm(x, 1.0, {d0}, keepdim);
  return ord > 0 ? amax(s, {d1}, keepdim) : amin(s, {d1}, keepdim);
} catch (const Error& e) { detail::rethrow_in_op("linalg_matrix_norm", e); }

// x1 (..., P, M) and x2 (..., R, M): differences (..., P, R, M), normed over M.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p) try {
  AG_CHECK(x1.dim() >= 2 && x2.dim() >= 2, ShapeError, "cdist: inputs must have at least 2 dims, got shapes ",
           x1.shape(), " and ", x2.shape());
  AG_CHECK(x1.size(-1) == x2.size(-1), ShapeError, "cdist: x1 shape ", x1.shape(), " and x2 shape ", x2.shape(),
           " differ in the last (feature) dim");
  AG_CHECK(p >= 0 && !std::isnan(p), ValueError, "cdist: p must be >= 0, got ", p);
  return linalg_vector_norm(unsqueeze(x1, -2) - unsqueeze(x2, -3), p, {-1}, false);
} catch (const Error& e) { detail::rethrow_in_op("cdist", e); }

}  // namespace ag
