// test_optim, part: parameter groups, zero_grad and skipped parameters, and the
// optimizers' state_dict / load_state_dict (round trip by name, refused bad states).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../optim_test_util.h"

#include <cstdint>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;
namespace optim = ag::optim;

using test_util::map_diff;
using namespace optim_test_util;

// ---- groups, zero_grad, skipped parameters ----------------------------------------------

TEST_CASE("parameter groups use their own lr and options") {
  Tensor a = make_param({1.0, -2.0}, Shape{2}, DType::f64);
  Tensor b = make_param({0.5, 0.25, -1.0}, Shape{3}, DType::f64);
  optim::SGD sgd({{{{"a", a}}, optim::SGDOptions(0.1)}, {{{"b", b}}, optim::SGDOptions(0.01).momentum(0.9)}});
  REQUIRE(sgd.num_groups() == 2);
  CHECK(sgd.lr(0) == 0.1);
  CHECK(sgd.lr(1) == 0.01);
  CHECK(sgd.options(1).momentum() == 0.9);
  set_grad(a, {1.0, 2.0});
  set_grad(b, {-1.0, 4.0, 0.5});
  sgd.step();
  CHECK(diff(a.to_vector<double>(), {1.0 - 0.1 * 1.0, -2.0 - 0.1 * 2.0}, 1e-15) == "");
  CHECK(diff(b.to_vector<double>(), {0.5 + 0.01, 0.25 - 0.04, -1.0 - 0.005}, 1e-15) == "");
  // Second step: group 1 has momentum (buf = 0.9 buf + g), group 0 does not.
  sgd.step();
  CHECK(diff(a.to_vector<double>(), {0.9 - 0.1, -2.2 - 0.2}, 1e-15) == "");
  CHECK(diff(b.to_vector<double>(), {0.51 + 0.019, 0.21 - 0.076, -1.005 - 0.0095}, 1e-15) == "");

  sgd.set_lr(0.5, 1);
  CHECK(sgd.lr(0) == 0.1);
  CHECK(sgd.lr(1) == 0.5);
  sgd.set_lr(0.25);
  CHECK(sgd.lr(0) == 0.25);
  CHECK(sgd.lr(1) == 0.25);

  // Adam's first step moves each element by about lr * sign(g): lr per group.
  Tensor c = make_param({1.0, 1.0}, Shape{2}, DType::f64), d = make_param({1.0, 1.0}, Shape{2}, DType::f64);
  optim::Adam adam({{{{"c", c}}, optim::AdamOptions(0.1)}});
  adam.add_param_group({{{"d", d}}, optim::AdamOptions(0.001)});
  CHECK(adam.lr(1) == 0.001);
  set_grad(c, {3.0, -0.5});
  set_grad(d, {3.0, -0.5});
  adam.step();
  CHECK(diff(c.to_vector<double>(), {0.9, 1.1}, 1e-7) == "");
  CHECK(diff(d.to_vector<double>(), {0.999, 1.001}, 1e-7) == "");

  // A name may appear in only one group.
  CHECK_THROWS_AS(adam.add_param_group({{{"c", make_param({0.0}, Shape{1}, DType::f64)}}, optim::AdamOptions()}),
                  ag::ValueError);
}

TEST_CASE("zero_grad drops the gradients and parameters without a gradient are skipped") {
  Tensor a = make_param(p0_values(), kShape, DType::f32);
  Tensor b = make_param({1.0, 2.0, 3.0}, Shape{3}, DType::f32);
  optim::Adam adam({{"a", a}, {"b", b}}, optim::AdamOptions(0.01));

  set_grad(a, grad_values(0));  // b has no gradient
  adam.step();
  CHECK(b.to_vector<double>() == std::vector<double>{1.0, 2.0, 3.0});
  CHECK(a.to_vector<double>() != p0_values());
  ag::TensorMap sd = adam.state_dict();
  CHECK(sd.contains("a.step"));
  CHECK(sd.contains("a.exp_avg"));
  CHECK(sd.contains("a.exp_avg_sq"));
  CHECK_FALSE(sd.contains("b.step"));  // no state for a parameter never stepped
  CHECK_FALSE(sd.contains("b.exp_avg"));
  CHECK(sd.at("a.step").item<int64_t>() == 1);

  adam.zero_grad();
  CHECK_FALSE(a.grad().defined());
  CHECK_FALSE(b.grad().defined());
  std::vector<double> a_before = a.to_vector<double>();
  adam.step();  // nothing has a gradient: nothing moves, no step is counted
  CHECK(a.to_vector<double>() == a_before);
  CHECK(adam.state_dict().at("a.step").item<int64_t>() == 1);

  // Per-parameter step counts, as in torch: b starts counting when it first has a grad.
  set_grad(a, grad_values(1));
  set_grad(b, {0.5, -0.5, 1.0});
  adam.step();
  sd = adam.state_dict();
  CHECK(sd.at("a.step").item<int64_t>() == 2);
  CHECK(sd.at("b.step").item<int64_t>() == 1);
  CHECK(diff(b.to_vector<double>(), {0.99, 2.01, 2.99}, 1e-6) == "");

  // SGD skips the same way.
  Tensor c = make_param({1.0, 2.0}, Shape{2}, DType::f64), d = make_param({3.0}, Shape{1}, DType::f64);
  optim::SGD sgd({{"c", c}, {"d", d}}, optim::SGDOptions(0.1).momentum(0.9));
  set_grad(c, {1.0, 1.0});
  sgd.step();
  CHECK(d.to_vector<double>() == std::vector<double>{3.0});
  CHECK_FALSE(sgd.state_dict().contains("d.momentum_buffer"));
  CHECK(sgd.state_dict().contains("c.momentum_buffer"));
}

