// Edge cases where attograd must give PyTorch's answer, each as a class: pow and its
// gradients at base 0 (every exponent sign), errors for squeeze / eye / clamp, and
// logical_not of every dtype. Reference values: PyTorch 1.13 (python3 -c "import torch ...").
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// NaN matches NaN; otherwise equal with the same sign (so -0 != +0).
std::string same(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok = (std::isnan(got[i]) && std::isnan(want[i])) ||
              (got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]));
    if (!ok)
      return "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  }
  return "";
}

Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }

}  // namespace

TEST_CASE("pow(x, e): std::pow on every element, body and tail alike (torch's sqrt / rsqrt at +-0.5)") {
  // [-1, 0, 0, 0]^-1 used to give [-1, 0, 0, 0] (the vector body said 0^-1 = 0).
  for (DType dt : {DType::f32, DType::f64}) {
    CHECK(same(ag::pow(f64({-1, 0, 0, 0}).to(dt), -1.0).to_vector<double>(), {-1, kInf, kInf, kInf}) == "");
    CHECK(same(ag::pow(f64({0, 0, 0, 0, 0}).to(dt), 0.0).to_vector<double>(), {1, 1, 1, 1, 1}) == "");
  }
  for (double e : {-2.0, -1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 1.0, 2.0, 3.0}) {
    std::vector<double> x{0.0, -0.0, -kInf, kInf, NAN, -1.5, 2.0, 1e-310, 0.0, -0.0, -kInf};
    std::vector<double> want;
    // PyTorch takes sqrt for 0.5 and rsqrt for -0.5 (so (-0)^0.5 = -0, (-inf)^0.5 = NaN,
    // (-0)^-0.5 = -inf; tests/fixtures/ops_special_values has torch's values).
    for (double v : x) want.push_back(e == 0.5 ? std::sqrt(v) : e == -0.5 ? 1.0 / std::sqrt(v) : std::pow(v, e));
    CAPTURE(e);
    CHECK(same(ag::pow(f64(x), e).to_vector<double>(), want) == "");
  }
}

TEST_CASE("pow gradients at base 0 follow PyTorch's formulas") {
  // Scalar exponent: dx = e == 0 ? 0 : g * (e * x^(e-1)). Values checked against PyTorch,
  // e = 0.5 at -0 gives -inf: 0.5 * (-0)^-0.5 through torch's rsqrt fast path.
  for (double e : {0.0, -1.0, 0.5, 1.0, 2.0, 3.0, -0.3}) {
    Tensor x = f64({0.0, -0.0, 2.0, -1.0}).requires_grad_();
    ag::pow(x, e).sum().backward();
    std::vector<double> want;
    for (double v : x.to_vector<double>())
      want.push_back(e == 0 ? 0.0 : e == 0.5 ? 0.5 / std::sqrt(v) : e * std::pow(v, e - 1));
    CAPTURE(e);
    CHECK(same(x.grad().to_vector<double>(), want) == "");
  }
  // Tensor exponent (PyTorch 1.13 output for these inputs):
  //   da = where(b == 0, 0, g * b * a^(b-1));  db = g * where(a == 0 & b >= 0, 0, out * log(a))
  Tensor a = f64({0, 0, 0, 2, -1, 0, -0.0}).requires_grad_();
  Tensor b = f64({0, 2, -1, 0, 3, 0.5, -2}).requires_grad_();
  Tensor y = ag::pow(a, b);
  CHECK(same(y.to_vector<double>(), {1, 0, kInf, 1, -1, 0, kInf}) == "");
  y.backward(ag::ones_like(y));
  CHECK(same(a.grad().to_vector<double>(), {0, 0, -kInf, 0, 3, kInf, kInf}) == "");
  CHECK(same(b.grad().to_vector<double>(), {0, 0, -kInf, std::log(2.0), NAN, 0, -kInf}) == "");
  // Broadcast exponent: gradients are summed back to each input's shape.
  Tensor a2 = f64({0, 1, 2, 3}).reshape({2, 2}).requires_grad_();
  Tensor b2 = f64({0, 2}).requires_grad_();
  ag::pow(a2, b2).sum().backward();
  CHECK(same(a2.grad().to_vector<double>(), {0, 2, 0, 6}) == "");
  // (row 0: 1^2 log 1 = 0; a vectorized log may be an ulp from std::log)
  CHECK(tc::diff(b2.grad(), {std::log(2.0), 9 * std::log(3.0)}, 1e-15) == "");
}

