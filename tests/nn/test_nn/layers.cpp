// nn: the basic layers (Linear, Embedding, LayerNorm, Dropout, ReLU, GELU): shapes,
// PyTorch's default init, values and gradients against hand-computed ones, errors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../nn_test_util.h"
#include "test_util.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

using namespace ag;
using namespace nn_test;

using test_util::contains;
using test_util::error_of;

// ---- layers -----------------------------------------------------------------------------

TEST_CASE("Linear: shapes, PyTorch's default init bounds, bias(false)") {
  manual_seed(9);
  nn::Linear lin(16, 40);
  CHECK(lin->weight.shape() == Shape({40, 16}));  // (out, in)
  CHECK(lin->bias.shape() == Shape({40}));
  CHECK(lin->weight.dtype() == DType::f32);
  const double bound = 1.0 / std::sqrt(16.0);  // 0.25
  double wmax = 0, bmax = 0;
  for (double v : lin->weight.to_vector<double>()) wmax = std::max(wmax, std::abs(v));
  for (double v : lin->bias.to_vector<double>()) bmax = std::max(bmax, std::abs(v));
  CHECK(wmax <= bound);
  CHECK(wmax > 0.9 * bound);  // 640 draws of U(-0.25, 0.25) reach close to the edge
  CHECK(bmax <= bound);
  CHECK(bmax > 0.5 * bound);

  nn::Linear nb(nn::LinearOptions(4, 2).bias(false));
  CHECK_FALSE(nb->bias.defined());
  CHECK(names(nb->named_parameters()) == std::vector<std::string>{"weight"});
  CHECK(nb(randn({7, 3, 4})).shape() == Shape({7, 3, 2}));  // (..., in) -> (..., out)
  CHECK_THROWS_AS(nn::Linear(0, 3), ValueError);
  CHECK_THROWS_AS(lin(randn({2, 15})), ShapeError);
}

TEST_CASE("Linear: forward equals x @ W^T + b computed by hand, and its gradients") {
  manual_seed(10);
  nn::Linear lin(3, 2);
  lin->to(DType::f64);
  Tensor x = randn({2, 2, 3}, DType::f64).requires_grad_();  // (B, T, in)
  Tensor y = lin(x);
  REQUIRE(y.shape() == Shape({2, 2, 2}));
  auto xv = x.to_vector<double>(), wv = lin->weight.to_vector<double>(), bv = lin->bias.to_vector<double>();
  auto yv = y.to_vector<double>();
  for (int r = 0; r < 4; ++r)
    for (int o = 0; o < 2; ++o) {
      double want = bv[o];
      for (int i = 0; i < 3; ++i) want += xv[r * 3 + i] * wv[o * 3 + i];
      CHECK(yv[r * 2 + o] == doctest::Approx(want).epsilon(1e-14));
    }
  // loss = sum(y): dW[o][i] = sum_r x[r][i], db[o] = rows, dx[r][i] = sum_o W[o][i]
  y.sum().backward();
  auto gw = lin->weight.grad().to_vector<double>(), gb = lin->bias.grad().to_vector<double>();
  auto gx = x.grad().to_vector<double>();
  for (int o = 0; o < 2; ++o) {
    CHECK(gb[o] == doctest::Approx(4.0));
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int r = 0; r < 4; ++r) s += xv[r * 3 + i];
      CHECK(gw[o * 3 + i] == doctest::Approx(s).epsilon(1e-14));
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 3; ++i) CHECK(gx[r * 3 + i] == doctest::Approx(wv[i] + wv[3 + i]).epsilon(1e-14));
}

TEST_CASE("Embedding: lookup, padding_idx row zero with no gradient, out-of-range ids") {
  manual_seed(11);
  nn::Embedding emb(nn::EmbeddingOptions(6, 3).padding_idx(2));
  CHECK(emb->weight.shape() == Shape({6, 3}));
  CHECK(emb->weight.select(0, 2).to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(emb->weight.select(0, 1).to_vector<double>() != std::vector<double>{0, 0, 0});

  Tensor ids = Tensor::from_vector<int64_t>({1, 2, 5, 1, 2, 0}, Shape{2, 3});
  Tensor y = emb(ids);
  CHECK(y.shape() == Shape({2, 3, 3}));
  CHECK(same_values(y.select(0, 0).select(0, 2), emb->weight.select(0, 5)));
  CHECK(y.select(0, 1).select(0, 1).to_vector<double>() == std::vector<double>{0, 0, 0});

  (y * (y.detach() + 1.0)).sum().backward();  // nonzero upstream everywhere
  Tensor g = emb->weight.grad();
  CHECK(g.select(0, 2).to_vector<double>() == std::vector<double>{0, 0, 0});  // padding
  CHECK(g.select(0, 3).to_vector<double>() == std::vector<double>{0, 0, 0});  // unused
  for (double v : g.select(0, 1).to_vector<double>()) CHECK(v != 0.0);        // used twice

  // negative padding_idx counts from the end, as in PyTorch
  nn::Embedding last(nn::EmbeddingOptions(4, 2).padding_idx(-1));
  CHECK(*last->options.padding_idx() == 3);
  CHECK(last->weight.select(0, 3).to_vector<double>() == std::vector<double>{0, 0});

  std::string msg = error_of<IndexError>([&] { emb(Tensor::from_vector<int64_t>({0, 6})); });
  CHECK(contains(msg, "6"));
  CHECK_THROWS_AS(emb(Tensor::from_vector<int64_t>({-1})), IndexError);
  CHECK_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), IndexError);
  CHECK_THROWS_AS(emb(Tensor::from_vector<double>({1.0})), DTypeError);
}

