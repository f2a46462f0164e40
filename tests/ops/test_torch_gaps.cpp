// Ops where a ported op test suite found attograd narrower than PyTorch (issue 24):
// integer and mixed remainder / fmod, div with rounding_mode, integer linspace, normalize
// with p <= 0, scaled_dot_product_attention refusing causal with a mask. Literals marked
// "torch 1.13" were printed once by /usr/bin/python3 with torch 1.13 (float64 unless said
// otherwise).
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/detail/attention.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tensor_checks.h"

using namespace ag;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v, {int64_t(v.size())}); }
Tensor f32(const std::vector<float>& v) { return Tensor::from_vector(v, {int64_t(v.size())}); }
Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_vector(v, {int64_t(v.size())}); }
Tensor i32(const std::vector<int32_t>& v) { return Tensor::from_vector(v, {int64_t(v.size())}); }
}  // namespace

// ---- remainder / fmod ------------------------------------------------------------------
TEST_CASE("remainder and fmod: integer operands stay integral (torch 1.13)") {
  Tensor a = i64({-4, 7, 5, -7, 7}), b = i64({2, -3, 8, 2, 3});
  Tensor r = remainder(a, b), f = fmod(a, b);
  CHECK(r.dtype() == DType::i64);
  CHECK(f.dtype() == DType::i64);
  CHECK(tc::diff(r, {0, -2, 5, 1, 1}) == "");  // the divisor's sign
  CHECK(tc::diff(f, {0, 1, 5, -1, 1}) == "");  // the dividend's sign
  // i32 % 0-d i64 stays i32 (a 0-d operand does not promote within a category).
  Tensor r32 = remainder(i32({-7, 7}), full(Shape{}, 3, DType::i64));
  CHECK(r32.dtype() == DType::i32);
  CHECK(tc::diff(r32, {2, 1}) == "");
  CHECK(remainder(i32({-7, 7}), 3).dtype() == DType::i32);
  CHECK(tc::diff(remainder(i64({-7, 7}), 3), {2, 1}) == "");
  CHECK(tc::diff(fmod(i64({-7, 7}), -3), {-1, 1}) == "");
  // INT64_MIN % -1 is 0 (the hardware's idiv would trap; torch 1.13 dies of SIGFPE).
  CHECK(tc::diff(remainder(i64({kMin64, 5}), i64({-1, -1})), {0, 0}) == "");
  CHECK(tc::diff(fmod(i64({kMin64}), i64({-1})), {0.0}) == "");
  // Integer division by zero throws, as div's integer kernels do.
  CHECK_THROWS_MSG(remainder(i64({1, 2}), i64({1, 0})), ValueError,
                   "remainder: integer division by zero (ZeroDivisionError: 2 / 0)");
  CHECK_THROWS_MSG(fmod(i32({1}), 0), ValueError, "fmod: integer division by zero");
  CHECK_THROWS_AS(remainder(i64({1, 2}), i64({1, 2, 3})), ShapeError);
}

TEST_CASE("remainder and fmod: mixed int / float operands promote (torch 1.13)") {
  Tensor r = remainder(i32({-4, 7, 5}), f32({2.5f, -3.0f, 8.0f}));
  CHECK(r.dtype() == DType::f32);
  CHECK(tc::diff(r, {1, -2, 5}) == "");
  Tensor f = fmod(i64({-7, 7}), 2.5);  // a float scalar makes the default float dtype
  CHECK(f.dtype() == DType::f32);
  CHECK(tc::diff(f, {-2, 2}) == "");
  CHECK(fmod(f64({1.5}), i64({1})).dtype() == DType::f64);
  CHECK(tc::diff(remainder(f64({-5.5}), i64({2})), {0.5}) == "");
  // Float gradients are unchanged: the int operand is constant.
  Tensor x = f64({5.5, -5.5}).requires_grad_();
  remainder(x, i64({2, 2})).sum().backward();
  CHECK(tc::diff(x.grad(), {1, 1}) == "");
}

