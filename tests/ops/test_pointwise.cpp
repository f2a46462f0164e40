// Pointwise math and activations (ops/unary.cpp, ops/binary.cpp, ops/activation.cpp,
// nn/activation.h): PyTorch 1.13's values at special inputs (tests/ops/pointwise_specials.h), gradients at
// kinks, binary ops' special cases, errors, and the nn modules.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numbers>
#include <sstream>
#include <string>

#include "pointwise_specials.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

constexpr double kInf = pointwise_specials::kInf;
constexpr double kNaN = pointwise_specials::kNaN;

Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }
Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }
std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

// Element-for-element equality, NaN == NaN and -0 != 0.
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i])) return false;
  }
  return true;
}

// Distance in units in the last place of T (+-0 are one point); NaN only matches NaN.
template <class T>
int64_t ulps(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return INT64_MAX;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T v) {
    I i = std::bit_cast<I>(v);
    return i < 0 ? -int64_t(i & std::numeric_limits<I>::max()) : int64_t(i);
  };
  return std::abs(ordered(a) - ordered(b));
}

using UnaryFn = std::function<Tensor(const Tensor&)>;
// The ops of pointwise_specials.h by name; `exact` ones must match bit for bit.
// `known` marks the ops checked in a case of their own: sign (torch gives 0 for -0 and
// NaN) and gelu (erf is std::erf, as torch's).
struct SpecialOp {
  UnaryFn fn;
  bool exact = false;
  bool known = false;
};
const std::map<std::string, SpecialOp>& special_ops() {
  static const std::map<std::string, SpecialOp> ops = {
      {"tan", {[](auto& x) { return tan(x); }}},
      {"asin", {[](auto& x) { return asin(x); }}},
      {"acos", {[](auto& x) { return acos(x); }}},
      {"atan", {[](auto& x) { return atan(x); }}},
      {"sinh", {[](auto& x) { return sinh(x); }}},
      {"cosh", {[](auto& x) { return cosh(x); }}},
      {"asinh", {[](auto& x) { return asinh(x); }}},
      {"acosh", {[](auto& x) { return acosh(x); }}},
      {"atanh", {[](auto& x) { return atanh(x); }}},
      {"log2", {[](auto& x) { return log2(x); }}},
      {"log10", {[](auto& x) { return log10(x); }}},
      {"log1p", {[](auto& x) { return log1p(x); }}},
      {"expm1", {[](auto& x) { return expm1(x); }}},
      {"exp2", {[](auto& x) { return exp2(x); }}},
      {"floor", {[](auto& x) { return floor(x); }, true}},
      {"ceil", {[](auto& x) { return ceil(x); }, true}},
      {"round", {[](auto& x) { return round(x); }, true}},
      {"round decimals 1", {[](auto& x) { return round(x, 1); }, true}},
      {"round decimals -1", {[](auto& x) { return round(x, -1); }, true}},
      {"trunc", {[](auto& x) { return trunc(x); }, true}},
      {"frac", {[](auto& x) { return frac(x); }, true}},
      {"isinf", {[](auto& x) { return isinf(x); }, true}},
      {"isnan", {[](auto& x) { return isnan(x); }, true}},
      {"sign", {[](auto& x) { return sign(x); }, true, true}},
      {"isfinite", {[](auto& x) { return isfinite(x); }, true}},
      {"silu", {[](auto& x) { return silu(x); }}},
      {"softplus", {[](auto& x) { return softplus(x); }}},
      {"softplus beta 2 threshold 5", {[](auto& x) { return softplus(x, 2, 5); }}},
      {"leaky_relu", {[](auto& x) { return leaky_relu(x); }, true}},
      {"leaky_relu 0.2", {[](auto& x) { return leaky_relu(x, 0.2); }, true}},
      {"elu", {[](auto& x) { return elu(x); }}},
      {"elu 0.5", {[](auto& x) { return elu(x, 0.5); }}},
      {"celu", {[](auto& x) { return celu(x); }}},
      {"celu 0.5", {[](auto& x) { return celu(x, 0.5); }}},
      {"selu", {[](auto& x) { return selu(x); }}},
      {"relu6", {[](auto& x) { return relu6(x); }, true}},
      {"hardtanh", {[](auto& x) { return hardtanh(x); }, true}},
      {"hardtanh -2 0.5", {[](auto& x) { return hardtanh(x, -2, 0.5); }, true}},
      {"hardsigmoid", {[](auto& x) { return hardsigmoid(x); }}},
      {"hardswish", {[](auto& x) { return hardswish(x); }}},
      {"mish", {[](auto& x) { return mish(x); }}},
      {"logsigmoid", {[](auto& x) { return logsigmoid(x); }}},
      {"softsign", {[](auto& x) { return softsign(x); }}},
      {"gelu", {[](auto& x) { return gelu(x); }, false, true}},
      {"gelu tanh", {[](auto& x) { return gelu(x, GeluApprox::tanh); }}},
  };
  return ops;
}

