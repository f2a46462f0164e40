// Elementwise math: broadcasting, unary functions against their formulas (contiguous and
// strided inputs), comparisons, where / masked_fill, logic, and dtype errors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

// 37 values in (-3, 3), none at 0 (kinks) and none repeated: long enough that the
// vectorized rows have a tail.
std::vector<double> sample_values() {
  std::vector<double> v;
  for (int i = 0; i < 37; ++i) v.push_back(-2.9 + 0.157 * i + (i % 2 ? 0.01 : -0.01));
  return v;
}

std::vector<double> map(const std::vector<double>& v, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double x : v) out.push_back(f(x));
  return out;
}

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  bool positive_only;  // log, sqrt, rsqrt: evaluated at |x| + 0.1
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](const Tensor& x) { return -x; }, [](double x) { return -x; }, false},
      {"exp", [](const Tensor& x) { return ag::exp(x); }, [](double x) { return std::exp(x); }, false},
      {"log", [](const Tensor& x) { return ag::log(x); }, [](double x) { return std::log(x); }, true},
      {"sqrt", [](const Tensor& x) { return ag::sqrt(x); }, [](double x) { return std::sqrt(x); }, true},
      {"rsqrt", [](const Tensor& x) { return ag::rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); }, true},
      {"abs", [](const Tensor& x) { return ag::abs(x); }, [](double x) { return std::fabs(x); }, false},
      {"sign", [](const Tensor& x) { return ag::sign(x); }, [](double x) { return x > 0 ? 1.0 : -1.0; }, false},
      {"tanh", [](const Tensor& x) { return ag::tanh(x); }, [](double x) { return std::tanh(x); }, false},
      {"sigmoid", [](const Tensor& x) { return ag::sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); },
       false},
      {"relu", [](const Tensor& x) { return ag::relu(x); }, [](double x) { return x > 0 ? x : 0.0; }, false},
      {"erf", [](const Tensor& x) { return ag::erf(x); }, [](double x) { return std::erf(x); }, false},
      {"sin", [](const Tensor& x) { return ag::sin(x); }, [](double x) { return std::sin(x); }, false},
      {"cos", [](const Tensor& x) { return ag::cos(x); }, [](double x) { return std::cos(x); }, false},
      {"square", [](const Tensor& x) { return ag::square(x); }, [](double x) { return x * x; }, false},
      {"gelu", [](const Tensor& x) { return ag::gelu(x); }, gelu_exact, false},
      {"gelu_tanh", [](const Tensor& x) { return ag::gelu(x, ag::GeluApprox::tanh); }, gelu_tanh, false},
      {"clamp", [](const Tensor& x) { return ag::clamp(x, -1.0, 0.5); },
       [](double x) { return std::min(std::max(x, -1.0), 0.5); }, false},
      {"clamp_min", [](const Tensor& x) { return ag::clamp(x, 0.25, std::nullopt); },
       [](double x) { return std::max(x, 0.25); }, false},
      {"clamp_max", [](const Tensor& x) { return ag::clamp(x, std::nullopt, -0.25); },
       [](double x) { return std::min(x, -0.25); }, false},
      {"pow3", [](const Tensor& x) { return ag::pow(x, 3.0); }, [](double x) { return x * x * x; }, false},
      {"pow2", [](const Tensor& x) { return ag::pow(x, 2.0); }, [](double x) { return x * x; }, false},
      {"pow_half", [](const Tensor& x) { return ag::pow(x, 0.5); }, [](double x) { return std::sqrt(x); }, true},
      {"add_scalar", [](const Tensor& x) { return x + 2.5; }, [](double x) { return x + 2.5; }, false},
      {"rsub_scalar", [](const Tensor& x) { return 2.5 - x; }, [](double x) { return 2.5 - x; }, false},
      {"mul_scalar", [](const Tensor& x) { return 3.0 * x; }, [](double x) { return 3 * x; }, false},
      {"rdiv_scalar", [](const Tensor& x) { return 1.0 / x; }, [](double x) { return 1 / x; }, false},
      {"div_scalar", [](const Tensor& x) { return x / 4.0; }, [](double x) { return x / 4; }, false},
  };
}

}  // namespace