TEST_CASE("squeeze(dim): the dim must be in range for every ndim") {
  for (int64_t nd = 0; nd <= 3; ++nd) {
    Shape s;
    for (int64_t d = 0; d < nd; ++d) s.push_back(d == 1 ? 1 : 2);
    Tensor x = ag::zeros(s);
    const int64_t lo = nd > 0 ? -nd : -1, hi = nd > 0 ? nd - 1 : 0;
    for (int64_t dim = lo - 3; dim <= hi + 3; ++dim) {
      CAPTURE(nd);
      CAPTURE(dim);
      if (dim >= lo && dim <= hi) {
        CHECK_NOTHROW(x.squeeze(dim));
      } else {
        std::string msg = "squeeze: dim " + std::to_string(dim) + " is out of range for shape " + tc::str(s) +
                          " (expected " + std::to_string(lo) + " to " + std::to_string(hi) + ")";
        CHECK_THROWS_WITH_AS(x.squeeze(dim), msg.c_str(), ag::IndexError);
      }
    }
  }
  CHECK(ag::zeros(Shape{}).squeeze(-1).shape() == Shape{});
  CHECK_THROWS_MSG(ag::zeros(Shape{}).squeeze(10), ag::IndexError,
                   "squeeze: dim 10 is out of range for shape [] (expected -1 to 0)");
}

TEST_CASE("eye: m defaults to n; a negative m is a ValueError") {
  CHECK(ag::eye(3).shape() == Shape{3, 3});
  CHECK(ag::eye(3, 0).shape() == Shape{3, 0});
  CHECK(ag::eye(0, 5).shape() == Shape{0, 5});
  CHECK(tc::diff(ag::eye(2, 3, DType::f64), {1, 0, 0, 0, 1, 0}) == "");
  CHECK_THROWS_MSG(ag::eye(3, -3), ag::ShapeError, "eye: m must be >= 0, got -3 (shape [3, -3])");
  CHECK_THROWS_MSG(ag::eye(3, -1), ag::ShapeError, "eye: m must be >= 0, got -1");
}

TEST_CASE("clamp: needs at least one bound; NaN stays NaN") {
  CHECK_THROWS_MSG(ag::clamp(ag::zeros({2, 3}), std::optional<double>{}, std::optional<double>{}), ag::ValueError,
                   "clamp: at least one of min and max must be given (input shape [2, 3], dtype f32)");
  Tensor x = f64({NAN, -0.0, -5, 5, kInf, -kInf});
  CHECK(same(ag::clamp(x, -1.0, 1.0).to_vector<double>(), {NAN, -0.0, -1, 1, 1, -1}) == "");
  CHECK(same(ag::clamp(x, 0.5, std::optional<double>{}).to_vector<double>(), {NAN, 0.5, 0.5, 5, kInf, 0.5}) == "");
}

TEST_CASE("pow closures stay differentiable (create_graph)") {
  // d2/dx2 x^3 = 6x at x = 2, -1
  Tensor x = f64({2.0, -1.0}).requires_grad_();
  Tensor dx = ag::grad({ag::pow(x, 3.0).sum()}, {x}, {}, {}, /*create_graph=*/true)[0];
  CHECK(same(dx.to_vector<double>(), {12, 3}) == "");
  CHECK(same(ag::grad({dx.sum()}, {x})[0].to_vector<double>(), {12, -6}) == "");
  // Second derivatives of both pow forms against central differences, away from 0.
  Tensor a = f64({0.7, 1.3, 2.1}).requires_grad_(), b = f64({1.5, -0.4, 2.0}).requires_grad_();
  CHECK(ag::gradgradcheck([](const std::vector<Tensor>& in) { return ag::pow(in[0], in[1]); }, {a, b}));
  CHECK(ag::gradgradcheck([](const std::vector<Tensor>& in) { return ag::pow(in[0], -1.5); }, {a}));
}

