// Rotary position embedding: the cos/sin tables and the rotation op, with its own
// backward (the transpose of the rotation). Layout and formulas: attograd/ops/position.h.
#include <cmath>
#include <limits>
#include <vector>

#include "attograd/ops/position.h"
#include "kernels/rope.h"
#include "attograd/detail/error_context.h"
#include "op_util.h"

namespace ag {

namespace {

// [-x2, x1] for x = [x1, x2] split at the middle of the last dim (d even).
Tensor rotate_half(const Tensor& x) {
  const int64_t h = x.shape()[x.dim() - 1] / 2;
  return cat({neg(narrow(x, -1, h, h)), narrow(x, -1, 0, h)}, -1);
}

// [t2, t1]: the halves of the last dim swapped.
Tensor swap_halves(const Tensor& t) {
  const int64_t h = t.shape()[t.dim() - 1] / 2;
  return cat({narrow(t, -1, h, h), narrow(t, -1, 0, h)}, -1);
}

}  // namespace

std::pair<Tensor, Tensor> rotary_cos_sin(int64_t length, int64_t head_dim, double base, int64_t offset,
                                         std::optional<DType> dtype) try {
  AG_CHECK(length >= 0, ValueError, "rotary_cos_sin: length must be >= 0, got ", length);
  AG_CHECK(head_dim > 0 && head_dim % 2 == 0, ValueError, "rotary_cos_sin: head_dim must be positive and even, got ",
           head_dim);
  AG_CHECK(base > 0 && std::isfinite(base), ValueError, "rotary_cos_sin: base must be positive, got ", base);
  AG_CHECK(offset >= 0, ValueError, "rotary_cos_sin: offset must be >= 0, got ", offset);
  const DType dt = dtype ? *dtype : get_default_dtype();
  AG_CHECK(is_floating(dt), DTypeError, "rotary_cos_sin: dtype must be a floating dtype (f64, f32, bf16, f16), got ",
           dt);
  const int64_t half = head_dim / 2;
  // The tables' sizes come from the caller: refuse what int64 cannot count (before the
  // allocation, which would fail untyped), and positions past INT64_MAX.
  int64_t elems = 0, bytes = 0;
  AG_CHECK(!__builtin_mul_overflow(length, head_dim, &elems) &&
               !__builtin_mul_overflow(elems, static_cast<int64_t>(sizeof(double)), &bytes),
           ValueError, "rotary_cos_sin: tables of length ", length, " x head_dim ", head_dim,
           " are too large (the element or byte count overflows int64)");
  AG_CHECK(offset <= std::numeric_limits<int64_t>::max() - length, ValueError, "rotary_cos_sin: offset ", offset,
           " + length ", length, " overflows int64");
  const Shape shape{length, head_dim};
  Tensor ct = empty(shape, DType::f64), st = empty(shape, DType::f64);  // MemoryError when RAM is short
  double *c = ct.data<double>(), *s = st.data<double>();
  std::vector<double> inv_freq(static_cast<std::size_t>(length > 0 ? half : 0));  // no larger than the tables
  for (int64_t i = 0; i < static_cast<int64_t>(inv_freq.size()); ++i)             // 1 / base^(2i/d), HF's formula
    inv_freq[size_t(i)] = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(head_dim));
  for (int64_t p = 0; p < length; ++p) {
    const double pos = static_cast<double>(offset + p);
    for (int64_t i = 0; i < half; ++i) {
      const double angle = pos * inv_freq[size_t(i)];
      const std::size_t k = static_cast<std::size_t>(p * head_dim + i);
      c[k] = c[k + size_t(half)] = std::cos(angle);
      s[k] = s[k + size_t(half)] = std::sin(angle);
    }
  }
  return {ct.to(dt), st.to(dt)};
} catch (const Error& e) { detail::rethrow_in_op("rotary_cos_sin", e); }

// out = x * cos + rotate_half(x) * sin  (R = rotate_half, a 90-degree turn of each pair)
//   dx   = g * cos + R^T(g * sin) = g * cos + R(g) * (-swap_halves(sin))
//        = rotary_embedding(g, cos, -swap_halves(sin))
// because R^T = -R and R(g * s) = R(g) * swap_halves(s). So the backward is the op itself
// (one fused pass; differentiable, so double backward works), for any cos and sin; with
// HF's tables (equal halves) it is the rotation by -angle.
//   dcos = sum_to(g * x, cos.shape)    dsin = sum_to(g * R(x), sin.shape)
Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin) try {
  check_float(x, "rotary_embedding");
  AG_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] % 2 == 0, ShapeError,
           "rotary_embedding: the last dim of x must be even (the two rotated halves), got x ", x.shape());
  AG_CHECK(cos.defined() && sin.defined() && cos.shape() == sin.shape(), ShapeError,
           "rotary_embedding: cos and sin must have the same shape, got cos ", cos.shape(), " and sin ", sin.shape());
  AG_CHECK(cos.dtype() == x.dtype() && sin.dtype() == x.dtype(), DTypeError, "rotary_embedding: cos (", cos.dtype(),
           ") and sin (", sin.dtype(), ") must have x's dtype ", x.dtype(), "; x ", x.shape(), ", cos ", cos.shape());
  const int64_t d = x.shape()[x.dim() - 1];
  AG_CHECK(cos.dim() >= 1 && cos.shape()[cos.dim() - 1] == d && cos.dim() <= x.dim() &&
               broadcast_shapes(x.shape(), cos.shape(), "rotary_embedding") == x.shape(),
           ShapeError, "rotary_embedding: cos/sin of shape ", cos.shape(),
           " must end in x's head dim and broadcast to x's shape ", x.shape(), " (e.g. (L, d) for x (B, h, L, d))");
  // The kernel reads the tables laid out as x's trailing cos.dim() dims: expand the
  // broadcast ones ((L, 1, d) -> (L, h, d); a small copy next to x).
  Shape trailing;
  for (int64_t i = x.dim() - cos.dim(); i < x.dim(); ++i) trailing.push_back(x.shape()[i]);
  Tensor out;
  {
    NoGradGuard no_grad;  // the expanded tables are kernel inputs only
    out = K::rotary(x, K::contiguous(cos.expand(trailing)), K::contiguous(sin.expand(trailing)));
  }
  const bool need_tables = wants_grad(cos) || wants_grad(sin);  // only their gradients read x
  const bool need = wants_grad(x) || need_tables;
  return record("rotary_embedding", out, {x, cos, sin},
                [sx = save_if(need_tables, x), sc = save_if(need, cos), ss = save_if(need, sin), cs = cos.shape(),
                 sns = sin.shape()](const Tensor& g, NeedsGrad needs) {
                  Tensor dx, dc, ds;
                  if (needs[0]) dx = rotary_embedding(g, sc.get(), neg(swap_halves(ss.get())));
                  if (needs[1]) dc = sum_to(g * sx.get(), cs);
                  if (needs[2]) ds = sum_to(g * rotate_half(sx.get()), sns);
                  return Grads{dx, dc, ds};
                });
} catch (const Error& e) { detail::rethrow_in_op("rotary_embedding", e); }

}  // namespace ag