// Runs op on 15 vectors of length 33 (two 16-wide bodies and a tail) where vector p
// holds kSpecials[(i + p) % 15] at position i: every special visits every position.
template <class T>
void check_specials(const std::string& name, const SpecialOp& op, const double (&want)[15]) {
  using pointwise_specials::kSpecials;
  constexpr int64_t n = 33;
  for (int p = 0; p < 15; ++p) {
    std::vector<T> in(n);
    for (int64_t i = 0; i < n; ++i) in[size_t(i)] = static_cast<T>(kSpecials[(i + p) % 15]);
    std::vector<double> out = op.fn(Tensor::from_vector(in)).template to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const int k = int((i + p) % 15);
      const T got = static_cast<T>(out[size_t(i)]), exp = static_cast<T>(want[k]);
      INFO(name, " ", sizeof(T) == 4 ? "f32" : "f64", " at x = ", kSpecials[k], " (position ", i, "): got ",
           double(got), ", torch ", double(exp));
      if (op.exact) {
        CHECK(same({double(got)}, {double(exp)}));
      } else {
        // A few ulps (libm vs PyTorch's vectorized paths); subnormal results may flush.
        const bool tiny =
            std::abs(got) < std::numeric_limits<T>::min() && std::abs(exp) < std::numeric_limits<T>::min();
        CHECK((tiny || ulps(got, exp) <= 4));
      }
    }
  }
}

}  // namespace

// ---- special values ---------------------------------------------------------------------
void check_all_specials(bool known) {
  const auto& ops = special_ops();
  for (const auto& e : pointwise_specials::kExpected) {
    auto it = ops.find(e.op);
    REQUIRE_MESSAGE(it != ops.end(), "no op for ", e.op);
    if (it->second.known != known) continue;
    check_specials<double>(e.op, it->second, e.f64);
    check_specials<float>(e.op, it->second, e.f32);
  }
  CHECK(ops.size() == std::size(pointwise_specials::kExpected));
}

TEST_CASE("pointwise ops match torch 1.13 at 0, -0, +-1, +-0.5, +-2.5, 1e-310, +-inf, NaN, +-20, 1e30") {
  check_all_specials(false);
}

// d/dx at each special in f64 (1-element tensors, as the generator), within a few ulps:
// backward formulas are PyTorch's, so NaN and infinities come out where PyTorch's do.
TEST_CASE("pointwise gradients match torch 1.13 at the special values") {
  for (const auto& e : pointwise_specials::kExpected) {
    const SpecialOp& op = special_ops().at(e.op);
    if (!e.has_grad || op.known) continue;  // gelu at -20: see test_parity_semantics
    for (int k = 0; k < 15; ++k) {
      Tensor x = f64({pointwise_specials::kSpecials[k]}).requires_grad_();
      op.fn(x).backward(f64({1}));
      const double got = vals(x.grad())[0];
      INFO(std::string(e.op), " grad at x = ", pointwise_specials::kSpecials[k], ": got ", got, ", torch ", e.grad[k]);
      const bool tiny = std::abs(got) < 1e-300 && std::abs(e.grad[k]) < 1e-300;
      CHECK((tiny || ulps(got, e.grad[k]) <= 8));
    }
  }
}

