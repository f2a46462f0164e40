// optim::LBFGS against torch.optim.LBFGS (1.13) (tests/fixtures/lbfgs, tools/fixtures/lbfgs.py):
// every case's parameters after each step(), the losses step() returned, func_evals and
// n_iter, in float64; the fixed step and strong Wolfe, short histories, max_eval and the
// tolerance stops. Then state_dict round trips, f32, and the errors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace ag::optim;

namespace {

using Loss = std::function<Tensor(const std::vector<Tensor>&)>;

// The problems of tools/fixtures/lbfgs.py, over the case's data.
Loss problem(const std::string& name, const test_util::Fixture& f, const std::string& c) {
  if (name == "rosenbrock")
    return [](const std::vector<Tensor>& p) {
      const Tensor& x = p[0];
      const int64_t n = x.size(0);
      Tensor head = x.narrow(0, 0, n - 1), tail = x.narrow(0, 1, n - 1);
      return (100.0 * (tail - head.pow(2)).pow(2) + (1.0 - head).pow(2)).sum();
    };
  if (name == "quadratic") {
    Tensor m = f.at(c + "/data.M"), b = f.at(c + "/data.b");
    Tensor a = matmul(m, m.t()) + eye(5, std::nullopt, DType::f64);
    return [a, b](const std::vector<Tensor>& p) { return 0.5 * (p[0] * matmul(a, p[0])).sum() - (b * p[0]).sum(); };
  }
  if (name == "softmax") {
    Tensor x = f.at(c + "/data.X"), y = f.at(c + "/data.y");
    return [x, y](const std::vector<Tensor>& p) {
      return nn::functional::cross_entropy(matmul(x, p[0].t()) + p[1], y) + 0.01 * p[0].pow(2).sum();
    };
  }
  FAIL("unknown problem ", name);
  return {};
}

LBFGSOptions options_from(const nlohmann::json& o) {
  LBFGSOptions opt(o.at("lr").get<double>());
  if (o.contains("max_iter")) opt.max_iter(o["max_iter"].get<int64_t>());
  if (o.contains("max_eval")) opt.max_eval(o["max_eval"].get<int64_t>());
  if (o.contains("history_size")) opt.history_size(o["history_size"].get<int64_t>());
  if (o.contains("tolerance_grad")) opt.tolerance_grad(o["tolerance_grad"].get<double>());
  if (o.contains("tolerance_change")) opt.tolerance_change(o["tolerance_change"].get<double>());
  if (o.contains("line_search_fn")) opt.line_search_fn(o["line_search_fn"].get<std::string>());
  return opt;
}

std::function<Tensor()> closure_for(LBFGS& opt, const Loss& loss, const std::vector<Tensor>& params) {
  return [&opt, loss, params] {
    opt.zero_grad();
    Tensor l = loss(params);
    l.backward();
    return l;
  };
}

double rel_diff(const Tensor& got, const Tensor& want) {
  return test_util::max_abs_diff(got, want) / std::max(1.0, want.abs().max().item<double>());
}

}  // namespace

TEST_CASE("LBFGS matches torch.optim.LBFGS step for step") {
  const test_util::Fixture f = test_util::load_fixture("lbfgs");
  const int64_t steps = std::stoll(f.meta("steps"));
  const auto cases = nlohmann::json::parse(f.meta("cases"));
  CHECK(cases.size() == 8);
  double worst = 0;
  for (const auto& c : cases) {
    const std::string name = c["name"];
    INFO("case ", name);
    NamedParams params;
    std::vector<Tensor> plist;
    for (const auto& p : c["params"]) {
      Tensor t = f.at(name + "/init." + p.get<std::string>()).clone().requires_grad_();
      params.emplace_back(p.get<std::string>(), t);
      plist.push_back(t);
    }
    LBFGS opt(params, options_from(c["options"]));
    auto closure = closure_for(opt, problem(c["problem"], f, name), plist);
    const auto losses = f.at(name + "/loss").to_vector<double>();
    const auto evals = f.at(name + "/func_evals").to_vector<int64_t>();
    const auto iters = f.at(name + "/n_iter").to_vector<int64_t>();
    for (int64_t k = 0; k < steps; ++k) {
      INFO("step ", k);
      const double loss = opt.step(closure).item<double>();
      CHECK(loss == doctest::Approx(losses[size_t(k)]).epsilon(1e-10));
      CHECK(opt.func_evals() == evals[size_t(k)]);
      CHECK(opt.n_iter() == iters[size_t(k)]);
      for (auto& [pname, p] : params) {
        const double err = rel_diff(p, f.at(name + "/step" + std::to_string(k) + "." + pname));
        CHECK(err < 1e-8);
        worst = std::max(worst, err);
      }
    }
  }
  MESSAGE("LBFGS: worst relative parameter difference from PyTorch ", worst);
}