TEST_CASE("LayerNorm: weight ones, bias zeros, normalized rows") {
  manual_seed(12);
  nn::LayerNorm ln(nn::LayerNormOptions({16}));
  CHECK(ln->weight.to_vector<double>() == std::vector<double>(16, 1.0));
  CHECK(ln->bias.to_vector<double>() == std::vector<double>(16, 0.0));
  Tensor x = randn({4, 5, 16}) * 3.0 + 7.0;
  Tensor y = ln(x);
  CHECK(y.shape() == x.shape());
  auto m = mean(y, {-1}).to_vector<double>();
  auto v = var(y, {-1}, /*correction=*/0).to_vector<double>();
  for (double e : m) CHECK(std::abs(e) < 1e-5);
  for (double e : v) CHECK(e == doctest::Approx(1.0).epsilon(1e-3));  // eps 1e-5 against var ~9

  nn::LayerNorm plain(nn::LayerNormOptions({16}).elementwise_affine(false));
  CHECK(plain->parameters().empty());
  CHECK(allclose(plain(x), y, 1e-5, 1e-6));
  nn::LayerNorm nobias(nn::LayerNormOptions({16}).bias(false));
  CHECK(names(nobias->named_parameters()) == std::vector<std::string>{"weight"});
}

TEST_CASE("Dropout: train vs eval, p = 0, fraction zeroed and scale") {
  Generator gen(123);
  nn::Dropout drop(nn::DropoutOptions(0.3));
  drop->generator = &gen;
  Tensor x = ones({200, 500});  // 100,000 elements
  Tensor y = drop(x);
  auto v = y.to_vector<double>();
  int64_t zeros_n = 0, wrong_scale = 0;  // kept values are scaled by 1 / (1 - p)
  for (double e : v) {
    if (e == 0.0)
      ++zeros_n;
    else if (std::abs(e - 1.0 / 0.7) > 1e-6)
      ++wrong_scale;
  }
  CHECK(wrong_scale == 0);
  double frac = double(zeros_n) / double(v.size());
  CHECK(frac == doctest::Approx(0.3).epsilon(0.03));  // sd of the fraction is 0.0014
  CHECK(mean(y).item<double>() == doctest::Approx(1.0).epsilon(0.02));

  drop->eval();
  CHECK(same_values(drop(x), x));
  drop->train();
  nn::Dropout none(0.0);
  Tensor r = randn({10, 10});
  CHECK(same_values(none(r), r));
  CHECK_THROWS_AS(nn::Dropout(1.5), ValueError);

  // dropout in a Sequential follows the container's mode
  nn::Sequential seq(nn::Linear(4, 4), nn::Dropout(0.5));
  seq->eval();
  Tensor z = randn({3, 4});
  CHECK(same_values(seq(z), seq(z)));
}

TEST_CASE("ReLU and GELU modules") {
  Tensor x = Tensor::from_vector<double>({-2.0, -0.5, 0.5, 1.0});
  nn::ReLU relu_m;
  CHECK(relu_m(x).to_vector<double>() == std::vector<double>{0.0, 0.0, 0.5, 1.0});
  nn::GELU g;
  nn::GELU g_tanh{nn::GELUOptions(GeluApprox::tanh)};  // braces: clang reads parentheses as a declaration
  auto exact = g(x).to_vector<double>(), approx = g_tanh(x).to_vector<double>();
  // x * Phi(x): Phi(1) = 0.841344746068543, Phi(-2) = 0.0227501319481792
  CHECK(exact[3] == doctest::Approx(0.841344746068543).epsilon(1e-12));
  CHECK(exact[0] == doctest::Approx(-2.0 * 0.0227501319481792).epsilon(1e-12));
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) at 1
  CHECK(approx[3] == doctest::Approx(0.5 * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * 1.044715))).epsilon(1e-12));
  CHECK(exact[3] != approx[3]);
}
