// test_autograd, part: in-place writes: version errors for saved tensors, leaves that
// require grad, and in-place ops recorded inside the graph (gradcheck, gradgradcheck).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../autograd_test_util.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

using test_util::contains;
using test_util::error_of;
using namespace autograd_test_util;

// ---- in-place writes ------------------------------------------------------------------
TEST_CASE("an in-place write to a tensor saved for backward throws VersionError naming the op") {
  Tensor a = leaf({1, 2, 3});
  Tensor b = f64({4, 5, 6});  // needs no grad, but mul saves it for a's gradient
  Tensor c = a * b;
  b.mul_(2);
  std::string msg = error_of<ag::VersionError>([&] { c.sum().backward(); });
  CHECK(contains(msg, "mul"));
  CHECK(contains(msg, "modified in place"));
}

TEST_CASE("an in-place write under NoGradGuard to a saved leaf is caught at backward") {
  Tensor w = leaf({1, 2, 3});
  Tensor x = leaf({4, 5, 6});
  Tensor y = (w * x).sum();  // saves w for x's gradient and x for w's
  {
    ag::NoGradGuard no_grad;  // as an optimizer step would
    w.mul_(0.5);
  }
  std::string msg = error_of<ag::VersionError>([&] { y.backward(); });
  CHECK(contains(msg, "mul"));
  // A view shares the version counter: writing through it is caught too.
  Tensor u = leaf({1, 2, 3, 4}, {2, 2});
  Tensor z = ag::exp(u).sum();  // exp saves its output, not u
  Tensor s = ag::sin(u).sum();  // sin saves u
  {
    ag::NoGradGuard no_grad;
    u.t().select(0, 1).fill_(0.0);  // a view of u
  }
  z.backward();  // exp's saved output was not touched
  CHECK_THROWS_AS(s.backward(), ag::VersionError);
}

TEST_CASE("in-place ops on a leaf that requires grad throw while grad mode is on") {
  Tensor x = leaf({1, 2});
  CHECK_THROWS_AS(x.mul_(2), ag::AutogradError);
  CHECK_THROWS_AS(x.fill_(0), ag::AutogradError);
  CHECK_THROWS_AS(x.add_(f64({1, 1})), ag::AutogradError);
  CHECK_THROWS_AS(x.copy_(f64({1, 1})), ag::AutogradError);
  CHECK_THROWS_AS(x.masked_fill_(ag::gt(f64({1, 0}), 0.5), 0.0), ag::AutogradError);
  Tensor v = (x * 2.0).view({2});  // a view inside the graph
  CHECK_THROWS_AS(v.mul_(2), ag::AutogradError);
  CHECK(contains(error_of<ag::AutogradError>([&] { v.relu_(); }), "relu_: in-place write to a view"));
  CHECK(ag::allclose(x, f64({1, 2})));  // nothing was written
  ag::NoGradGuard no_grad;
  x.mul_(2);
  CHECK(ag::allclose(x, f64({2, 4})));
}

// ---- in-place ops inside the graph --------------------------------------------------
TEST_CASE("in-place ops on non-leaf tensors are recorded (gradcheck and gradgradcheck)") {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const Tensor mask = ag::gt(f64({1, 0, 1, 0, 0, 1}, {2, 3}), 0.5);
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"relu_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 1.5;
         return y.relu_();
       }},
      {"mul_ tensor",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] + 0.0;
         return y.mul_(x[1]);
       }},
      {"mul_ scalar",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::sin(x[0]);
         return y.mul_(2.0);
       }},
      {"add_ alpha",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::sin(x[0]);
         return y.add_(x[1], -0.5);
       }},
      {"sub_ div_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * x[1];
         y.sub_(x[1]);
         return y.div_(3.0);
       }},
      {"div_ tensor",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 2.0;
         return y.div_(ag::exp(x[1]));
       }},
      {"masked_fill_",
       [mask](const std::vector<Tensor>& x) {
         Tensor y = x[0] * x[1];
         return y.masked_fill_(mask, 0.25);
       }},
      {"exp_ tanh_ sigmoid_ neg_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 0.5;
         y.exp_().tanh_();
         return y.sigmoid_().neg_();
       }},
      {"clamp_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 1.0;
         return y.clamp_(-0.3, 0.4);
       }},
      {"copy_ into a buffer",
       [](const std::vector<Tensor>& x) {
         Tensor buf = ag::zeros({2, 3}, DType::f64);  // a leaf that needs no grad
         buf.copy_(x[0] * x[1]);
         return buf * 2.0;
       }},
      {"fill_ then add_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 3.0;
         y.fill_(1.0);
         return y.add_(x[1]);
       }},
      {"add_ into a constant",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::ones({2, 3}, DType::f64);
         return y.add_(x[0]);
       }},
  };
  ag::Generator rng(5);
  for (auto& name_fn : cases) {
    auto& name = name_fn.first;
    auto& fn = name_fn.second;
    INFO(std::string(name));
    // Values away from clamp's and relu's kinks: 0.05 off every multiple of 0.1.
    std::vector<Tensor> x = {(ag::randint(-9, 9, {2, 3}, &rng).to(DType::f64) * 0.1 + 0.05).requires_grad_(),
                             ag::uniform({2, 3}, 0.5, 2.0, DType::f64, &rng).requires_grad_()};
    Tensor y = fn(x);
    CHECK(y.requires_grad());
    CHECK(ag::gradcheck(fn, x, {.name = name}).ok);
    CHECK(ag::gradgradcheck(fn, x, {.name = name}).ok);
  }
}

TEST_CASE("in-place ops inside the graph: self becomes the result; saved tensors notice") {
  Tensor x = leaf({-1, 2});
  Tensor y = x * 3.0;
  Tensor& same = y.relu_();
  CHECK(&same == &y);
  CHECK(ag::allclose(y, f64({0, 6})));
  CHECK(std::string(y.grad_fn()->name) == "relu");
  y.sum().backward();
  CHECK(ag::allclose(x.grad(), f64({0, 3})));

  // sin saved y before the write: backward through it throws, naming the op.
  Tensor a = leaf({0.5, 1.5});
  Tensor h = a * 2.0;
  Tensor s = ag::sin(h);
  h.mul_(2.0);
  std::string msg = error_of<ag::VersionError>([&] { s.sum().backward(); });
  CHECK(contains(msg, "backward of sin"));
  CHECK(contains(msg, "modified in place"));

  // exp saves its output: writing into it breaks exp's backward, as in PyTorch.
  Tensor e = ag::exp(a);
  e.mul_(2.0);
  CHECK(contains(error_of<ag::VersionError>([&] { e.sum().backward(); }), "backward of exp"));

  // The in-place op's own saved value is the old one (a clone), so it is fine.
  Tensor b = leaf({0.5, 1.5}), w = leaf({2, 3});
  Tensor z = b * 1.0;
  z.mul_(w);  // dz/dw needs the old z
  z.sum().backward();
  CHECK(ag::allclose(w.grad(), f64({0.5, 1.5})));
  CHECK(ag::allclose(b.grad(), f64({2, 3})));
}