// sign and gelu, the `known` ops of SpecialOp.
TEST_CASE("sign and gelu (erf) match torch 1.13 at special values") { check_all_specials(true); }

TEST_CASE("round: half to even; decimals as torch.round(x, decimals=d)") {
  // torch 1.13: torch.round([0.5, 1.5, 2.5, -0.5, -2.5]) = [0, 2, 2, -0, -2]
  CHECK(same(vals(round(f64({0.5, 1.5, 2.5, -0.5, -2.5}))), {0, 2, 2, -0.0, -2}));
  // torch.round(x, decimals=1) = [1.2, 1.4, 123.5, -0.0]; decimals=-2 = [1200, 1400, -0.0]
  CHECK(same(vals(round(f64({1.25, 1.35, 123.5, -0.05}), 1)), {1.2, 1.4, 123.5, -0.0}));
  CHECK(same(vals(round(f64({1250, 1350, -15}), -2)), {1200, 1400, -0.0}));
  // A non-contiguous input.
  Tensor x = f64({0.5, 9, 1.5, 9, 2.5, 9}).slice(0, 0, 6, 2);
  CHECK(same(vals(round(x)), {0, 2, 2}));
}

// ---- gradients at kinks (torch 1.13, f64, sum().backward()) ------------------------------
TEST_CASE("activation gradients at their kinks follow PyTorch") {
  auto grad_of = [](const UnaryFn& f, const std::vector<double>& v) {
    Tensor x = leaf(v);
    f(x).sum().backward();
    return vals(x.grad());
  };
  // leaky_relu at 0 and -0 takes the slope.
  CHECK(same(grad_of([](auto& x) { return leaky_relu(x); }, {0, -0.0, 1, -2}), {0.01, 0.01, 1, 0.01}));
  // hardtanh: zero at both bounds; NaN passes g.
  CHECK(same(grad_of([](auto& x) { return hardtanh(x); }, {-1, 1, 0.5, -2, kNaN}), {0, 0, 1, 0, 1}));
  CHECK(same(grad_of([](auto& x) { return relu6(x); }, {0, 6, 3, 7}), {0, 0, 1, 0}));
  // hardsigmoid: 1/6 rounded to f32 even in f64, zero at +-3.
  CHECK(same(grad_of([](auto& x) { return hardsigmoid(x); }, {-3, 3, 0, 4}), {0, 0, 0.1666666716337204, 0}));
  CHECK(same(grad_of([](auto& x) { return hardswish(x); }, {-3, 3, 0, 4, -4}), {-0.5, 1.5, 0.5, 1, 0}));
  // elu(alpha = 0.5) at 0 takes the negative branch: alpha exp(0).
  CHECK(tc::diff(Tensor::from_vector(grad_of([](auto& x) { return elu(x, 0.5); }, {0, -1, 1})),
                 {0.5, 0.18393972058572117, 1}) == "");
  // softplus(beta 2, threshold 1): x itself once 2x > 1, with gradient 1.
  CHECK(tc::diff(Tensor::from_vector(grad_of([](auto& x) { return softplus(x, 2, 1); }, {0.5, 0.6, 0})),
                 {0.7310585786300049, 1, 0.5}) == "");
  // Rounding: zeros, recorded; frac: ones.
  CHECK(same(grad_of([](auto& x) { return floor(x); }, {1.5, -1.5}), {0, 0}));
  CHECK(same(grad_of([](auto& x) { return round(x, 2); }, {1.5, -1.5}), {0, 0}));
  CHECK(same(grad_of([](auto& x) { return frac(x); }, {1.5, -1.5}), {1, 1}));
  CHECK(floor(leaf({1.5})).requires_grad());
  CHECK_FALSE(isnan(leaf({1.5})).requires_grad());
}