// ---- optimizer state dicts ------------------------------------------------------------

namespace {

// Two named parameters, as a model would give them.
struct TwoParams {
  Tensor w, b;
  explicit TwoParams(DType dtype)
      : w(make_param(p0_values(), kShape, dtype)), b(make_param({0.5, -0.25, 1.0}, Shape{3}, dtype)) {}
  optim::NamedParams named() const { return {{"encoder.weight", w}, {"decoder.bias", b}}; }
  void set_grads(int k) {
    set_grad(w, grad_values(k));
    set_grad(b, {grad_at(k, 1), -grad_at(k, 4), 0.5 * grad_at(k, 2)});
  }
};

}  // namespace

TEST_CASE("optimizer state_dict / load_state_dict round trip by parameter name") {
  for (const char* name : {"sgd_momentum", "sgd_nesterov_wd", "adam", "adam_amsgrad_wd", "adamw_amsgrad"}) {
    CAPTURE(name);
    const Hyper& h = config(name);
    TwoParams pa(DType::f64), pb(DType::f64);
    auto a = make_optimizer(h, pa.named());
    for (int k = 0; k < 3; ++k) {
      pa.set_grads(k);
      a->step();
    }
    ag::TensorMap sd = a->state_dict();
    CHECK(sd.contains("group.0.lr"));
    if (h.algo == Algo::sgd) {
      CHECK(sd.contains("encoder.weight.momentum_buffer"));
      CHECK(sd.contains("decoder.bias.momentum_buffer"));
    } else {
      for (const char* field : {"step", "exp_avg", "exp_avg_sq"}) {
        CHECK(sd.contains(std::string("encoder.weight.") + field));
        CHECK(sd.contains(std::string("decoder.bias.") + field));
      }
      CHECK(sd.contains("encoder.weight.max_exp_avg_sq") == h.amsgrad);
      CHECK(sd.at("encoder.weight.step").item<int64_t>() == 3);
    }

    // A fresh optimizer over equal parameters, listed in the other order (names, not
    // positions, match state to parameters) and with another lr (the state sets it).
    pb.w.detach().copy_(pa.w);
    pb.b.detach().copy_(pa.b);
    Hyper other = h;
    other.lr = 123.0;
    auto b = make_optimizer(other, {{"decoder.bias", pb.b}, {"encoder.weight", pb.w}});
    b->load_state_dict(sd);
    CHECK(b->lr() == h.lr);
    CHECK(map_diff(b->state_dict(), a->state_dict()) == "");

    // Continuing gives the same numbers as the uninterrupted optimizer, exactly.
    for (int k = 3; k < kSteps; ++k) {
      pa.set_grads(k);
      pb.set_grads(k);
      a->step();
      b->step();
      CHECK(pb.w.to_vector<double>() == pa.w.to_vector<double>());
      CHECK(pb.b.to_vector<double>() == pa.b.to_vector<double>());
    }
  }
}

TEST_CASE("optimizer load_state_dict rejects a bad state and changes nothing") {
  TwoParams p(DType::f32);
  optim::Adam adam(p.named(), optim::AdamOptions(0.01).amsgrad(true));
  for (int k = 0; k < 2; ++k) {
    p.set_grads(k);
    adam.step();
  }
  const ag::TensorMap before = clone_map(adam.state_dict());

  auto with = [&](const std::string& key, const Tensor& t) {
    ag::TensorMap m = clone_map(before);
    m.insert("group.0.lr", ag::scalar_tensor(0.5, DType::f64));  // would change the lr if applied
    m.insert(key, t);
    return m;
  };
  auto check_unchanged = [&] {
    CHECK(map_diff(adam.state_dict(), before) == "");
    CHECK(adam.lr() == 0.01);
  };

  // A state tensor of the wrong shape.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.weight.exp_avg", ag::zeros(Shape{3, 2}))), ag::ShapeError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("decoder.bias.max_exp_avg_sq", ag::zeros(Shape{4}))), ag::ShapeError);
  check_unchanged();
  // A name that is no parameter of this optimizer.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.bias.exp_avg", ag::zeros(Shape{3}))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("nodot", ag::zeros(Shape{3}))), ag::ValueError);
  check_unchanged();
  // Groups that do not exist, or malformed group keys.
  CHECK_THROWS_AS(adam.load_state_dict(with("group.7.lr", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("group.x.lr", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("group.0.momentum", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  // A step count that is not one integer.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.weight.step", ag::scalar_tensor(2.0, DType::f32))),
                  ag::ValueError);
  check_unchanged();

  // After all that, the optimizer still continues exactly like an untouched one.
  TwoParams q(DType::f32);
  optim::Adam control(q.named(), optim::AdamOptions(0.01).amsgrad(true));
  for (int k = 0; k < kSteps; ++k) {
    q.set_grads(k);
    control.step();
    if (k < 2) continue;
    p.set_grads(k);
    adam.step();
    CHECK(p.w.to_vector<double>() == q.w.to_vector<double>());
  }
}