// ---- broadcasting -----------------------------------------------------------------------

TEST_CASE("broadcast: [3, 1] + [1, 4] gives [3, 4]") {
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3, 1});
  Tensor b = Tensor::from_vector(std::vector<float>{10, 20, 30, 40}, {1, 4});
  Tensor c = a + b;
  CHECK(str(c.shape()) == "[3, 4]");
  CHECK(diff(c, {11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}) == "");
  CHECK(diff(b - a, {9, 19, 29, 39, 8, 18, 28, 38, 7, 17, 27, 37}) == "");
  CHECK(diff(a * b, {10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120}) == "");
  CHECK(diff(b / a, {10, 20, 30, 40, 5, 10, 15, 20, 10. / 3, 20. / 3, 10, 40. / 3}, 1e-7) == "");
}

TEST_CASE("broadcast: [2, 3, 4] + [4], [2, 1, 4] * [3, 1], and 0-d tensors") {
  Tensor x = tc::iota(24).view({2, 3, 4});
  Tensor b = Tensor::from_vector(std::vector<float>{100, 200, 300, 400});
  std::vector<double> want;
  for (int i = 0; i < 24; ++i) want.push_back(i + 100.0 * (i % 4 + 1));
  CHECK(diff(x + b, want) == "");
  CHECK(diff(b + x, want) == "");

  Tensor p = tc::iota(8).view({2, 1, 4});
  Tensor q = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3, 1});
  Tensor pq = p * q;
  CHECK(str(pq.shape()) == "[2, 3, 4]");
  want.clear();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back((4 * i + k) * (j + 1));
  CHECK(diff(pq, want) == "");

  Tensor s = ag::scalar_tensor(5.0);
  CHECK(str((x + s).shape()) == "[2, 3, 4]");
  CHECK(diff(s - ag::ones({2}), {4, 4}) == "");
  CHECK((s * s).dim() == 0);
  CHECK((s * s).item<float>() == 25.0f);
}

TEST_CASE("broadcast: incompatible shapes throw ShapeError naming both shapes") {
  Tensor a = ag::zeros({2, 3}), b = ag::zeros({4});
  CHECK_THROWS_MSG(a + b, ag::ShapeError, "add: shapes [2, 3] and [4] cannot be broadcast (dim -1: 3 vs 4)");
  CHECK_THROWS_MSG(a * b, ag::ShapeError, "mul: shapes [2, 3] and [4]");
  CHECK_THROWS_MSG(ag::sub(b, a), ag::ShapeError, "sub: shapes [4] and [2, 3]");
  CHECK_THROWS_MSG(ag::div(a, ag::zeros({3, 3})), ag::ShapeError,
                   "div: shapes [2, 3] and [3, 3] cannot be broadcast (dim -2: 2 vs 3)");
  CHECK_THROWS_MSG(ag::eq(a, b), ag::ShapeError, "eq: shapes [2, 3] and [4]");
  CHECK_THROWS_MSG(ag::where(ag::zeros({2, 3}, DType::b8), a, b), ag::ShapeError, "where: shapes [2, 3] and [4]");
  CHECK_THROWS_MSG(ag::broadcast_shapes({2, 3}, {4}, "op"), ag::ShapeError, "op: shapes [2, 3] and [4]");
  CHECK(str(ag::broadcast_shapes({5, 1, 3}, {4, 1}, "op")) == "[5, 4, 3]");
}

TEST_CASE("binary ops with mixed dtypes promote (full table in test_type_promotion)") {
  Tensor f = ag::ones({2}), d = ag::ones({2}, DType::f64), i = ag::ones({2}, DType::i64);
  CHECK((f + d).dtype() == DType::f64);
  CHECK((d * i).dtype() == DType::f64);
  CHECK(ag::lt(f, i).dtype() == DType::b8);
  CHECK(ag::where(ag::ones({2}, DType::b8), f, d).dtype() == DType::f64);
  CHECK(ag::maximum(f, i).dtype() == DType::f32);
  // matmul does not promote
  CHECK_THROWS_MSG(ag::matmul(ag::ones({2, 2}), ag::ones({2, 2}, DType::f64)), ag::DTypeError,
                   "matmul: dtypes f32 and f64 differ");
}