// ---- errors name the op the caller called (issue 23) ---------------------------------
// A composite puts its own name in front of an inner op's error ("linear: matmul: ..."),
// keeping the error's type (detail::in_op). Each row calls a composite with a bad input.
TEST_CASE("errors of composite ops start with the composite's own name") {
  using namespace ag;
  const Tensor x = randn({2, 3}), x64 = randn({2, 3}, DType::f64), logits = randn({2, 4});
  const Tensor targets = Tensor::from_vector<int64_t>({1, 7});
  struct Row {
    const char* op;
    std::function<void()> call;
  };
  const std::vector<Row> table{
      {"layer_norm", [&] { layer_norm(x, {3}, ones({3}, DType::f64)); }},  // said "data: ..."
      {"layer_norm", [&] { layer_norm(x, {3}, {}, ones({3}, DType::f64)); }},
      {"rms_norm", [&] { rms_norm(x, {3}, ones({3}, DType::f64)); }},
      {"normalize", [&] { normalize(x, 2.0, 5); }},
      {"linear",
       [&] {
         linear(x, randn({4, 3}, DType::f64));
       }},  // said "matmul: ..."
      {"linear",
       [&] {
         linear(x, randn({4, 5}));
       }},
      {"linear",
       [&] {
         linear(x, randn({4, 3}), randn({5}));
       }},
      {"einsum",
       [&] {
         einsum("ij,jk->ik", {x, randn({4, 5})});
       }},
      {"cross_entropy", [&] { cross_entropy(logits, targets); }},  // said "nll_loss: ..."
      {"cross_entropy",
       [&] {
         cross_entropy(logits, Tensor::from_vector<int64_t>({1, 1, 1}));
       }},
      {"nll_loss", [&] { nll_loss(logits, targets); }},
      {"binary_cross_entropy", [&] { binary_cross_entropy(full({2}, 2.0), zeros({2})); }},
      {"binary_cross_entropy_with_logits",
       [&] {
         binary_cross_entropy_with_logits(x, zeros({3, 2}));
       }},
      {"mse_loss", [&] { mse_loss(x, zeros({4})); }},
      {"l1_loss", [&] { l1_loss(x, zeros({4})); }},
      {"smooth_l1_loss", [&] { smooth_l1_loss(x, zeros({4})); }},
      {"huber_loss", [&] { huber_loss(x, zeros({4})); }},
      {"kl_div", [&] { kl_div(x, zeros({4})); }},
      {"cosine_similarity",
       [&] {
         cosine_similarity(x, zeros({4, 3}));
       }},
      {"argmax", [&] { argmax(x, 5); }},  // said "max: ..."
      {"argmin",
       [&] {
         argmin(zeros({2, 0}), 1);
       }},
      {"std", [&] { ag::std(x, {5}); }},  // said "var: ..."
      {"var_mean", [&] { var_mean(x, {5}); }},
      {"std_mean", [&] { std_mean(x, {5}); }},
      {"logsumexp", [&] { logsumexp(x, {5}); }},
      {"softmin", [&] { softmin(x, 5); }},
      {"scaled_dot_product_attention",
       [&] {
         scaled_dot_product_attention(x, randn({2, 4}), randn({3, 3}));
       }},
      {"rotary_embedding",
       [&] {
         rotary_embedding(randn({2, 4}), randn({3, 4}), randn({3, 4}));
       }},
      {"rotary_cos_sin", [&] { rotary_cos_sin(int64_t(1) << 40, int64_t(1) << 20); }},
      {"keep_mask_from_lengths",
       [&] {
         keep_mask_from_lengths(Tensor::from_vector<int64_t>({2, 5}), 3);
       }},
      {"additive_mask", [&] { additive_mask(x); }},
      {"embedding", [&] { embedding(Tensor::from_vector<int64_t>({0}), x, 3); }},
  };
  for (const Row& r : table) {
    INFO(r.op);
    bool threw = false;
    try {
      r.call();
    } catch (const Error& e) {
      threw = true;
      const std::string m = e.what();
      INFO(m);
      CHECK(m.rfind(std::string(r.op) + ":", 0) == 0);
    }
    CHECK(threw);
  }
  // The type is kept, and the inner op's words follow the prefix.
  CHECK_THROWS_MSG(linear(x, randn({4, 3}, DType::f64)), DTypeError, "linear: ");
  CHECK_THROWS_MSG(argmax(x, 5), IndexError, "argmax: dim 5 is out of range");
  CHECK_THROWS_MSG(layer_norm(x, {3}, ones({3}, DType::f64)), DTypeError,
                   "layer_norm: weight dtype f64 differs from input dtype f32");
  CHECK_THROWS_MSG(cross_entropy(logits, targets), IndexError, "cross_entropy: target 7 is out of range for 4 classes");
}