// ---- div(a, b, rounding_mode) --------------------------------------------------------------
TEST_CASE("div with rounding_mode: trunc and floor as torch.div (torch 1.13)") {
  Tensor x = f64({-7, 7, -7.5, 0.5, -0.5}), y = f64({2, 2, -2, 2, 2});
  CHECK(tc::diff(div(x, y, "trunc"), {-3, 3, 3, 0, -0.0}) == "");
  CHECK(std::signbit(div(x, y, "trunc").to_vector<double>()[4]));  // trunc(-0.25) = -0
  CHECK(tc::diff(div(x, y, "floor"), {-4, 3, 3, 0, -1}) == "");
  CHECK(tc::diff(div(x, y, std::nullopt), {-3.5, 3.5, 3.75, 0.25, -0.25}) == "");
  CHECK(tc::diff(div(f64({1, -1, 0}), f64({0, 0, 0}), "trunc"), {kInf, -kInf, std::nan("")}) == "");
  // Integers keep their dtype; the quotient rounds toward 0 or -inf.
  Tensor t = div(i64({-7, 7}), i64({2, -2}), "trunc");
  CHECK(t.dtype() == DType::i64);
  CHECK(tc::diff(t, {-3, -3}) == "");
  CHECK(tc::diff(div(i64({-7, 7}), i64({2, -2}), "floor"), {-4, -4}) == "");
  CHECK(div(i32({-7, 7}), 2, "floor").dtype() == DType::i32);
  CHECK(tc::diff(div(i32({-7, 7}), 2, "floor"), {-4, 3}) == "");
  Tensor m = div(i64({-7, 7}), 2.0, "trunc");  // a float scalar promotes
  CHECK(m.dtype() == DType::f32);
  CHECK(tc::diff(m, {-3, 3}) == "");
  CHECK(tc::diff(div(i64({kMin64}), i64({-1}), "trunc"), {double(kMin64)}) == "");  // wraps, no SIGFPE
  CHECK_THROWS_MSG(div(i64({1}), i64({0}), "trunc"), ValueError, "div: integer division by zero");
  CHECK_THROWS_MSG(div(x, y, "round"), ValueError,
                   "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
  // A rounded quotient has gradient 0 (torch: zeros, not an error).
  Tensor a = f64({1.5, -2.5}).requires_grad_(), b = f64({0.5, 2}).requires_grad_();
  Tensor q = div(a, b, "floor");
  CHECK(q.requires_grad());
  q.sum().backward();
  CHECK(tc::diff(a.grad(), {0, 0}) == "");
  CHECK(tc::diff(b.grad(), {0, 0}) == "");
}

// ---- linspace with an integer dtype ---------------------------------------------------------
TEST_CASE("linspace: integer dtypes compute in double and truncate (torch 1.13)") {
  Tensor a = linspace(5, 10, 3, DType::i32);
  CHECK(a.dtype() == DType::i32);
  CHECK(tc::diff(a, {5, 7, 10}) == "");
  CHECK(tc::diff(linspace(0, 10, 4, DType::i64), {0, 3, 6, 10}) == "");
  CHECK(tc::diff(linspace(10, 0, 4, DType::i64), {10, 6, 3, 0}) == "");
  CHECK(tc::diff(linspace(-3, 3, 5, DType::i32), {-3, -1, 0, 1, 3}) == "");
  CHECK(tc::diff(linspace(0, 1, 7, DType::i64), {0, 0, 0, 0, 0, 0, 1}) == "");
  CHECK(tc::diff(linspace(4, 9, 1, DType::i64), {4}) == "");
  CHECK(linspace(4, 9, 0, DType::i64).numel() == 0);
}

// ---- normalize with p <= 0 ----------------------------------------------------------------
TEST_CASE("normalize: p = 0, negative p and -inf as torch's F.normalize (torch 1.13)") {
  // x (2, 4); the first row holds a 0, so its negative-order norm is 0 (clamped to eps).
  const std::vector<double> xv{3, 0, -4, 1, 1, 2, -2, 0.5};
  Tensor w = Tensor::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
  struct Case {
    double p;
    std::vector<double> y, grad;
  };
  const Case cases[] = {
      {0.0,
       {1.0, 0.0, -1.3333333333333333, 0.3333333333333333, 0.25, 0.5, -0.5, 0.125},
       {0.3333333333333333, 0.6666666666666666, 1.0, 1.3333333333333333, 0.25, 0.5, 0.75, 1.0}},
      {-1.0, {3e12, 0.0, -4e12, 1e12, 4.0, 8.0, -8.0, 2.0}, {1e12, 2e12, 3e12, 4e12, 3.0, 7.75, 12.25, 12.0}},
      {-2.5,
       {3e12, 0.0, -4e12, 1e12, 2.1792010967026494, 4.358402193405299, -4.358402193405299, 1.0896005483513247},
       {1e12, 2e12, 3e12, 4e12, 1.8683488312449419, 4.330926475298756, 6.565079008214492, 5.199912469173063}},
      {-kInf, {3e12, 0.0, -4e12, 1e12, 2.0, 4.0, -4.0, 1.0}, {1e12, 2e12, 3e12, 4e12, 2.0, 4.0, 6.0, 4.0}},
  };
  for (const Case& c : cases) {
    INFO("p = ", c.p);
    Tensor x = Tensor::from_vector(xv, {2, 4}).requires_grad_();
    Tensor y = normalize(x, c.p, 1);
    CHECK(tc::diff(y, c.y, 1e-15) == "");
    (y * w).sum().backward();
    CHECK(tc::diff(x.grad(), c.grad, 1e-14) == "");
  }
}

// ---- norms -------------------------------------------------------------------------------
TEST_CASE("linalg_vector_norm, norm, linalg_matrix_norm, cdist: torch's values and zero gradients (torch 1.13)") {
  Tensor x = Tensor::from_vector(std::vector<double>{3, -4, 0, 0, 0, 0}, {2, 3}).requires_grad_();
  CHECK(linalg_vector_norm(x).shape() == Shape{});
  CHECK(tc::diff(linalg_vector_norm(x), {5.0}) == "");
  CHECK(tc::diff(linalg_vector_norm(x, 2.0, {1}), {5, 0}) == "");
  CHECK(tc::diff(linalg_vector_norm(x, kInf, {1}), {4, 0}) == "");
  CHECK(tc::diff(linalg_vector_norm(x, 0.0, {1}), {2, 0}) == "");
  CHECK(tc::diff(linalg_vector_norm(x, -1.0, {1}), {0, 0}) == "");
  Tensor k = linalg_vector_norm(x, 3.0, {0, 1}, true);
  CHECK(k.shape() == Shape{1, 1});
  CHECK(tc::diff(k, {4.497941445275415}, 1e-15) == "");
  // The zero row's gradient is 0, not the NaN of sqrt(sum(x^2)).
  sum(norm(x, 2.0, {1})).backward();
  CHECK(tc::diff(x.grad(), {0.6, -0.8, 0, 0, 0, 0}, 1e-15) == "");
  CHECK(tc::diff(linalg_matrix_norm(arange(0, 12, 1, DType::f64).reshape({2, 2, 3})),
                 {7.416198487095663, 21.236760581595302}, 1e-15) == "");
  CHECK(tc::diff(frobenius_norm(Tensor::from_vector(std::vector<double>{3, 4})), {5}) == "");

  Tensor a = Tensor::from_vector(std::vector<double>{0, 0, 1, 2}, {2, 2}).requires_grad_();
  Tensor b = Tensor::from_vector(std::vector<double>{0, 0, 4, 6, 1, 2}, {3, 2});
  Tensor d = cdist(a, b);
  CHECK(d.shape() == Shape{2, 3});
  CHECK(tc::diff(d, {0, 7.211102550927978, 2.23606797749979, 2.23606797749979, 5, 0}, 1e-15) == "");
  sum(d).backward();  // two zero distances: gradient 0 there, as torch's
  CHECK(tc::diff(a.grad(), {-1.001913791725187, -1.7264774853377596, -0.15278640450004205, 0.09442719099991581},
                 1e-14) == "");
  CHECK(tc::diff(cdist(a, b, 1.0), {0, 10, 3, 3, 7, 0}) == "");

  CHECK_THROWS_MSG(linalg_vector_norm(x, 2.0, {1, -1}), ValueError, "linalg_vector_norm: dim -1 appears twice");
  CHECK_THROWS_MSG(linalg_vector_norm(x, 2.0, {2}), IndexError, "linalg_vector_norm");
  CHECK_THROWS_MSG(linalg_matrix_norm(x, "nuc"), ValueError, "linalg_matrix_norm: ord 'nuc' is not supported");
  CHECK_THROWS_MSG(linalg_matrix_norm(x, 2.0), ValueError, "linalg_matrix_norm: ord 2 is not supported");
  CHECK_THROWS_MSG(linalg_matrix_norm(x, -2.0), ValueError, "linalg_matrix_norm: ord -2 is not supported");
  CHECK_THROWS_MSG(linalg_matrix_norm(x, 3.0), ValueError, "linalg_matrix_norm: ord 3 is not supported");
  CHECK_THROWS_MSG(cdist(a, Tensor::from_vector(std::vector<double>{1, 2, 3}, {1, 3})), ShapeError,
                   "cdist: x1 shape [2, 2] and x2 shape [1, 3]");
  CHECK_THROWS_MSG(norm(i64({1, 2})), DTypeError, "norm: linalg_vector_norm");
}

// ---- comparison and bitwise operators ---------------------------------------------------
TEST_CASE("comparison operators: x == 0, a < b, 2 >= x give bool tensors as LibTorch's") {
  Tensor x = f64({0, 1, 2, 3}), y = f64({3, 1, 0, 3});
  CHECK((x == 0).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK((x != y).to_vector<bool>() == std::vector<bool>{true, false, true, false});
  CHECK((x < y).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK((x <= y).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  CHECK((x > 1.5).to_vector<bool>() == std::vector<bool>{false, false, true, true});
  CHECK((2 >= x).to_vector<bool>() == std::vector<bool>{true, true, true, false});
  CHECK((1 < x).to_vector<bool>() == std::vector<bool>{false, false, true, true});
  CHECK((x == y).dtype() == DType::b8);
}

TEST_CASE("bitwise ops: bool masks and integers (torch 1.13)") {
  Tensor m = Tensor::from_vector(std::vector<bool>{true, true, false, false});
  Tensor n = Tensor::from_vector(std::vector<bool>{true, false, true, false});
  CHECK((m & n).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK((m | n).to_vector<bool>() == std::vector<bool>{true, true, true, false});
  CHECK((m ^ n).to_vector<bool>() == std::vector<bool>{false, true, true, false});
  CHECK((~m).to_vector<bool>() == std::vector<bool>{false, false, true, true});
  CHECK((m & n).dtype() == DType::b8);
  CHECK(logical_xor(f64({0, 2, 0}), f64({1, 3, 0})).to_vector<bool>() == std::vector<bool>{true, false, false});
  // torch.tensor([12, -7, 5]) & tensor([10, 3, -1]) = [8, 1, 5]; | = [14, -5, -1];
  // ^ = [6, -6, -6]; ~tensor([12, -7, 5]) = [-13, 6, -6]
  Tensor a = i64({12, -7, 5}), b = i64({10, 3, -1});
  CHECK((a & b).to_vector<int64_t>() == std::vector<int64_t>{8, 1, 5});
  CHECK((a | b).to_vector<int64_t>() == std::vector<int64_t>{14, -5, -1});
  CHECK((a ^ b).to_vector<int64_t>() == std::vector<int64_t>{6, -6, -6});
  CHECK((~a).to_vector<int64_t>() == std::vector<int64_t>{-13, 6, -6});
  // int32 & bool promotes to int32, as PyTorch.
  CHECK((i32({6, 7}) & Tensor::from_vector(std::vector<bool>{true, false})).dtype() == DType::i32);
  CHECK((i32({6, 7}) & Tensor::from_vector(std::vector<bool>{true, false})).to_vector<int32_t>() ==
        std::vector<int32_t>{0, 0});
  CHECK_THROWS_WITH_AS(f64({1.0}) & f64({1.0}), doctest::Contains("bitwise_and: not implemented for f64"), DTypeError);
  CHECK_THROWS_WITH_AS(~f32({1.0f}), doctest::Contains("bitwise_not: not implemented for f32"), DTypeError);
}

TEST_CASE("linalg_matrix_norm ord 1, -1, inf, -inf: max / min column and row sums (torch 1.13)") {
  const Tensor m = Tensor::from_vector(std::vector<double>{1, -2, 3, -4, 5, -6}, {2, 3});
  const double ords[] = {1, -1, kInf, -kInf};
  const double want[] = {9, 5, 15, 6};
  const std::vector<double> grads[] = {
      {0, 0, 1, 0, 0, -1}, {1, 0, 0, -1, 0, 0}, {0, 0, 0, -1, 1, -1}, {1, -1, 1, 0, 0, 0}};
  for (int i = 0; i < 4; ++i) {
    INFO("ord ", ords[i]);
    Tensor x = m.clone().requires_grad_();
    Tensor n = linalg_matrix_norm(x, ords[i]);
    CHECK(n.shape() == Shape{});
    CHECK(tc::diff(n, {want[i]}) == "");
    n.backward();
    CHECK(tc::diff(x.grad(), grads[i]) == "");
  }
  // Other dims, keepdim: b = arange(24) - 11 as (2, 3, 4) over dims (0, 2), torch's values.
  Tensor b = (arange(0, 24, 1, DType::f64) - 11.0).reshape({2, 3, 4});
  CHECK(tc::diff(linalg_matrix_norm(b, 1.0, {0, 2}), {12, 12, 12}) == "");
  CHECK(tc::diff(linalg_matrix_norm(b, kInf, {0, 2}), {38, 26, 42}) == "");
  CHECK(linalg_matrix_norm(b, kInf, {2, 0}, true).shape() == Shape({1, 3, 1}));
  CHECK_THROWS_MSG(linalg_matrix_norm(b, 1.0, {1, -2}), ValueError, "linalg_matrix_norm: dims must be different");
}

// ---- scaled_dot_product_attention: is_causal with an explicit attn_mask -----------------
TEST_CASE("scaled_dot_product_attention: causal with an explicit attn_mask throws, as PyTorch 2.x") {
  Generator gen(3);
  Tensor q = randn({2, 3, 4}, DType::f64, &gen), k = randn({2, 5, 4}, DType::f64, &gen),
         v = randn({2, 5, 4}, DType::f64, &gen);
  Tensor keep = gt(rand({3, 5}, DType::f64, &gen), 0.3);  // bool, true = takes part
  for (const Tensor& m : {keep, additive_mask(keep, DType::f64)}) {
    SdpaOptions o;
    o.causal = true;
    o.attn_mask = m;
    try {
      scaled_dot_product_attention(q, k, v, o);
      FAIL("no error");
    } catch (const ValueError& e) {
      CHECK(std::string(e.what()).rfind(
                "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True", 0) == 0);
    }
    // The migration: fold the causal mask into attn_mask. The modules' internal entry
    // point (both flags) gives the same.
    SdpaOptions folded;
    folded.attn_mask =
        m.dtype() == DType::b8 ? logical_and(m, causal_mask(3, 5)) : m + additive_mask(causal_mask(3, 5), DType::f64);
    Tensor want = scaled_dot_product_attention(q, k, v, folded).first;
    CHECK(tc::diff(ag::detail::sdpa_causal_and_mask(q, k, v, o).first, want, 1e-12) == "");
  }
  // Either alone is fine.
  SdpaOptions c;
  c.causal = true;
  CHECK(scaled_dot_product_attention(q, k, v, c).first.shape() == Shape({2, 3, 4}));
}
