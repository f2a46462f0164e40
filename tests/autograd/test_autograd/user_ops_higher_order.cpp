// test_autograd, part: record() for user-defined ops, NeedsGrad, gradcheck's report, and
// higher-order gradients (create_graph, gradgradcheck, Saved::output).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../autograd_test_util.h"

#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

using test_util::contains;
using test_util::error_of;
using namespace autograd_test_util;

namespace {

// A user-defined op built with ag::record: out = x * x, with the backward given.
// `right` picks the correct derivative 2 g x or a deliberately wrong g x.
Tensor my_square(const Tensor& x, bool right) {
  Tensor out = x.detach() * x.detach();  // fresh, no graph
  return ag::record(right ? "my_square" : "my_square_wrong", out, {x},
                    [sx = ag::Saved(x), right](const Tensor& g, ag::NeedsGrad) {
                      return ag::Grads{right ? g * sx.get() * 2.0 : g * sx.get()};
                    });
}

}  // namespace

// ---- record() for user-defined ops, and gradcheck's report ----------------------------
TEST_CASE("record() builds a user op; gradcheck passes it and reports a wrong backward") {
  Tensor x = leaf({1.5, -2.0});
  Tensor y = my_square(x, true);
  CHECK(y.requires_grad());
  CHECK(std::string(y.grad_fn()->name) == "my_square");
  y.sum().backward();
  CHECK(ag::allclose(x.grad(), f64({3, -4})));

  auto good =
      ag::gradcheck([](const std::vector<Tensor>& in) { return my_square(in[0], true); }, {x}, {.name = "my_square"});
  CHECK_MESSAGE(good.ok, good.message);

  auto bad = ag::gradcheck([](const std::vector<Tensor>& in) { return my_square(in[0], false); }, {x},
                           {.name = "my_square_wrong"});
  CHECK_FALSE(bad.ok);
  CHECK_FALSE(static_cast<bool>(bad));
  // The worst element is x[1] = -2: analytic g x = -2, numeric 2 x = -4.
  INFO(bad.message);
  CHECK(contains(bad.message, "gradcheck(my_square_wrong)"));
  CHECK(contains(bad.message, "input 0"));
  CHECK(contains(bad.message, "element [1]"));
  CHECK(contains(bad.message, "analytic -2"));
  CHECK(contains(bad.message, "numeric -4"));

  // record() does nothing when no input requires grad or under NoGradGuard.
  CHECK_FALSE(my_square(f64({1.0}), true).requires_grad());
  ag::NoGradGuard no_grad;
  CHECK_FALSE(my_square(x, true).requires_grad());
}

TEST_CASE("the engine refuses a gradient of the wrong shape, naming the op") {
  Tensor x = leaf({1, 2, 3});
  Tensor out = x.detach() * 2.0;
  Tensor y = ag::record("bad_shape_op", out, {x}, [](const Tensor& g, ag::NeedsGrad) {
    return ag::Grads{g.sum()};  // [] instead of [3]
  });
  std::string msg = error_of<ag::AutogradError>([&] { y.sum().backward(); });
  CHECK(contains(msg, "bad_shape_op"));
  CHECK(contains(msg, "[3]"));
}

TEST_CASE("NeedsGrad tells a closure which inputs need a gradient") {
  Tensor a = leaf({1, 2});
  Tensor b = f64({3, 4});
  std::vector<bool> seen;
  Tensor out = a.detach() * b;
  Tensor y = ag::record("probe", out, {a, b}, [&seen, b](const Tensor& g, ag::NeedsGrad need) {
    seen = {need[0], need[1]};
    return ag::Grads{g * b, Tensor{}};
  });
  y.sum().backward();
  CHECK(seen == std::vector<bool>{true, false});
  CHECK(ag::allclose(a.grad(), f64({3, 4})));
}

// ---- higher-order gradients ---------------------------------------------------------
using ag::allclose;
using ag::exp;
using ag::gradcheck;
using ag::GradcheckResult;
using ag::gradgradcheck;
using ag::Grads;
using ag::NeedsGrad;
using ag::pow;
using ag::record;
using ag::Saved;
using ag::sum;

