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
      {"padding_mask",
       [&] {
         padding_mask(Tensor::from_vector<int64_t>({2, 5}), 3);
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

TEST_CASE("padding_mask: a length outside [0, S] is a ValueError naming it and S") {
  using namespace ag;
  CHECK_THROWS_MSG(padding_mask(Tensor::from_vector<int64_t>({2, 5}), 4), ValueError,
                   "padding_mask: length 5 is out of range for S = 4");
  CHECK_THROWS_MSG(padding_mask(Tensor::from_vector<int64_t>({-1, 2}), 4), ValueError,
                   "padding_mask: length -1 is out of range for S = 4");
  CHECK(padding_mask(Tensor::from_vector<int64_t>({0, 4}), 4).to(DType::i64).to_vector<int64_t>() ==
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
