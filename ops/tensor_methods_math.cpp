// Tensor's math methods (declared in attograd/detail/tensor_method_decls.inl, included by
// attograd/tensor.h): pointwise, arithmetic, comparison, softmax, reductions, scans and
// sorting. Each forwards to the differentiable free function of the same name; the few
// LibTorch arguments that the free function lacks (add's alpha, softmax's dtype, argmax
// without a dim) are spelled with other ops, so gradients come from those ops.
#include "attograd/ops.h"

namespace ag {
namespace {

// other * alpha as one Scalar, keeping an integral kind when both are integral (so that
// an i32 tensor's add(2, 3) stays i32, as LibTorch's).
Scalar scaled(Scalar other, Scalar alpha) {
  if (!other.is_floating_point() && !alpha.is_floating_point()) return other.to_int() * alpha.to_int();
  return other.to_double() * alpha.to_double();
}
bool is_one(Scalar alpha) { return alpha.to_double() == 1.0; }
Tensor in_dtype(const Tensor& x, std::optional<DType> dtype) { return dtype ? ag::to(x, *dtype) : x; }

// argmax / argmin without a dim: of the flattened tensor (shape [], or all ones with
// keepdim), as LibTorch's.
Tensor arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  auto f = [&](const Tensor& t, int64_t d, bool k) { return is_max ? ag::argmax(t, d, k) : ag::argmin(t, d, k); };
  if (dim) return f(x, *dim, keepdim);
  Tensor r = f(ag::reshape(x, Shape{-1}), 0, false);
  return keepdim ? ag::reshape(r, Shape(std::vector<int64_t>(x.dim(), 1))) : r;
}

}  // namespace

// ---- pointwise ----
#define AG_UNARY_METHOD(name) \
  Tensor Tensor::name() const { return ag::name(*this); }
AG_UNARY_METHOD(abs)
AG_UNARY_METHOD(neg)
AG_UNARY_METHOD(sign)
AG_UNARY_METHOD(square)
AG_UNARY_METHOD(sqrt)
AG_UNARY_METHOD(rsqrt)
AG_UNARY_METHOD(exp)
AG_UNARY_METHOD(exp2)
AG_UNARY_METHOD(expm1)
AG_UNARY_METHOD(log)
AG_UNARY_METHOD(log2)
AG_UNARY_METHOD(log10)
AG_UNARY_METHOD(log1p)
AG_UNARY_METHOD(sin)
AG_UNARY_METHOD(cos)
AG_UNARY_METHOD(tan)
AG_UNARY_METHOD(asin)
AG_UNARY_METHOD(acos)
AG_UNARY_METHOD(atan)
AG_UNARY_METHOD(sinh)
AG_UNARY_METHOD(cosh)
AG_UNARY_METHOD(tanh)
AG_UNARY_METHOD(asinh)
AG_UNARY_METHOD(acosh)
AG_UNARY_METHOD(atanh)
AG_UNARY_METHOD(erf)
AG_UNARY_METHOD(floor)
AG_UNARY_METHOD(ceil)
AG_UNARY_METHOD(round)
AG_UNARY_METHOD(trunc)
AG_UNARY_METHOD(frac)
AG_UNARY_METHOD(relu)
AG_UNARY_METHOD(sigmoid)
AG_UNARY_METHOD(isfinite)
AG_UNARY_METHOD(isinf)
AG_UNARY_METHOD(isnan)
AG_UNARY_METHOD(logical_not)
#undef AG_UNARY_METHOD
Tensor Tensor::round(int64_t decimals) const { return ag::round(*this, decimals); }
Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max) const { return ag::clamp(*this, min, max); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ag::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(double min) const { return ag::clamp(*this, min, std::nullopt); }
Tensor Tensor::clamp_max(double max) const { return ag::clamp(*this, std::nullopt, max); }

// ---- binary arithmetic ----
Tensor Tensor::add(const Tensor& o, Scalar alpha) const {
  return is_one(alpha) ? ag::add(*this, o) : ag::add(*this, ag::mul(o, alpha));
}
Tensor Tensor::add(Scalar o, Scalar alpha) const { return ag::add(*this, scaled(o, alpha)); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const {
  return is_one(alpha) ? ag::sub(*this, o) : ag::sub(*this, ag::mul(o, alpha));
}
Tensor Tensor::sub(Scalar o, Scalar alpha) const { return ag::sub(*this, scaled(o, alpha)); }

// Methods whose free function takes (self, other) for a Tensor and a Scalar other.
#define AG_BINARY_METHOD(name) \
  Tensor Tensor::name(const Tensor& o) const { return ag::name(*this, o); } \
  Tensor Tensor::name(Scalar o) const { return ag::name(*this, o); }
AG_BINARY_METHOD(mul)
AG_BINARY_METHOD(div)
AG_BINARY_METHOD(pow)
AG_BINARY_METHOD(floor_divide)
AG_BINARY_METHOD(fmod)
AG_BINARY_METHOD(remainder)
AG_BINARY_METHOD(eq)
AG_BINARY_METHOD(ne)
AG_BINARY_METHOD(lt)
AG_BINARY_METHOD(le)
AG_BINARY_METHOD(gt)
AG_BINARY_METHOD(ge)
#undef AG_BINARY_METHOD
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> mode) const { return ag::div(*this, o, mode); }
Tensor Tensor::div(Scalar o, std::optional<std::string_view> mode) const { return ag::div(*this, o, mode); }
Tensor Tensor::maximum(const Tensor& o) const { return ag::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ag::minimum(*this, o); }
Tensor Tensor::max(const Tensor& o) const { return ag::maximum(*this, o); }
Tensor Tensor::min(const Tensor& o) const { return ag::minimum(*this, o); }
Tensor Tensor::atan2(const Tensor& o) const { return ag::atan2(*this, o); }
Tensor Tensor::copysign(const Tensor& o) const { return ag::copysign(*this, o); }
Tensor Tensor::logaddexp(const Tensor& o) const { return ag::logaddexp(*this, o); }
Tensor Tensor::lerp(const Tensor& end, Scalar w) const { return ag::lerp(*this, end, w.to_double()); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& w) const { return ag::lerp(*this, end, w); }
Tensor Tensor::matmul(const Tensor& o) const { return ag::matmul(*this, o); }

// ---- comparison, logic, selection ----
Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ag::isclose(*this, o, rtol, atol, equal_nan);
}
Tensor Tensor::logical_and(const Tensor& o) const { return ag::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ag::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ag::logical_xor(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ag::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ag::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ag::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return ag::bitwise_not(*this); }
Tensor Tensor::where(const Tensor& condition, const Tensor& o) const { return ag::where(condition, *this, o); }

// ---- softmax ----
Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype) const {
  return ag::softmax(in_dtype(*this, dtype), dim);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype) const {
  return ag::log_softmax(in_dtype(*this, dtype), dim);
}