// ---- integer arithmetic -------------------------------------------------------------------

// PyTorch 1.13: a / b on integers is true division in f32; floor_divide rounds toward -inf:
//   [7, -7, 9, 0] / [2, 2, -4, 5] = [3.5, -3.5, -2.25, 0]
//   floor_divide(...)             = [3, -4, -3, 0]
//   floor_divide([7., -7., 0.5, -0.], [2., 2., -0.25, 3.]) = [3., -4., -2., -0.]
TEST_CASE("integer binary ops: exact values, true division, floor_divide, division by zero") {
  Tensor a = Tensor::from_vector(std::vector<int64_t>{7, -7, 9, 0});
  Tensor b = Tensor::from_vector(std::vector<int64_t>{2, 2, -4, 5});
  CHECK((a + b).dtype() == DType::i64);
  CHECK((a + b).to_vector<int64_t>() == std::vector<int64_t>{9, -5, 5, 5});
  CHECK((a * b).to_vector<int64_t>() == std::vector<int64_t>{14, -14, -36, 0});
  CHECK((a / b).dtype() == DType::f32);
  CHECK(diff(a / b, {3.5, -3.5, -2.25, 0}) == "");
  CHECK(diff(ag::arange(5) / 2.0, {0, 0.5, 1, 1.5, 2}) == "");
  CHECK(diff(ag::arange(5) / 2, {0, 0.5, 1, 1.5, 2}) == "");
  CHECK(diff(ag::arange(4) * 0.5, {0, 0.5, 1, 1.5}) == "");
  CHECK((a * 3).to_vector<int64_t>() == std::vector<int64_t>{21, -21, 27, 0});
  CHECK((a * 3).dtype() == DType::i64);
  CHECK((a * 3.0).dtype() == DType::f32);
  Tensor fd = ag::floor_divide(a, b);
  CHECK(fd.dtype() == DType::i64);
  CHECK(fd.to_vector<int64_t>() == std::vector<int64_t>{3, -4, -3, 0});
  CHECK(ag::floor_divide(a, 2).to_vector<int64_t>() == std::vector<int64_t>{3, -4, 4, 0});
  CHECK(ag::floor_divide(a, 2.0).dtype() == DType::f32);
  Tensor x = Tensor::from_vector(std::vector<double>{7, -7, 0.5, -0.0});
  Tensor y = Tensor::from_vector(std::vector<double>{2, 2, -0.25, 3});
  std::vector<double> q = ag::floor_divide(x, y).to_vector<double>();
  CHECK(q == std::vector<double>{3, -4, -2, 0});
  CHECK(std::signbit(q[3]));
  CHECK_THROWS_MSG(ag::floor_divide(a, ag::zeros({4}, DType::i64)), ag::ValueError,
                   "floor_divide: integer division by zero");
  CHECK(ag::div(a, ag::zeros({4}, DType::i64)).to_vector<float>()[0] == INFINITY);  // float division
  Tensor i32 = Tensor::from_vector(std::vector<int32_t>{-5, 3});
  CHECK(ag::clamp(i32, -2.0, 2.0).to_vector<int32_t>() == std::vector<int32_t>{-2, 2});
}

// ---- unary math against formulas ----------------------------------------------------------

TEST_CASE("unary: values against the formula, f32 and f64, contiguous") {
  const std::vector<double> v = sample_values();
  for (const UnaryCase& c : unary_cases()) {
    CAPTURE(c.name);
    std::vector<double> in = c.positive_only ? map(v, [](double x) { return std::fabs(x) + 0.1; }) : v;
    std::vector<double> want = map(in, c.ref);
    Tensor x64 = Tensor::from_vector(in);
    Tensor y64 = c.op(x64);
    CHECK(y64.dtype() == DType::f64);
    CHECK(diff(y64, want, 1e-13) == "");
    Tensor x32 = x64.to(DType::f32);
    // reference on the f32-rounded inputs
    std::vector<double> in32 = x32.to_vector<double>();
    Tensor y32 = c.op(x32);
    CHECK(y32.dtype() == DType::f32);
    CHECK(diff(y32, map(in32, c.ref), 2e-6) == "");
  }
}

