// Higher-order gradients against PyTorch (tests/fixtures/double_backward, made by
// tools/make_fixtures.py with torch.autograd.grad(..., create_graph=True)): a
// Hessian-vector product of an MLP, a WGAN-GP gradient penalty's gradient, and the
// double backward of MultiheadAttention. All in float64, to 1e-9 relative.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <map>
#include <string>

#include "test_util.h"

using namespace ag;

namespace {

// max |a - b| / max(1, max |b|)
double rel_err(const Tensor& got, const Tensor& want) {
  REQUIRE(got.numel() == want.numel());
  Tensor g = got.reshape({-1}).to(DType::f64), w = want.reshape({-1});
  double scale = std::max(1.0, max(abs(w)).item<double>());
  return test_util::max_abs_diff(g, w) / scale;
}

std::map<std::string, Tensor> leaves(const test_util::Fixture& t, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (auto& [k, v] : t)
    if (k.rfind(prefix, 0) == 0) out[k.substr(prefix.size())] = v.clone().requires_grad_();
  return out;
}

}  // namespace

TEST_CASE("double backward: Hessian-vector product of a tanh MLP equals PyTorch's") {
  const test_util::Fixture t = test_util::load_fixture("double_backward");
  auto p = leaves(t, "hvp.param.");
  REQUIRE(p.size() == 4);
  Tensor x = t.at("hvp.input.x");
  // Sequential(Linear(4, 8), Tanh, Linear(8, 1)); loss = sum(mlp(x)^2)
  Tensor y = linear(tanh(linear(x, p["0.weight"], p["0.bias"])), p["2.weight"], p["2.bias"]);
  Tensor loss = sum(square(y));
  CHECK(rel_err(loss, t.at("hvp.loss")) < 1e-12);
  std::vector<std::string> names = {"0.weight", "0.bias", "2.weight", "2.bias"};
  std::vector<Tensor> params, vs;
  for (auto& n : names) params.push_back(p[n]), vs.push_back(t.at("hvp.v.param." + n));
  std::vector<Tensor> g = ag::grad({loss}, params, {}, {}, /*create_graph=*/true);
  std::vector<Tensor> hv = ag::grad(g, params, vs);
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO("parameter ", names[i]);
    CHECK(rel_err(g[i], t.at("hvp.grad.param." + names[i])) < 1e-9);
    CHECK(rel_err(hv[i], t.at("hvp.hv.param." + names[i])) < 1e-9);
  }
}

TEST_CASE("double backward: a WGAN-GP gradient penalty's gradient equals PyTorch's") {
  const test_util::Fixture t = test_util::load_fixture("double_backward");
  auto p = leaves(t, "wgan_gp.param.");
  Tensor alpha = t.at("wgan_gp.input.alpha");
  Tensor x_hat = (alpha * t.at("wgan_gp.input.real") + (1.0 - alpha) * t.at("wgan_gp.input.fake")).requires_grad_();
  CHECK(rel_err(x_hat, t.at("wgan_gp.x_hat")) < 1e-12);
  // critic = Sequential(Linear(6, 16), LeakyReLU(0.2), Linear(16, 1))
  Tensor h = linear(x_hat, p["0.weight"], p["0.bias"]);
  h = where(gt(h, 0.0), h, h * 0.2);
  Tensor critic = linear(h, p["2.weight"], p["2.bias"]);
  Tensor gx = ag::grad({sum(critic)}, {x_hat}, {}, {}, /*create_graph=*/true)[0];
  CHECK(rel_err(gx, t.at("wgan_gp.grad_x_hat")) < 1e-9);
  Tensor penalty = mean(square(sqrt(sum(square(gx), {1})) - 1.0));
  CHECK(rel_err(penalty, t.at("wgan_gp.penalty")) < 1e-9);
  std::vector<std::string> names = {"0.weight", "0.bias", "2.weight", "2.bias"};
  std::vector<Tensor> params;
  for (auto& n : names) params.push_back(p[n]);
  // 2.bias does not reach the penalty (PyTorch reports it unused).
  std::vector<Tensor> g = ag::grad({penalty}, params, {}, {}, false, /*allow_unused=*/true);
  CHECK_FALSE(g[3].defined());
  // 0.bias only moves LeakyReLU's piecewise-constant slope: PyTorch gives exact zeros,
  // here the slope's mask is a constant, so the gradient is undefined (zero).
  CHECK_FALSE(g[1].defined());
  CHECK(max(abs(t.at("wgan_gp.grad.param.0.bias"))).item<double>() == 0.0);
  for (std::size_t i : {0, 2}) {
    INFO("parameter ", names[i]);
    CHECK(rel_err(g[i], t.at("wgan_gp.grad.param." + names[i])) < 1e-9);
  }
  CHECK(max(abs(t.at("wgan_gp.grad.param.2.bias"))).item<double>() == 0.0);
}

TEST_CASE("double backward: MultiheadAttention equals PyTorch's, fused and composite paths") {
  const test_util::Fixture t = test_util::load_fixture("double_backward");
  for (bool weights : {false, true}) {  // need_weights forces the composite path
    INFO("need_weights ", weights);
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    mha->to(DType::f64);
    TensorMap sd;
    for (auto& [k, v] : t)
      if (k.rfind("mha.param.", 0) == 0) sd.insert(k.substr(10), v);
    mha->load_state_dict(sd);
    Tensor q = t.at("mha.input.query").clone().requires_grad_();
    Tensor k = t.at("mha.input.key").clone().requires_grad_();
    Tensor v = t.at("mha.input.value").clone().requires_grad_();
    nn::AttentionArgs args;
    args.need_weights = weights;
    Tensor out = mha(q, k, v, args).first;
    CHECK(rel_err(out, t.at("mha.output")) < 1e-12);
    Tensor w_in;
    for (auto& [n, p] : mha->named_parameters())
      if (n == "in_proj_weight") w_in = p;
    auto first = ag::grad({sum(out * t.at("mha.upstream"))}, {q, w_in}, {}, {}, /*create_graph=*/true);
    CHECK(rel_err(first[0], t.at("mha.first.grad.input.query")) < 1e-9);
    CHECK(rel_err(first[1], t.at("mha.first.grad.param.in_proj_weight")) < 1e-9);
    Tensor s = sum(first[0] * t.at("mha.v.input.query")) + sum(first[1] * t.at("mha.v.param.in_proj_weight"));
    CHECK(rel_err(s, t.at("mha.s")) < 1e-9);
    s.backward();
    int compared = 0;
    for (auto& n_p : mha->named_parameters()) {
      auto& n = n_p.first;
      auto& p = n_p.second;
      INFO("parameter ", n);
      if (n == "out_proj.bias") {
        CHECK_FALSE(p.grad().defined());  // the first gradients do not depend on it
        continue;
      }
      REQUIRE(p.grad().defined());
      CHECK(rel_err(p.grad(), t.at("mha.grad.param." + n)) < 1e-9);
      ++compared;
    }
    CHECK(compared == 3);
    CHECK(rel_err(q.grad(), t.at("mha.grad.input.query")) < 1e-9);
    CHECK(rel_err(k.grad(), t.at("mha.grad.input.key")) < 1e-9);
    CHECK(rel_err(v.grad(), t.at("mha.grad.input.value")) < 1e-9);
  }
}
