// Comparisons, logic and predicates (bool results, no gradient) and where(). Comparisons
// run in the operands' promoted dtype; where() routes g to the branch each element came
// from.
#include "attograd/ops/comparison.h"

#include <cmath>

#include "kernels/pointwise.h"
#include "op_util.h"

namespace ag {
namespace {
namespace PW = K::pw;
}  // namespace

// ---- comparisons -----------------------------------------------------------------------
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

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
Tensor operator==(Scalar a, const Tensor& b) { return eq(b, a); }
Tensor operator!=(Scalar a, const Tensor& b) { return ne(b, a); }
Tensor operator<(Scalar a, const Tensor& b) { return gt(b, a); }
Tensor operator<=(Scalar a, const Tensor& b) { return ge(b, a); }
Tensor operator>(Scalar a, const Tensor& b) { return lt(b, a); }
Tensor operator>=(Scalar a, const Tensor& b) { return le(b, a); }

// ---- logic ---------------------------------------------------------------------------
Tensor logical_and(const Tensor& a, const Tensor& b) { return K::logical(K::Logic::and_, a, b, "logical_and"); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return K::logical(K::Logic::or_, a, b, "logical_or"); }
Tensor logical_not(const Tensor& a) { return K::logical_not(a); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return ne(logical_not(a), logical_not(b)); }
Tensor operator!(const Tensor& mask) { return logical_not(mask); }

// ---- bitwise -------------------------------------------------------------------------
namespace {
template <class F>
Tensor bitwise(const Tensor& a, const Tensor& b, const char* op, F&& f) {
  const auto xy = promote_pair(a.detach(), b.detach());  // no structured binding: clang 14 cannot capture one
  const Tensor &x = xy.first, &y = xy.second;
  AG_CHECK(!x.is_floating_point(), DTypeError, op, ": not implemented for ", x.dtype(),
           " (bool and integer tensors only; shapes ", a.shape(), " and ", b.shape(), ")");
  const Shape shape = broadcast_shapes(x.shape(), y.shape(), op);
  return dispatch_all(x.dtype(), op, [&]<class T>() -> Tensor {
    if constexpr (std::is_floating_point_v<T>) {
      return {};  // refused above
    } else {
      return K::pw::zip_n<T, T, 2>({&x, &y}, shape, [&](T u, T v) { return static_cast<T>(f(u, v)); });
    }
  });
}
}  // namespace

Tensor bitwise_and(const Tensor& a, const Tensor& b) {
  return bitwise(a, b, "bitwise_and", [](auto u, auto v) { return u & v; });
}
Tensor bitwise_or(const Tensor& a, const Tensor& b) {
  return bitwise(a, b, "bitwise_or", [](auto u, auto v) { return u | v; });
}
Tensor bitwise_xor(const Tensor& a, const Tensor& b) {
  return bitwise(a, b, "bitwise_xor", [](auto u, auto v) { return u ^ v; });
}
Tensor bitwise_not(const Tensor& a) {
  AG_CHECK(!a.is_floating_point(), DTypeError, "bitwise_not: not implemented for ", a.dtype(),
           " (bool and integer tensors only; shape ", a.shape(), ")");
  if (a.dtype() == DType::b8) return logical_not(a);
  return bitwise(a, full(Shape{}, -1, a.dtype()), "bitwise_not", [](auto u, auto v) { return u ^ v; });
}
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }

// ---- predicates ----------------------------------------------------------------------
Tensor isfinite(const Tensor& a) { return K::isfinite(a); }
Tensor isinf(const Tensor& x) {
  if (!x.is_floating_point()) return full(x.shape(), 0.0, DType::b8);
  return PW::map_bool(x, "isinf", []<class T>(T v) { return std::isinf(v); });
}
Tensor isnan(const Tensor& x) {
  if (!x.is_floating_point()) return full(x.shape(), 0.0, DType::b8);
  return PW::map_bool(x, "isnan", []<class T>(T v) { return std::isnan(v); });
}

// ---- where ---------------------------------------------------------------------------
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

}  // namespace ag