TEST_CASE("unary: values against the formula on non-contiguous inputs") {
  // base (37, 3) f64; column 1 is a strided [37] view; the transpose is [3, 37]
  const std::vector<double> v = sample_values();
  for (const UnaryCase& c : unary_cases()) {
    CAPTURE(c.name);
    std::vector<double> in = c.positive_only ? map(v, [](double x) { return std::fabs(x) + 0.1; }) : v;
    std::vector<double> packed;
    for (double x : in) packed.insert(packed.end(), {x * 0.5, x, x * 0.25});
    for (DType dt : {DType::f64, DType::f32}) {
      Tensor base = Tensor::from_vector(packed, {37, 3}).to(dt);
      double tol = dt == DType::f64 ? 1e-13 : 2e-6;
      Tensor col = base.select(1, 1);  // stride 3
      REQUIRE_FALSE(col.is_contiguous());
      CHECK(diff(c.op(col), map(col.to_vector<double>(), c.ref), tol) == "");
      Tensor t = base.t();  // [3, 37], strides [1, 3]
      std::vector<double> tv;
      std::vector<double> bv = base.to_vector<double>();
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 37; ++i) tv.push_back(bv[static_cast<std::size_t>(3 * i + j)]);
      Tensor y = c.op(t);
      CHECK(str(y.shape()) == "[3, 37]");
      CHECK(diff(y, map(tv, c.ref), tol) == "");
    }
  }
}

TEST_CASE("binary: values on transposed and sliced operands") {
  Tensor a = tc::iota(12, DType::f64).view({3, 4});
  Tensor b = tc::iota(12, DType::f64).view({4, 3});
  Tensor s = a.t() * b + 1.0;  // (i, j): a(j, i) * b(i, j) + 1 = (4 j + i)(3 i + j) + 1
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) want.push_back((4 * j + i) * (3 * i + j) + 1.0);
  CHECK(diff(s, want) == "");
  Tensor every2 = a.slice(1, 0, 4, 2);                                        // columns 0, 2
  CHECK(diff(every2 - a.slice(1, 1, 4, 2), {-1, -1, -1, -1, -1, -1}) == "");  // cols 0, 2 minus 1, 3
  CHECK(diff(ag::pow(every2, ag::full({3, 2}, 2.0, DType::f64)), {0, 4, 16, 36, 64, 100}) == "");
  CHECK(diff(ag::maximum(a.t(), b), {0, 4, 8, 3, 5, 9, 6, 7, 10, 9, 10, 11}) == "");
  CHECK(diff(ag::minimum(a.t(), b), {0, 1, 2, 1, 4, 5, 2, 6, 8, 3, 7, 11}) == "");
}

TEST_CASE("unary: float-only ops reject integer tensors naming the op") {
  Tensor i = ag::ones({2}, DType::i64);
  CHECK_THROWS_MSG(ag::exp(i), ag::DTypeError, "exp: expected a floating dtype (f32, f64), got i64");
  CHECK_THROWS_MSG(ag::sigmoid(i), ag::DTypeError, "sigmoid: expected a floating dtype");
  CHECK_THROWS_MSG(ag::gelu(i), ag::DTypeError, "gelu: expected a floating tensor (f32, f64), got i64");
  CHECK_THROWS_MSG(ag::pow(i, 2), ag::DTypeError, "pow: expected a floating tensor");  // integer pow
  CHECK(ag::pow(i, 2.0).dtype() == DType::f32);                                        // promoted, as in PyTorch
  CHECK_THROWS_MSG(ag::clamp(ag::ones({2}, DType::b8), 0.0, 1.0), ag::DTypeError,
                   "clamp: expected a numeric dtype, got bool");
}