TEST_CASE("LBFGS state_dict: a resumed run equals the uninterrupted one") {
  const test_util::Fixture f = test_util::load_fixture("lbfgs");
  const Loss loss = problem("rosenbrock", f, "rosenbrock_wolfe_hist3");
  auto opts = LBFGSOptions(1).max_iter(7).history_size(3).line_search_fn("strong_wolfe");
  Tensor x = f.at("rosenbrock_wolfe_hist3/init.x").clone().requires_grad_();
  LBFGS a({{"x", x}}, opts);
  auto ca = closure_for(a, loss, {x});
  a.step(ca);
  const TensorMap saved = a.state_dict();
  CHECK(saved.at("lbfgs.old_dirs").shape() == Shape{3, 4});  // the history is full after 7 iterations
  CHECK(saved.at("lbfgs.n_iter").item<int64_t>() == 7);
  Tensor y = x.detach().clone().requires_grad_();
  a.step(ca);
  a.step(ca);

  LBFGS b({{"x", y}}, opts);
  b.load_state_dict(saved);
  auto cb = closure_for(b, loss, {y});
  b.step(cb);
  b.step(cb);
  CHECK(tc::diff(y, x, 0.0) == "");  // bit for bit
  CHECK(b.func_evals() == a.func_evals());

  // A bad entry changes nothing: the shape names the parameters' total.
  TensorMap bad = saved;
  bad.insert("lbfgs.d", zeros({3}, DType::f64));
  const TensorMap before = b.state_dict();
  CHECK_THROWS_MSG(b.load_state_dict(bad), ShapeError,
                   "LBFGS.load_state_dict: 'lbfgs.d' has shape [3] f64, expected [4] floats");
  CHECK(test_util::map_diff(b.state_dict(), before) == "");
  bad = saved;
  bad.insert("lbfgs.ro", full({3}, -1.0, DType::f64));
  CHECK_THROWS_MSG(b.load_state_dict(bad), ValueError, "'lbfgs.ro' holds -1");
  // A fresh optimizer's state has only the counters.
  LBFGS fresh({{"x", y}}, opts);
  CHECK_FALSE(fresh.state_dict().contains("lbfgs.d"));
  fresh.load_state_dict(fresh.state_dict());
}

TEST_CASE("LBFGS in float32 reaches PyTorch's float64 point to within 1e-3") {
  const test_util::Fixture f = test_util::load_fixture("lbfgs");
  Tensor x = f.at("quadratic_wolfe/init.x").to(DType::f32).requires_grad_();
  const Loss l64 = problem("quadratic", f, "quadratic_wolfe");
  const Loss l32 = [&](const std::vector<Tensor>& p) { return l64({p[0].to(DType::f64)}).to(DType::f32); };
  LBFGS opt({{"x", x}}, LBFGSOptions(1).max_iter(20).line_search_fn("strong_wolfe"));
  opt.step(closure_for(opt, l32, {x}));
  CHECK(x.dtype() == DType::f32);
  CHECK(rel_diff(x.to(DType::f64), f.at("quadratic_wolfe/step0.x")) < 1e-3);
}

TEST_CASE("LBFGS refuses what PyTorch refuses, with the reason") {
  Tensor x = zeros({3}).requires_grad_();
  LBFGS opt({{"x", x}});
  CHECK_THROWS_MSG(opt.step(), ValueError, "LBFGS.step: L-BFGS re-evaluates the model: call step(closure)");
  CHECK_THROWS_MSG(opt.add_param_group({{{"y", zeros({2}).requires_grad_()}}, LBFGSOptions()}), ValueError,
                   "LBFGS doesn't support per-parameter options (parameter groups)");
  CHECK_THROWS_MSG(opt.step([&] { return (x * 2.0).detach(); }), ValueError,
                   "LBFGS.step: the closure must return the loss, one element; got [3]");
  CHECK_THROWS_MSG(LBFGS({{"x", x}}, LBFGSOptions().line_search_fn("backtracking")), ValueError,
                   "LBFGS: only 'strong_wolfe' is supported as line_search_fn, got 'backtracking'");
  CHECK_THROWS_MSG(LBFGS({{"x", x}}, LBFGSOptions().max_iter(0)), ValueError,
                   "LBFGS: max_iter must be positive, got 0");
  CHECK_THROWS_MSG(LBFGS({{"x", x}}, LBFGSOptions().history_size(0)), ValueError,
                   "LBFGS: history_size must be positive, got 0");
  CHECK_THROWS_MSG(LBFGS({{"x", x}}, LBFGSOptions(-1)), ValueError, "LBFGS: Invalid learning rate: -1");
  CHECK_THROWS_MSG(LBFGS({{"x", x}}, LBFGSOptions().tolerance_grad(NAN)), ValueError,
                   "LBFGS: tolerance_grad (nan) and tolerance_change (1e-09) must be finite and >= 0");
  CHECK_THROWS_MSG(LBFGS({{"x", x}, {"y", zeros({2}, DType::f64).requires_grad_()}}), DTypeError,
                   "LBFGS: parameter 'y' is f64 (x is f32); L-BFGS takes f32 or f64 parameters of one dtype");
  CHECK_THROWS_MSG(LBFGS(NamedParams{}), ValueError, "LBFGS: optimizer got an empty parameter list");
}

TEST_CASE("LBFGS at a stationary point returns at once; gradients left alone") {
  Tensor x = ones({2}, DType::f64).requires_grad_();
  LBFGS opt({{"x", x}}, LBFGSOptions().line_search_fn("strong_wolfe"));
  int calls = 0;
  Tensor loss = opt.step([&] {
    ++calls;
    opt.zero_grad();
    Tensor l = (x - 1.0).pow(2).sum();
    l.backward();
    return l;
  });
  CHECK(calls == 1);
  CHECK(loss.item<double>() == 0.0);
  CHECK(opt.n_iter() == 0);
  CHECK(tc::diff(x, {1.0, 1.0}) == "");
}