// ---- reductions ----
// unbiased = true is correction 1 (Bessel's), false is 0.
Tensor Tensor::var() const { return ag::var(*this); }
Tensor Tensor::var(const std::vector<int64_t>& d, bool unbiased, bool k) const {
  return ag::var(*this, d, unbiased ? 1 : 0, k);
}
Tensor Tensor::std() const { return ag::std(*this); }
Tensor Tensor::std(const std::vector<int64_t>& d, bool unbiased, bool k) const {
  return ag::std(*this, d, unbiased ? 1 : 0, k);
}
Tensor Tensor::logsumexp(const std::vector<int64_t>& d, bool k) const { return ag::logsumexp(*this, d, k); }
Tensor Tensor::amax(const std::vector<int64_t>& d, bool k) const { return ag::amax(*this, d, k); }
Tensor Tensor::amin(const std::vector<int64_t>& d, bool k) const { return ag::amin(*this, d, k); }
Tensor Tensor::max() const { return ag::max(*this); }
std::pair<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return ag::max(*this, d, k); }
Tensor Tensor::min() const { return ag::min(*this); }
std::pair<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return ag::min(*this, d, k); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return arg_extreme(*this, d, k, true); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return arg_extreme(*this, d, k, false); }
Tensor Tensor::prod() const { return ag::prod(*this); }
Tensor Tensor::prod(int64_t d, bool k) const { return ag::prod(*this, d, k); }
Tensor Tensor::any() const { return ag::any(*this); }
Tensor Tensor::any(int64_t d, bool k) const { return ag::any(*this, d, k); }
Tensor Tensor::all() const { return ag::all(*this); }
Tensor Tensor::all(int64_t d, bool k) const { return ag::all(*this, d, k); }
Tensor Tensor::norm(double p) const { return ag::norm(*this, p); }
Tensor Tensor::norm(std::optional<double> p, const std::vector<int64_t>& d, bool k) const {
  return ag::norm(*this, p.value_or(2.0), d, k);
}

// ---- scans and sorting ----
Tensor Tensor::cumsum(int64_t d, std::optional<DType> dtype) const { return ag::cumsum(in_dtype(*this, dtype), d); }
Tensor Tensor::cumprod(int64_t d, std::optional<DType> dtype) const { return ag::cumprod(in_dtype(*this, dtype), d); }
Tensor Tensor::logcumsumexp(int64_t d) const { return ag::logcumsumexp(*this, d); }
std::pair<Tensor, Tensor> Tensor::cummax(int64_t d) const { return ag::cummax(*this, d); }
std::pair<Tensor, Tensor> Tensor::cummin(int64_t d) const { return ag::cummin(*this, d); }
std::pair<Tensor, Tensor> Tensor::sort(int64_t d, bool desc) const { return ag::sort(*this, d, desc); }
std::pair<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t d, bool desc) const {
  return ag::sort(*this, d, desc, stable.value_or(false));
}
Tensor Tensor::argsort(int64_t d, bool desc) const { return ag::argsort(*this, d, desc); }
std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool largest, bool sorted) const {
  return ag::topk(*this, k, d, largest, sorted);
}

}  // namespace ag