TEST_CASE("unary: special values: log(0), sqrt(-1), exp overflow") {
  Tensor x = Tensor::from_vector(std::vector<double>{0.0, -1.0, 1000.0});
  std::vector<double> l = ag::log(x).to_vector<double>();
  CHECK(l[0] == -INFINITY);
  CHECK(std::isnan(l[1]));
  CHECK(std::isnan(ag::sqrt(x).to_vector<double>()[1]));
  CHECK(ag::exp(x).to_vector<double>()[2] == INFINITY);
  CHECK(ag::sigmoid(Tensor::from_vector(std::vector<float>{-1000.f, 1000.f})).to_vector<float>() ==
        std::vector<float>{0.0f, 1.0f});
}

// ---- comparisons, logic, where, masked_fill ----------------------------------------------

TEST_CASE("compare: tensor and scalar forms return bool") {
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3, 4});
  Tensor b = Tensor::from_vector(std::vector<float>{4, 2, 1, 4});
  using B = std::vector<bool>;
  CHECK(ag::eq(a, b).dtype() == DType::b8);
  CHECK(ag::eq(a, b).to_vector<bool>() == B{false, true, false, true});
  CHECK(ag::ne(a, b).to_vector<bool>() == B{true, false, true, false});
  CHECK(ag::lt(a, b).to_vector<bool>() == B{true, false, false, false});
  CHECK(ag::le(a, b).to_vector<bool>() == B{true, true, false, true});
  CHECK(ag::gt(a, b).to_vector<bool>() == B{false, false, true, false});
  CHECK(ag::ge(a, b).to_vector<bool>() == B{false, true, true, true});
  CHECK(ag::eq(a, 2.0).dtype() == DType::b8);
  CHECK(ag::eq(a, 2.0).to_vector<bool>() == B{false, true, false, false});
  CHECK(ag::ne(a, 2.0).to_vector<bool>() == B{true, false, true, true});
  CHECK(ag::lt(a, 2.5).to_vector<bool>() == B{true, true, false, false});
  CHECK(ag::le(a, 2.0).to_vector<bool>() == B{true, true, false, false});
  CHECK(ag::gt(a, 2.5).to_vector<bool>() == B{false, false, true, true});
  CHECK(ag::ge(a, 3.0).to_vector<bool>() == B{false, false, true, true});
  // integer tensors, broadcasting, and NaN
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, 5}, {2, 1});
  Tensor j = Tensor::from_vector(std::vector<int64_t>{0, 5, 9});
  Tensor g = ag::gt(i, j);
  CHECK(str(g.shape()) == "[2, 3]");
  CHECK(g.to_vector<bool>() == B{true, false, false, true, false, false});
  Tensor n = Tensor::from_vector(std::vector<double>{NAN, 1.0});
  CHECK(ag::eq(n, n).to_vector<bool>() == B{false, true});
  CHECK(ag::ne(n, n).to_vector<bool>() == B{true, false});
  CHECK(ag::lt(n, 2.0).to_vector<bool>() == B{false, true});
}