TEST_CASE("sizes from the caller: typed errors before any allocation") {
  using namespace ag;
  // rotary_cos_sin(2^40, 2^20) leaked std::length_error from std::vector.
  CHECK_THROWS_MSG(rotary_cos_sin(int64_t(1) << 40, int64_t(1) << 20), ValueError,
                   "rotary_cos_sin: tables of length 1099511627776 x head_dim 1048576 are too large");
  CHECK_THROWS_AS(rotary_cos_sin(int64_t(1) << 30, int64_t(1) << 20), MemoryError);  // 2^53 bytes: no RAM for it
  CHECK_THROWS_MSG(rotary_cos_sin(2, 4, 10000.0, std::numeric_limits<int64_t>::max()), ValueError,
                   "rotary_cos_sin: offset 9223372036854775807 + length 2 overflows int64");
  CHECK(rotary_cos_sin(0, int64_t(1) << 60).first.shape() == Shape{0, int64_t(1) << 60});  // nothing to allocate
  CHECK_THROWS_MSG(causal_mask(int64_t(1) << 40, int64_t(1) << 40), ShapeError,
                   "causal_mask: L x S = 1099511627776 x 1099511627776 overflows int64");
  CHECK_THROWS_MSG(causal_mask(int64_t(1) << 20, int64_t(1) << 40, CausalVariant::lower_right), MemoryError,
                   "causal_mask: ");  // 2^60 bools: no RAM for them
  CHECK_THROWS_MSG(one_hot(Tensor::from_vector<int64_t>({0, 1, 2, 3}), int64_t(1) << 62), ValueError,
                   "one_hot: 4 indices x 4611686018427387904 classes overflows int64");
}

TEST_CASE("keep_mask_from_lengths: a length outside [0, S] is a ValueError naming it and S") {
  using namespace ag;
  CHECK_THROWS_MSG(keep_mask_from_lengths(Tensor::from_vector<int64_t>({2, 5}), 4), ValueError,
                   "keep_mask_from_lengths: length 5 is out of range for S = 4");
  CHECK_THROWS_MSG(keep_mask_from_lengths(Tensor::from_vector<int64_t>({-1, 2}), 4), ValueError,
                   "keep_mask_from_lengths: length -1 is out of range for S = 4");
  CHECK(keep_mask_from_lengths(Tensor::from_vector<int64_t>({0, 4}), 4).to(DType::i64).to_vector<int64_t>() ==
        std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1});
}

TEST_CASE("embedding: padding_idx as PyTorch (in [-V, V), negative counts from the end)") {
  using namespace ag;
  Tensor w = randn({5, 3}, DType::f64).requires_grad_();
  CHECK_THROWS_MSG(embedding(Tensor::from_vector<int64_t>({0}), w, 5), IndexError,
                   "embedding: padding_idx 5 must be within num_embeddings 5");
  CHECK_THROWS_MSG(embedding(Tensor::from_vector<int64_t>({0}), w, -6), IndexError,
                   "embedding: padding_idx -6 must be within num_embeddings 5");
  // -1 is row 4: it gets no gradient (it used to compare ids with -1 and give row 4 one).
  sum(embedding(Tensor::from_vector<int64_t>({4, 1, 4}), w, -1)).backward();
  CHECK(sum(ag::abs(w.grad().select(0, 4))).item<double>() == 0.0);
  CHECK(sum(w.grad().select(0, 1)).item<double>() == 3.0);
}

// ---- integers at their edges (issue 23): wrap as PyTorch, never UB or SIGFPE -----------
namespace {
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min(), kMax64 = std::numeric_limits<int64_t>::max();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min(), kMax32 = std::numeric_limits<int32_t>::max();
Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_vector(v); }
Tensor i32(const std::vector<int32_t>& v) { return Tensor::from_vector(v); }
}  // namespace