// ---- binary ops -------------------------------------------------------------------------
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
const std::map<std::string, std::pair<BinaryFn, bool>>& binary_ops() {  // op, exact
  static const std::map<std::string, std::pair<BinaryFn, bool>> ops = {
      {"atan2", {[](const Tensor& a, const Tensor& b) { return atan2(a, b); }, false}},
      {"copysign", {[](const Tensor& a, const Tensor& b) { return copysign(a, b); }, true}},
      {"logaddexp", {[](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }, false}},
      {"fmod", {[](const Tensor& a, const Tensor& b) { return fmod(a, b); }, true}},
      {"remainder", {[](const Tensor& a, const Tensor& b) { return remainder(a, b); }, true}},
      {"clamp min", {[](const Tensor& a, const Tensor& b) { return clamp(a, b, std::nullopt); }, true}},
      {"clamp max", {[](const Tensor& a, const Tensor& b) { return clamp(a, std::nullopt, b); }, true}},
      {"isclose", {[](const Tensor& a, const Tensor& b) { return isclose(a, b); }, true}},
      {"isclose equal_nan", {[](const Tensor& a, const Tensor& b) { return isclose(a, b, 1e-5, 1e-8, true); }, true}},
  };
  return ops;
}

// a (15, 1) against b (15): every pair of specials through the broadcasting loop.
template <class T>
void check_binary_specials(const pointwise_specials::ExpectedBinary& e) {
  using pointwise_specials::kSpecials;
  auto [fn, exact] = binary_ops().at(e.op);
  const double* want = sizeof(T) == 4 ? e.f32 : e.f64;
  std::vector<T> s(15);
  for (int k = 0; k < 15; ++k) s[size_t(k)] = static_cast<T>(kSpecials[k]);
  std::vector<double> got = fn(Tensor::from_vector(s, {15, 1}), Tensor::from_vector(s)).template to_vector<double>();
  for (int i = 0; i < 225; ++i) {
    const T g = static_cast<T>(got[size_t(i)]), w = static_cast<T>(want[i]);
    INFO(std::string(e.op), sizeof(T) == 4 ? " f32" : " f64", " (", kSpecials[i / 15], ", ", kSpecials[i % 15],
         "): got ", double(g), ", torch ", double(w));
    if (exact) {
      CHECK(same({double(g)}, {double(w)}));
    } else {
      const bool tiny = std::abs(g) < std::numeric_limits<T>::min() && std::abs(w) < std::numeric_limits<T>::min();
      CHECK((tiny || ulps(g, w) <= 4));
    }
  }
}

TEST_CASE("binary ops match torch 1.13 at every pair of special values, with gradients") {
  using pointwise_specials::kSpecials;
  for (const auto& e : pointwise_specials::kExpectedBinary) {
    check_binary_specials<double>(e);
    check_binary_specials<float>(e);
    BinaryFn fn = binary_ops().at(e.op).first;
    if (contains(e.op, "isclose")) continue;  // no gradient
    for (int i = 0; i < 225; ++i) {
      Tensor a = f64({kSpecials[i / 15]}).requires_grad_(), b = f64({kSpecials[i % 15]}).requires_grad_();
      fn(a, b).backward(f64({1}));
      INFO(std::string(e.op), " grads at (", kSpecials[i / 15], ", ", kSpecials[i % 15], "): got ", vals(a.grad())[0],
           ", ", vals(b.grad())[0], "; torch ", e.grad_a[i], ", ", e.grad_b[i]);
      CHECK(ulps(vals(a.grad())[0], e.grad_a[i]) <= 8);
      CHECK(ulps(vals(b.grad())[0], e.grad_b[i]) <= 8);
    }
  }
}

TEST_CASE("copysign: values and PyTorch's gradients (zero where self is 0, none to other)") {
  Tensor a = leaf({0, -2, 3, 0}), b = leaf({-1, 1, -0.0, 1});
  Tensor y = copysign(a, b);
  CHECK(same(vals(y), {-0.0, 2, -3, 0}));  // torch 1.13
  y.sum().backward();
  CHECK(same(vals(a.grad()), {0, -1, -1, 0}));
  CHECK(same(vals(b.grad()), {0, 0, 0, 0}));
}