TEST_CASE("logic: and, or, not, any, all, isfinite") {
  using B = std::vector<bool>;
  Tensor p = Tensor::from_vector(B{true, true, false, false});
  Tensor q = Tensor::from_vector(B{true, false, true, false});
  CHECK(ag::logical_and(p, q).to_vector<bool>() == B{true, false, false, false});
  CHECK(ag::logical_or(p, q).to_vector<bool>() == B{true, true, true, false});
  CHECK(ag::logical_not(p).to_vector<bool>() == B{false, false, true, true});
  CHECK((!q).to_vector<bool>() == B{false, true, false, true});
  CHECK(ag::any(p).item<bool>());
  CHECK_FALSE(ag::all(p).item<bool>());
  CHECK(ag::all(ag::logical_or(p, !p)).item<bool>());
  CHECK_FALSE(ag::any(ag::logical_and(p, !p)).item<bool>());
  // broadcasting: a column against a row
  Tensor col = Tensor::from_vector(B{true, false}, {2, 1});
  CHECK(ag::logical_and(col, q).to_vector<bool>() == B{true, false, true, false, false, false, false, false});
  Tensor f = Tensor::from_vector(std::vector<float>{1, INFINITY, -INFINITY, NAN});
  CHECK(ag::isfinite(f).to_vector<bool>() == B{true, false, false, false});
  CHECK(ag::isfinite(ag::ones({2}, DType::i64)).to_vector<bool>() == B{true, true});
  CHECK_THROWS_MSG(ag::logical_and(p, ag::ones({4})), ag::DTypeError,
                   "logical_and: expected bool tensors, got bool and f32");
  // logical_not of any dtype is x == 0 (PyTorch): -0 is false-y, NaN is truthy.
  Tensor fz = Tensor::from_vector(std::vector<float>{0.0f, -0.0f, NAN, 2.0f, -INFINITY});
  CHECK(ag::logical_not(fz).to_vector<bool>() == B{true, true, false, false, false});
  CHECK(ag::logical_not(fz.to(DType::f64)).to_vector<bool>() == B{true, true, false, false, false});
  Tensor iz = Tensor::from_vector(std::vector<int64_t>{0, 3, -1}, {3});
  CHECK(ag::logical_not(iz).dtype() == DType::b8);
  CHECK(ag::logical_not(iz).to_vector<bool>() == B{true, false, false});
  CHECK(ag::logical_not(iz.to(DType::i32)).to_vector<bool>() == B{true, false, false});
  CHECK(ag::logical_not(fz.slice(0, 0, 5, 2)).to_vector<bool>() == B{true, false, false});  // strided
}

TEST_CASE("where: picks from a or b, broadcasting, scalar forms") {
  Tensor cond = Tensor::from_vector(std::vector<bool>{true, false, true}, {1, 3});
  Tensor a = tc::iota(6).view({2, 3});
  Tensor b = Tensor::from_vector(std::vector<float>{-1, -2}, {2, 1});
  Tensor w = ag::where(cond, a, b);
  CHECK(str(w.shape()) == "[2, 3]");
  CHECK(diff(w, {0, -1, 2, 3, -2, 5}) == "");
  CHECK(diff(ag::where(cond, a, 9.0), {0, 9, 2, 3, 9, 5}) == "");
  CHECK(diff(ag::where(cond, 9.0, a), {9, 1, 9, 9, 4, 9}) == "");
  CHECK(diff(ag::where(ag::gt(a, 2.0), a, -a), {0, -1, -2, 3, 4, 5}) == "");
  CHECK_THROWS_MSG(ag::where(ag::ones({3}), a, b), ag::DTypeError, "where: condition must be bool, got f32");
}

TEST_CASE("masked_fill: out of place and in place, mask broadcasts") {
  Tensor x = tc::iota(6).view({2, 3});
  Tensor row_mask = Tensor::from_vector(std::vector<bool>{false, true, true});
  Tensor y = ag::masked_fill(x, row_mask, -5.0);
  CHECK(diff(y, {0, -5, -5, 3, -5, -5}) == "");
  CHECK(diff(x, {0, 1, 2, 3, 4, 5}) == "");  // unchanged
  Tensor m2 = ag::lt(x, 2.0);
  x.masked_fill_(m2, 100.0);
  CHECK(diff(x, {100, 100, 2, 3, 4, 5}) == "");
  Tensor xt = tc::iota(6).view({2, 3}).t();  // non-contiguous input
  CHECK(diff(ag::masked_fill(xt, ag::ge(xt, 4.0), 0.0), {0, 3, 1, 0, 2, 0}) == "");
  CHECK_THROWS_MSG(ag::masked_fill(x, ag::ones({3}), 0.0), ag::DTypeError, "masked_fill: mask must be bool, got f32");
  CHECK_THROWS_MSG(ag::masked_fill(ag::zeros({3}), ag::ones({2, 3}, DType::b8), 0.0), ag::ShapeError,
                   "masked_fill: mask shape [2, 3] cannot be broadcast to input shape [3]");
  CHECK_THROWS_MSG(ag::masked_fill(ag::zeros({3}), ag::ones({2}, DType::b8), 0.0), ag::ShapeError,
                   "masked_fill: shapes [2] and [3] cannot be broadcast");
}