TEST_CASE("integer add, sub, mul, sum, cumsum, cumprod and prod wrap modulo 2^N (PyTorch)") {
  CHECK(ag::add(i64({kMax64, kMin64}), i64({1, -1})).to_vector<int64_t>() == std::vector<int64_t>{kMin64, kMax64});
  CHECK(ag::sub(i64({kMin64}), i64({1})).to_vector<int64_t>() == std::vector<int64_t>{kMax64});
  CHECK(ag::mul(i64({kMax64, kMin64}), i64({2, -1})).to_vector<int64_t>() == std::vector<int64_t>{-2, kMin64});
  CHECK(ag::add(i32({kMax32}), i32({1})).to_vector<int32_t>() == std::vector<int32_t>{kMin32});
  CHECK(ag::mul(i32({65536}), i32({65536})).to_vector<int32_t>() == std::vector<int32_t>{0});
  // Scalar operands: an i32 tensor + 2^32 + 1 wraps the scalar into i32 (PyTorch's cast).
  CHECK((i32({1}) + (int64_t{1} << 32)).to_vector<int32_t>() == std::vector<int32_t>{1});
  CHECK(ag::sum(i64({kMax64, 1})).item<int64_t>() == kMin64);
  CHECK(ag::sum(i64({kMax64, kMax64, 2})).item<int64_t>() == 0);
  CHECK(ag::cumsum(i64({kMax64, 1, -1}), 0).to_vector<int64_t>() == std::vector<int64_t>{kMax64, kMin64, kMax64});
  CHECK(ag::cumprod(i64({int64_t{1} << 62, 4, 3}), 0).to_vector<int64_t>() ==
        std::vector<int64_t>{int64_t{1} << 62, 0, 0});
  CHECK(ag::prod(i64({kMax64, kMax64})).item<int64_t>() == 1);                     // (2^63 - 1)^2 = 1 mod 2^64
  CHECK(ag::prod(i32({65536, 65536, 3}), 0).item<int64_t>() == int64_t{3} << 32);  // i64 result: no i32 wrap
}

TEST_CASE("floor_divide: MIN / -1 wraps to MIN instead of SIGFPE; / 0 is PyTorch's ZeroDivisionError") {
  CHECK(ag::floor_divide(i64({kMin64, kMin64, 7, -7}), i64({-1, 1, -1, 2})).to_vector<int64_t>() ==
        std::vector<int64_t>{kMin64, kMin64, -7, -4});
  CHECK(ag::floor_divide(i32({kMin32}), i32({-1})).to_vector<int32_t>() == std::vector<int32_t>{kMin32});
  CHECK(ag::floor_divide(i64({kMin64}), -1).item<int64_t>() == kMin64);
  CHECK_THROWS_MSG(ag::floor_divide(i64({5, 1}), i64({1, 0})), ag::ValueError,
                   "floor_divide: integer division by zero (ZeroDivisionError: 1 / 0)");
  CHECK_THROWS_MSG(ag::floor_divide(i32({5}), 0), ag::ValueError, "ZeroDivisionError");
}

TEST_CASE("float -> integer conversion: NaN, +-inf and out of range give INT_MIN (x86, PyTorch), no UB") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double two63 = 9223372036854775808.0;
  Tensor x = f64({nan, kInf, -kInf, 1e300, -1e300, two63, -two63, 3.9, -3.9, -0.5});
  CHECK(x.to(DType::i64).to_vector<int64_t>() ==
        std::vector<int64_t>{kMin64, kMin64, kMin64, kMin64, kMin64, kMin64, kMin64, 3, -3, 0});
  // Strided (the scalar loop) and f32 sources take the same rule.
  CHECK(ag::stack({x, x}, 1).transpose(0, 1).to(DType::i64).select(0, 1).to_vector<int64_t>() ==
        x.to(DType::i64).to_vector<int64_t>());
  Tensor y = f64({2147483647.9, 2147483648.0, -2147483648.9, -2147483649.0, nan});
  CHECK(y.to(DType::i32).to_vector<int32_t>() == std::vector<int32_t>{kMax32, kMin32, kMin32, kMin32, kMin32});
  CHECK(y.to(DType::f32).to(DType::i32).to_vector<int32_t>() ==
        std::vector<int32_t>{kMin32, kMin32, kMin32, kMin32, kMin32});  // f32 rounds 2^31 - 0.1 up to 2^31
  CHECK(f64({nan}).item<int64_t>() == kMin64);
  CHECK(f64({-kInf}).item<int32_t>() == kMin32);
  CHECK(f64({nan}).item<bool>());  // NaN != 0
  CHECK(ag::Scalar(nan).to_int() == kMin64);
  CHECK(ag::Scalar(1e300).to_int() == kMin64);
  CHECK(ag::Scalar(-2.5).to_int() == -2);
}