TEST_CASE("create_graph: a Hessian-vector product by hand") {
  // f(x) = sum(x^3): grad = 3 x^2, and H v = 6 x v.
  Tensor x = f64({1, -2, 0.5}, {3}).requires_grad_();
  Tensor v = f64({1, 2, 3}, {3});
  Tensor gx = ag::grad({sum(pow(x, 3.0))}, {x}, {}, {}, /*create_graph=*/true)[0];
  CHECK(gx.requires_grad());
  CHECK(allclose(gx, f64({3, 12, 0.75}, {3})));
  Tensor hv = ag::grad({sum(gx * v)}, {x})[0];
  CHECK(allclose(hv, f64({6, -24, 9}, {3})));
}

TEST_CASE("create_graph: backward() leaves a differentiable .grad") {
  // y = sum(exp(x)): x.grad = exp(x), connected to the graph; d sum(x.grad) / dx = exp(x).
  Tensor x = f64({0.0, 1.0}, {2}).requires_grad_();
  sum(exp(x)).backward({}, {}, /*create_graph=*/true);
  Tensor g1 = x.grad();
  REQUIRE(g1.requires_grad());
  Tensor g2 = ag::grad({sum(g1)}, {x})[0];
  CHECK(allclose(g2, f64({1.0, std::exp(1.0)}, {2})));
  // A second create_graph backward adds out of place into the connected .grad.
  sum(exp(x)).backward({}, {}, /*create_graph=*/true);
  CHECK(allclose(x.grad(), f64({2.0, 2 * std::exp(1.0)}, {2})));
  CHECK(x.grad().requires_grad());
  // x.grad's graph holds x: the cycle is broken by dropping .grad, as in PyTorch.
  x.zero_grad();
}

TEST_CASE("grad runs only the part of the graph between outputs and inputs") {
  // h = x * 2 is computed once; grad(y, h) must not run (or free) x's part of the graph,
  // so a later backward to x still works without retain_graph.
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  Tensor h = x * 2.0;
  Tensor y = sum(h * h);
  Tensor gh = ag::grad({y}, {h}, {}, /*retain_graph=*/true)[0];
  CHECK(allclose(gh, f64({4, 8}, {2})));
  CHECK_FALSE(x.grad().defined());
  y.backward();
  CHECK(allclose(x.grad(), f64({8, 16}, {2})));
}

TEST_CASE("gradgradcheck catches a backward that is not differentiable") {
  // A square whose closure uses a detached copy of x: first derivatives are right, the
  // second derivative (through x) is lost.
  auto bad_square = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor y = x.detach() * x.detach();
    return record("bad_square", y, {x}, [xd = x.detach()](const Tensor& g, NeedsGrad) { return Grads{g * xd * 2.0}; });
  };
  auto good_square = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor y = x.detach() * x.detach();
    return record("good_square", y, {x},
                  [sx = Saved(x)](const Tensor& g, NeedsGrad) { return Grads{g * sx.get() * 2.0}; });
  };
  Tensor x = f64({0.5, -1.5, 2.0}, {3}).requires_grad_();
  CHECK(gradcheck(bad_square, {x}).ok);
  GradcheckResult r = gradgradcheck(bad_square, {x}, {.name = "bad_square"});
  CHECK_FALSE(r.ok);
  CHECK(contains(r.message, "gradgrad bad_square"));
  CHECK(gradgradcheck(good_square, {x}).ok);
}

TEST_CASE("Saved::output reconnects an op's output to its node under create_graph") {
  // exp saves its output y; d/dx (g * y) needs y's own gradient, exp(x).
  Tensor x = f64({0.3, -0.7}, {2}).requires_grad_();
  Tensor g1 = ag::grad({sum(exp(x) * 3.0)}, {x}, {}, {}, true)[0];  // 3 exp(x)
  Tensor g2 = ag::grad({sum(g1)}, {x})[0];                          // 3 exp(x)
  CHECK(allclose(g2, exp(x.detach()) * 3.0));
}
