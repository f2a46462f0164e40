// bf16 / f16 parameters: every optimizer updates an f32 master copy (state "master") with
// f32 state and writes the master rounded once into the 16-bit parameter, so a 16-bit
// run is the f32 run rounded, step after step, and updates below the 16-bit spacing are
// not lost.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/optim.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

using ag::DType;
using ag::Tensor;
namespace optim = ag::optim;

namespace {

using Make = std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)>;

// Each optimizer with the options that reach every branch of its update.
std::vector<std::pair<std::string, Make>> makers() {
  return {
      {"SGD",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1));
       }},
      {"Adam",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(0.01).weight_decay(0.1).amsgrad(true));
       }},
      {"AdamW",
       [](const std::vector<Tensor>& p) { return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(0.01)); }},
      {"RMSprop",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::RMSprop>(p, optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
       }},
      {"Adagrad",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::Adagrad>(p, optim::AdagradOptions(0.1).initial_accumulator_value(0.1));
       }},
  };
}

// Values exact in bf16 and f16 (k / 16), and per-step gradients of the same kind.
Tensor start() { return Tensor::from_vector(std::vector<double>{1.0, -0.5, 2.25, 0.0625, -3.0}).to(DType::f32); }
Tensor grad_at(int step) {
  return Tensor::from_vector(std::vector<double>{0.5, -1.0 + step * 0.25, 0.125, 2.0, -0.75 * (step % 2 ? 1 : -1)})
      .to(DType::f32);
}

}  // namespace

TEST_CASE("bf16 / f16 parameters: each step is the f32 step rounded once, through an f32 master") {
  for (DType half : {DType::bf16, DType::f16}) {
    for (const auto& maker : makers()) {
      const std::string name = maker.first;
      const Make& make = maker.second;
      CAPTURE(half);
      INFO(name);
      Tensor p32 = start(), p16 = start().to(half);
      auto o32 = make({p32}), o16 = make({p16});
      for (int step = 0; step < 4; ++step) {
        p32.set_grad(grad_at(step));
        p16.set_grad(grad_at(step).to(half));  // the same values: exact in both dtypes
        o32->step();
        o16->step();
        CHECK(p16.dtype() == half);
        CHECK(p16.to(DType::f64).to_vector<double>() == p32.to(half).to(DType::f64).to_vector<double>());
      }
      // The state: the master equals the f32 run's parameter; every field is f32.
      const ag::TensorMap st = o16->state_dict();
      REQUIRE(st.contains("0.master"));
      CHECK(st.at("0.master").to_vector<float>() == p32.to_vector<float>());
      for (const auto& entry : st)
        if (entry.first != "0.step" && entry.first.rfind("group.", 0) != 0) CHECK(entry.second.dtype() == DType::f32);
      // Saved and loaded into a fresh optimizer, the next step continues the same way.
      Tensor q16 = p16.detach().clone();
      auto resumed = make({q16});
      resumed->load_state_dict(st);
      CHECK(resumed->state_dict().at("0.master").dtype() == DType::f32);
      p32.set_grad(grad_at(5));
      o32->step();
      q16.set_grad(grad_at(5).to(half));
      resumed->step();
      CHECK(q16.to(DType::f64).to_vector<double>() == p32.to(half).to(DType::f64).to_vector<double>());
    }
  }
}

TEST_CASE("bf16 parameters: updates below the bf16 spacing add up in the master") {
  // 1 - 0.001 rounds back to 1 in bf16 (spacing 2^-8 below 1): without a master the
  // weight never moves. Through the master, 10 steps reach 0.99, rounded once.
  Tensor p = ag::ones({1}, DType::bf16);
  optim::SGD opt({p}, optim::SGDOptions(0.001));
  for (int i = 0; i < 10; ++i) {
    p.set_grad(ag::ones({1}, DType::bf16));
    opt.step();
  }
  const float master = opt.state_dict().at("0.master").item<float>();
  CHECK(master == doctest::Approx(0.99).epsilon(1e-6));
  CHECK(p.item<double>() == ag::full({1}, double(master)).to(DType::bf16).item<double>());
  CHECK(p.item<double>() < 1.0);
}