TEST_CASE("fmod follows the dividend's sign, remainder the divisor's; gradients") {
  // torch 1.13: a = [5.5, -5.5, 5.5, -5.5], b = [2, 2, -2, -2]
  Tensor a = leaf({5.5, -5.5, 5.5, -5.5}), b = leaf({2, 2, -2, -2});
  Tensor y = fmod(a, b);
  CHECK(same(vals(y), {1.5, -1.5, 1.5, -1.5}));
  y.sum().backward();
  CHECK(same(vals(a.grad()), {1, 1, 1, 1}));
  CHECK(same(vals(b.grad()), {-2, 2, 2, -2}));  // -trunc(a / b)
  a.zero_grad(), b.zero_grad();
  y = remainder(a, b);
  CHECK(same(vals(y), {1.5, 0.5, -0.5, -1.5}));
  y.sum().backward();
  CHECK(same(vals(b.grad()), {-2, 3, 3, -2}));  // -floor(a / b)
  // torch: remainder([-3, 3, -0, 0, 5], [2, -2, 2, -2, inf]) = [1, -1, -0, 0, 5]; -1e-30 % 2 = 2
  CHECK(same(vals(remainder(f64({-3, 3, -0.0, 0, 5}), f64({2, -2, 2, -2, kInf}))), {1, -1, -0.0, 0, 5}));
  CHECK(same(vals(remainder(f64({-1e-30}), 2.0)), {2}));
  CHECK(same(vals(fmod(f64({-3, 3, 1, kInf}), f64({2, 2, 0, 1}))), {-1, 1, kNaN, kNaN}));
}

TEST_CASE("atan2, logaddexp and lerp at special values") {
  // torch 1.13: atan2 keeps the signs of zeros.
  CHECK(same(vals(atan2(f64({0, -0.0, 0, -0.0, 1, kInf}), f64({0, 0, -0.0, -0.0, kInf, kInf}))),
             {0, -0.0, std::numbers::pi, -std::numbers::pi, 0, std::numbers::pi / 4}));
  // logaddexp(inf, inf) = inf, (-inf, -inf) = -inf, (1000, 1000) = 1000 + ln 2.
  CHECK(same(vals(logaddexp(f64({kInf, -kInf, 1000, 0, kNaN}), f64({kInf, -kInf, 1000, -kInf, 0}))),
             {kInf, -kInf, 1000.6931471805599, 0, kNaN}));
  // lerp: start [1, 2], end [3, -2], weight [0.25, 0.75].
  Tensor s = leaf({1, 2}), e = leaf({3, -2}), w = leaf({0.25, 0.75});
  Tensor y = lerp(s, e, w);
  CHECK(same(vals(y), {1.5, -1}));
  y.sum().backward();
  CHECK(same(vals(s.grad()), {0.75, 0.25}));
  CHECK(same(vals(e.grad()), {0.25, 0.75}));
  CHECK(same(vals(w.grad()), {2, -4}));
  // torch.lerp([1, 1e30], [3, -1e30], [-0.6, 0.7]) (f64): the start formula below 0.5
  CHECK(same(vals(lerp(f64({1, 1e30}), f64({3, -1e30}), f64({-0.6, 0.7}))),
             {-0.19999999999999996, -3.999999999999999e+29}));
  CHECK(same(vals(lerp(f64({1, 2}), f64({3, 4}), 0.5)), {2, 3}));
}

TEST_CASE("clamp with tensor bounds: values, NaN, min > max, and clamp_backward_min_max") {
  // torch 1.13: x [0, 1, 2, 3, 5], min [1, 1, 1, 4, 0], max [2, 2, 2, 2, nan]
  Tensor x = leaf({0, 1, 2, 3, 5}), lo = leaf({1, 1, 1, 4, 0}), hi = leaf({2, 2, 2, 2, kNaN});
  Tensor y = clamp(x, lo, hi);
  CHECK(same(vals(y), {1, 1, 2, 2, kNaN}));
  y.sum().backward();
  CHECK(same(vals(x.grad()), {0, 1, 1, 0, 0}));
  CHECK(same(vals(lo.grad()), {1, 0, 0, 0, 0}));
  CHECK(same(vals(hi.grad()), {0, 0, 0, 1, 0}));
  // One bound: maximum / minimum, NaN-propagating; broadcast bounds reduce their grads.
  Tensor x2 = leaf({-1, 0.5, kNaN, 3}), b = leaf({0});
  Tensor y2 = clamp(x2, b, std::nullopt);
  CHECK(same(vals(y2), {0, 0.5, kNaN, 3}));
  y2.sum().backward();
  CHECK(same(vals(x2.grad()), {0, 1, 0, 1}));
  CHECK(same(vals(b.grad()), {1}));
  CHECK(same(vals(clamp(f64({-1, 0.5, 3}), std::nullopt, f64({0}))), {-1, 0, 0}));
  // The result takes the broadcast shape.
  CHECK(clamp(f64({1, 2, 3}), ag::zeros({2, 3}, DType::f64), std::nullopt).shape() == Shape{2, 3});
}