TEST_CASE("full, fill_ and masked_fill: a value the integer dtype cannot hold is PyTorch's overflow error") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_MSG(ag::full({2}, nan, DType::i64), ag::ValueError,
                   "full: value nan cannot be converted to type i64 (int64_t) without overflow");
  CHECK_THROWS_MSG(ag::full({2}, 1e300, DType::i32), ag::ValueError,
                   "full: value 1e+300 cannot be converted to type i32 (int32_t) without overflow");
  CHECK_THROWS_MSG(ag::full({2}, kInf, DType::i64), ag::ValueError, "cannot be converted to type i64");
  CHECK_THROWS_MSG(ag::full({2}, int64_t{1} << 40, DType::i32), ag::ValueError,
                   "full: value 1099511627776 cannot be converted to type i32 (int32_t) without overflow");
  CHECK_THROWS_MSG(ag::full({2}, 9223372036854775808.0, DType::i64), ag::ValueError, "without overflow");
  CHECK(ag::full({1}, 2147483647.5, DType::i32).item<int32_t>() == kMax32);  // truncates into range
  CHECK(ag::full({1}, -9223372036854775808.0, DType::i64).item<int64_t>() == kMin64);
  CHECK(ag::full({1}, nan, DType::b8).item<bool>());
  Tensor t = ag::zeros({3}, DType::i64);
  CHECK_THROWS_MSG(t.fill_(nan), ag::ValueError, "fill_: value nan cannot be converted to type i64");
  CHECK_THROWS_MSG(ag::masked_fill(t, ag::full({3}, true, DType::b8), -kInf), ag::ValueError,
                   "masked_fill: full: value -inf cannot be converted to type i64 (int64_t) without overflow");
  CHECK_THROWS_MSG(ag::pad(i32({1}), {1, 1}, ag::PadMode::constant, nan), ag::ValueError,
                   "pad: value nan cannot be converted to type i32");
}

TEST_CASE("arange: exact int64 count and values at the int64 edges (PyTorch: 3 elements)") {
  CHECK(ag::arange(kMin64, kMax64, kMax64).to_vector<int64_t>() == std::vector<int64_t>{kMin64, -1, kMax64 - 1});
  CHECK(ag::arange(kMax64, kMin64, -kMax64).to_vector<int64_t>() == std::vector<int64_t>{kMax64, 0, -kMax64});
  CHECK(ag::arange(kMax64 - 3, kMax64).to_vector<int64_t>() ==
        std::vector<int64_t>{kMax64 - 3, kMax64 - 2, kMax64 - 1});
  CHECK(ag::arange(0, 10, 3).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 9});
  CHECK(ag::arange(0.9, -0.5, 1, DType::i32).numel() == 0);                  // bounds truncate to [0, 0)
  CHECK_THROWS_MSG(ag::arange(kMin64, kMax64), ag::ShapeError, "arange: ");  // 2^64 - 1 elements
  CHECK_THROWS_MSG(ag::arange(0.0, 1e300, 1.0, DType::i64), ag::ValueError, "must be representable as int64");
  CHECK_THROWS_AS(ag::arange(0.0, 5.0, std::numeric_limits<double>::quiet_NaN(), DType::i64), ag::ValueError);
}