TEST_CASE("isclose and allclose as torch") {
  auto f = [](std::vector<float> v) { return Tensor::from_vector(v); };
  // torch 1.13: isclose([1, nan, inf, 1, 0], [1 + 1e-6, nan, inf, inf, 1e-9]) (f32)
  Tensor c = isclose(f({1, NAN, INFINITY, 1, 0}), f({1 + 1e-6f, NAN, INFINITY, INFINITY, 1e-9f}));
  CHECK(c.dtype() == DType::b8);
  CHECK(c.to_vector<bool>() == std::vector<bool>{true, false, true, false, true});
  CHECK(isclose(f({1, NAN}), f({1, NAN}), 1e-5, 1e-8, true).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(allclose(f64({kNaN, 1}), f64({kNaN, 1}), 1e-5, 1e-8, true));
  CHECK_FALSE(allclose(f64({kNaN, 1}), f64({kNaN, 1})));
  // Broadcasting: torch.allclose(ones(2, 1), ones(2)) is True; (2) vs (3) raises.
  CHECK(allclose(ag::ones({2, 1}), ag::ones({2})));
  CHECK_THROWS_AS(allclose(ag::ones({2}), ag::ones({3})), ShapeError);
  CHECK(allclose(Tensor::from_vector(std::vector<int64_t>{1, 2}), f64({1, 2})));  // f64 across dtypes
  CHECK_THROWS_MSG(isclose(f({1}), f({1}), -1), ValueError, "rtol must be greater than or equal to zero");
  CHECK_THROWS_MSG(isclose(f({1}), f({1}), 0, -1), ValueError, "atol must be greater than or equal to zero");
}

TEST_CASE("softmin, softsign and the gelu string option") {
  // torch 1.13: softmin([[0, 1]], dim=1) = [[0.7310585786300049, 0.26894142136999516]]
  CHECK(tc::diff(softmin(Tensor::from_vector(std::vector<double>{0, 1}, {1, 2}), 1),
                 {0.7310585786300049, 0.26894142136999516}) == "");
  CHECK(same(vals(softsign(f64({0, -0.0, 1, -3}))), {0, -0.0, 0.5, -0.75}));
  Tensor x = f64({-1, 0.5, 2});
  CHECK(same(vals(gelu(x, "tanh")), vals(gelu(x, GeluApprox::tanh))));
  CHECK(same(vals(gelu(x, "none")), vals(gelu(x))));
}

// ---- errors -----------------------------------------------------------------------------
TEST_CASE("pointwise errors name the op, shapes and dtypes") {
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, 2});
  CHECK_THROWS_MSG(tan(i), DTypeError, "tan: expected a floating tensor");
  CHECK_THROWS_MSG(silu(i), DTypeError, "silu: expected a floating tensor");
  CHECK_THROWS_MSG(hardtanh(i), DTypeError, "hardtanh: expected a floating tensor");
  CHECK_THROWS_MSG(atan2(f64({1}), ag::ones({1})), DTypeError, "atan2: dtypes f64 and f32 differ");
  CHECK_THROWS_AS(fmod(ag::ones({2}, DType::f64), ag::ones({3}, DType::f64)), ShapeError);
  CHECK_THROWS_AS(lerp(ag::ones({2}, DType::f64), ag::ones({2}, DType::f64), ag::ones({3}, DType::f64)), ShapeError);
  CHECK_THROWS_MSG(clamp(f64({1}), std::optional<Tensor>{}, std::optional<Tensor>{}), ValueError,
                   "clamp: at least one of min or max must be given");
  CHECK_THROWS_MSG(celu(f64({1}), 0), ValueError, "celu: alpha cannot be 0");
  CHECK_THROWS_MSG(gelu(f64({1}), "foo"), ValueError, "gelu: approximate must be");
  // Integer predicates are all false, as in PyTorch.
  CHECK(isnan(i).to_vector<bool>() == std::vector<bool>{false, false});
  CHECK(isinf(i).to_vector<bool>() == std::vector<bool>{false, false});
}