TEST_CASE("randint: the whole int64 range without overflow; values exact, never through double") {
  ag::Generator g(7);
  const std::vector<int64_t> v = ag::randint(kMin64, kMax64, {2000}, &g).to_vector<int64_t>();
  CHECK(*std::min_element(v.begin(), v.end()) < -(int64_t{1} << 62));
  CHECK(*std::max_element(v.begin(), v.end()) > (int64_t{1} << 62));
  const int64_t big = int64_t{1} << 62;  // big + 1 is not a double
  const std::vector<int64_t> w = ag::randint(big, big + 2, {200}, &g).to_vector<int64_t>();
  CHECK(std::count(w.begin(), w.end(), big + 1) > 0);
  CHECK(std::count(w.begin(), w.end(), big) + std::count(w.begin(), w.end(), big + 1) == 200);
  CHECK(ag::randint(kMin32, kMax32, {4}, &g, DType::i32).dtype() == DType::i32);
  CHECK_THROWS_MSG(ag::randint(0, int64_t{1} << 40, {2}, &g, DType::i32), ag::ValueError,
                   "randint: range [0, 1099511627776) does not fit in dtype i32");
}

TEST_CASE("narrow and pad: bounds and sizes checked without overflow") {
  Tensor x = ag::zeros({5});
  CHECK_THROWS_MSG(x.narrow(0, 2, kMax64), ag::IndexError,
                   "narrow: start 2 and length 9223372036854775807 do not fit in dim 0 of size 5");
  CHECK_THROWS_AS(x.narrow(0, kMin64, 1), ag::IndexError);
  CHECK(x.narrow(0, -2, 2).shape() == Shape{2});
  CHECK_THROWS_MSG(ag::pad(x, {int64_t{1} << 62, int64_t{1} << 62}), ag::ShapeError, "pad: ");
  CHECK_THROWS_MSG(ag::pad(x, {kMax64, 1}), ag::ShapeError, "overflows int64");
  CHECK_THROWS_MSG(ag::pad(x, {kMin64, 0}), ag::ShapeError, "overflows int64");
  CHECK_THROWS_MSG(ag::pad(ag::zeros({1, 1, 5}), {2, kMax64}, ag::PadMode::replicate), ag::ShapeError,
                   "overflows int64");
  CHECK(ag::pad(x, {1, -2}).shape() == Shape{4});
  // A replicate pad that crops as much as it adds is as small as its output: no
  // 2^31-long intermediate (the op fuzzer's 21 GB allocation).
  const Tensor r = ag::arange(0.0, 3.0).reshape({1, 1, 3});
  const int64_t big = int64_t{1} << 31;
  CHECK(ag::pad(r, {big, -big}, ag::PadMode::replicate).to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(ag::pad(r, {-big, big}, ag::PadMode::replicate).to_vector<double>() == std::vector<double>{2, 2, 2});
  CHECK(ag::pad(r, {1 - big, big}, ag::PadMode::replicate).to_vector<double>() == std::vector<double>{2, 2, 2, 2});
  CHECK(ag::pad(r, {big - 1, 2 - big}, ag::PadMode::replicate).to_vector<double>() == std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("uniform: low > high (or NaN) is PyTorch's uniform_ error") {
  CHECK_THROWS_MSG(ag::uniform({2}, 1.0, 0.0), ag::ValueError,
                   "uniform: uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  CHECK_THROWS_AS(ag::uniform({2}, std::numeric_limits<double>::quiet_NaN(), 1.0), ag::ValueError);
  CHECK_THROWS_MSG(ag::uniform({2}, -kInf, kInf), ag::ValueError, "uniform_ expects to-from <=");
  CHECK(ag::uniform({3}, 2.0, 2.0, DType::f64).to_vector<double>() == std::vector<double>{2, 2, 2});
}

TEST_CASE("clamp of an integer tensor: bounds past its range saturate, a NaN bound is an error") {
  CHECK(ag::clamp(i64({1, -5, kMax64}), -1e300, 1e300).to_vector<int64_t>() == std::vector<int64_t>{1, -5, kMax64});
  CHECK(ag::clamp(i32({kMin32, 7}), -1e10, 5.9).to_vector<int32_t>() == std::vector<int32_t>{kMin32, 5});
  CHECK_THROWS_MSG(ag::clamp(i64({1}), std::numeric_limits<double>::quiet_NaN(), std::nullopt), ag::ValueError,
                   "clamp: a NaN bound cannot clamp an integer tensor");
}