// ---- nn modules -------------------------------------------------------------------------
namespace {
std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}
}  // namespace

TEST_CASE("activation modules: forward equals the functional form; printing") {
  Tensor x = randn({3, 4}, DType::f64);
  auto eq_fn = [&](auto module, const Tensor& want) { return same(vals(module(x)), vals(want)); };
  CHECK(eq_fn(nn::SiLU(), silu(x)));
  CHECK(eq_fn(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(1)), softplus(x, 2, 1)));
  CHECK(eq_fn(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)), leaky_relu(x, 0.2)));
  CHECK(eq_fn(nn::ELU(nn::ELUOptions().alpha(0.5)), elu(x, 0.5)));
  CHECK(eq_fn(nn::CELU(nn::CELUOptions().alpha(2)), celu(x, 2)));
  CHECK(eq_fn(nn::SELU(), selu(x)));
  CHECK(eq_fn(nn::ReLU6(), relu6(x)));
  CHECK(eq_fn(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.25)), hardtanh(x, -0.5, 0.25)));
  CHECK(eq_fn(nn::Hardsigmoid(), hardsigmoid(x)));
  CHECK(eq_fn(nn::Hardswish(), hardswish(x)));
  CHECK(eq_fn(nn::Mish(), mish(x)));
  CHECK(eq_fn(nn::LogSigmoid(), logsigmoid(x)));
  CHECK(eq_fn(nn::Softsign(), softsign(x)));
  CHECK(eq_fn(nn::Softmin(1), softmin(x, 1)));
  CHECK(eq_fn(nn::Tanh(), tanh(x)));
  CHECK(eq_fn(nn::Sigmoid(), sigmoid(x)));
  CHECK(eq_fn(nn::Softmax(nn::SoftmaxOptions(0)), softmax(x, 0)));
  CHECK(eq_fn(nn::LogSoftmax(-1), log_softmax(x, -1)));
  CHECK(same(vals(nn::functional::silu(x)), vals(silu(x))));

  // PyTorch's repr (numbers as C++ prints them, like the other modules).
  CHECK(str(*nn::Softplus()) == "Softplus(beta=1, threshold=20)");
  CHECK(str(*nn::LeakyReLU()) == "LeakyReLU(negative_slope=0.01)");
  CHECK(str(*nn::ELU()) == "ELU(alpha=1)");
  CHECK(str(*nn::CELU(nn::CELUOptions().alpha(0.5))) == "CELU(alpha=0.5)");
  CHECK(str(*nn::Hardtanh()) == "Hardtanh(min_val=-1, max_val=1)");
  CHECK(str(*nn::Softmax(1)) == "Softmax(dim=1)");
  CHECK(str(*nn::Softmin(-1)) == "Softmin(dim=-1)");
  CHECK(str(*nn::LogSoftmax(1)) == "LogSoftmax(dim=1)");
  CHECK(str(*nn::SiLU()) == "SiLU");
  CHECK(str(*nn::ReLU6()) == "ReLU6");
  CHECK(str(*nn::Tanh()) == "Tanh");
  CHECK(contains(str(*nn::Sequential(nn::Linear(2, 3), nn::Mish(), nn::Hardswish())), "(1): Mish"));

  CHECK(contains(error_of<ValueError>([] { nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(1)); }),
                 "Hardtanh: max_val must be greater than min_val"));
  CHECK(contains(error_of<ValueError>([] { nn::CELU(nn::CELUOptions().alpha(0)); }), "CELU: alpha cannot be 0"));
}
