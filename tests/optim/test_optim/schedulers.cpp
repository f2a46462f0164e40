// test_optim, part: the learning-rate schedulers (NoamScheduler, StepLR,
// CosineAnnealingLR, LambdaLR) and their state_dict / load_state_dict.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../optim_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;
namespace optim = ag::optim;

using namespace optim_test_util;

// ---- schedulers --------------------------------------------------------------------------

namespace {

struct OneParam {
  Tensor p = make_param({1.0}, Shape{1}, DType::f64);
};

// Vaswani et al., written independently of NoamScheduler::rate.
double noam(int64_t s, int64_t d_model, double factor, int64_t warmup) {
  const double sd = double(s), w = double(warmup);
  return factor / std::sqrt(double(d_model)) * std::min(1.0 / std::sqrt(sd), sd / (w * std::sqrt(w)));
}

}  // namespace

TEST_CASE("NoamScheduler follows the formula, with step 1 set at construction") {
  OneParam x;
  optim::Adam adam({x.p}, optim::AdamOptions(0.123));  // its own lr is not used
  const int64_t d_model = 16, warmup = 5;
  const double factor = 2.0;
  optim::NoamScheduler sched(adam, d_model, factor, warmup);
  CHECK(sched.last_step() == 0);
  CHECK(sched.get_lr() == doctest::Approx(noam(1, d_model, factor, warmup)).epsilon(1e-14));
  CHECK(adam.lr() == sched.get_lr());
  // At step 1 the linear branch is in force: factor d^-0.5 w^-1.5.
  CHECK(sched.get_lr() == doctest::Approx(2.0 / 4.0 / std::pow(5.0, 1.5)).epsilon(1e-14));

  std::vector<double> lrs{sched.get_lr()};  // lrs[s - 1] is the lr of optimizer step s
  for (int64_t k = 1; k < 3 * warmup; ++k) {
    sched.step();
    CHECK(sched.last_step() == k);
    CHECK(adam.lr() == sched.get_lr());
    CHECK(sched.get_lr() == doctest::Approx(noam(k + 1, d_model, factor, warmup)).epsilon(1e-14));
    lrs.push_back(sched.get_lr());
  }
  // The three named points: 1, warmup (the peak, both branches equal), 2 * warmup.
  CHECK(lrs[0] == doctest::Approx(factor * std::pow(16.0, -0.5) * 1.0 * std::pow(5.0, -1.5)).epsilon(1e-14));
  CHECK(lrs[warmup - 1] == doctest::Approx(factor * 0.25 / std::sqrt(5.0)).epsilon(1e-14));
  CHECK(lrs[2 * warmup - 1] == doctest::Approx(factor * 0.25 / std::sqrt(10.0)).epsilon(1e-14));
  CHECK(*std::max_element(lrs.begin(), lrs.end()) == lrs[warmup - 1]);
  CHECK(optim::NoamScheduler::rate(warmup, d_model, factor, warmup) == doctest::Approx(lrs[warmup - 1]).epsilon(1e-14));

  // The optimizer step after k scheduler steps really uses lr(k + 1).
  OneParam y;
  optim::SGD sgd({y.p}, optim::SGDOptions(1.0));
  optim::NoamScheduler s2(sgd, d_model, factor, warmup);
  for (int64_t s = 1; s <= 3; ++s) {
    double before = y.p.item<double>();
    set_grad(y.p, {1.0});
    sgd.step();
    s2.step();
    CHECK(before - y.p.item<double>() == doctest::Approx(noam(s, d_model, factor, warmup)).epsilon(1e-12));
  }
  CHECK_THROWS_AS(optim::NoamScheduler(sgd, 0, 1.0, 10), ag::ValueError);
  CHECK_THROWS_AS(optim::NoamScheduler(sgd, 16, 1.0, 0), ag::ValueError);
}

TEST_CASE("StepLR, CosineAnnealingLR with warm-up and LambdaLR") {
  SUBCASE("StepLR: base * gamma ^ floor(steps / step_size), per group") {
    OneParam a, b;
    optim::SGD sgd({{{{"a", a.p}}, optim::SGDOptions(0.1)}, {{{"b", b.p}}, optim::SGDOptions(1.0)}});
    optim::StepLR sched(sgd, 3, 0.5);
    for (int64_t k = 0; k < 10; ++k) {
      CAPTURE(k);
      CHECK(sched.get_lr(0) == doctest::Approx(0.1 * std::pow(0.5, double(k / 3))).epsilon(1e-15));
      CHECK(sched.get_lr(1) == doctest::Approx(1.0 * std::pow(0.5, double(k / 3))).epsilon(1e-15));
      sched.step();
    }
    CHECK_THROWS_AS(optim::StepLR(sgd, 0), ag::ValueError);
  }
  SUBCASE("CosineAnnealingLR: linear warm-up, then cosine to eta_min, then up again (PyTorch's period)") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.1));
    const int64_t t_max = 10, warmup = 4;
    const double base = 0.1, eta_min = 0.001;
    optim::CosineAnnealingLR sched(sgd, t_max, eta_min, warmup);
    for (int64_t k = 0; k < 15; ++k) {
      CAPTURE(k);
      double want;
      if (k < warmup)
        want = base * double(k + 1) / double(warmup);
      else  // past t_max the cosine goes on (it held eta_min before 0.3)
        want = eta_min +
               (base - eta_min) * 0.5 * (1 + std::cos(std::numbers::pi * double(k - warmup) / double(t_max - warmup)));
      CHECK(sched.get_lr() == doctest::Approx(want).epsilon(1e-14));
      sched.step();
    }
    CHECK_THROWS_AS(optim::CosineAnnealingLR(sgd, 4, 0.0, 4), ag::ValueError);
  }
  SUBCASE("CosineAnnealingLR without warm-up is torch's closed form") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.5));
    optim::CosineAnnealingLR sched(sgd, 8);
    for (int64_t k = 0; k <= 8; ++k) {
      CAPTURE(k);
      CHECK(sched.get_lr() ==
            doctest::Approx(0.5 * 0.5 * (1 + std::cos(std::numbers::pi * double(k) / 8.0))).epsilon(1e-14));
      sched.step();
    }
  }
  SUBCASE("LambdaLR: base * fn(steps)") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.3));
    optim::LambdaLR sched(sgd, [](int64_t s) { return 1.0 / double(1 + s * s); });
    for (int64_t k = 0; k < 6; ++k) {
      CHECK(sched.get_lr() == doctest::Approx(0.3 / double(1 + k * k)).epsilon(1e-15));
      sched.step();
    }
    CHECK_THROWS_AS(optim::LambdaLR(sgd, nullptr), ag::ValueError);
  }
}

TEST_CASE("scheduler state_dict / load_state_dict round trip and malformed state") {
  SUBCASE("StepLR with two groups: base lrs and step count restored") {
    OneParam a1, b1, a2, b2;
    optim::SGD s1({{{{"a", a1.p}}, optim::SGDOptions(0.1)}, {{{"b", b1.p}}, optim::SGDOptions(0.7)}});
    optim::SGD s2({{{{"a", a2.p}}, optim::SGDOptions(9.0)}, {{{"b", b2.p}}, optim::SGDOptions(9.0)}});
    optim::StepLR one(s1, 3, 0.5), two(s2, 3, 0.5);
    for (int k = 0; k < 7; ++k) one.step();
    two.load_state_dict(one.state_dict());
    CHECK(two.last_step() == 7);
    for (int k = 0; k < 5; ++k) {
      CHECK(two.get_lr(0) == one.get_lr(0));
      CHECK(two.get_lr(1) == one.get_lr(1));
      CHECK(s2.lr(1) == s1.lr(1));
      one.step();
      two.step();
    }
  }
  SUBCASE("Noam") {
    OneParam a1, a2;
    optim::Adam o1({a1.p}), o2({a2.p});
    optim::NoamScheduler one(o1, 32, 1.0, 8), two(o2, 32, 1.0, 8);
    for (int k = 0; k < 11; ++k) one.step();
    two.load_state_dict(one.state_dict());
    CHECK(two.last_step() == 11);
    CHECK(o2.lr() == o1.lr());
    CHECK(o2.lr() == doctest::Approx(noam(12, 32, 1.0, 8)).epsilon(1e-14));
  }
  SUBCASE("malformed state throws ValueError and changes nothing") {
    OneParam a, b;
    optim::SGD sgd({{{{"a", a.p}}, optim::SGDOptions(0.1)}, {{{"b", b.p}}, optim::SGDOptions(0.7)}});
    optim::StepLR sched(sgd, 2, 0.5);
    for (int k = 0; k < 3; ++k) sched.step();
    const ag::Metadata good = sched.state_dict();
    REQUIRE(good.count("steps"));
    REQUIRE(good.count("base_lr.0"));
    REQUIRE(good.count("base_lr.1"));
    const double lr0 = sgd.lr(0), lr1 = sgd.lr(1);

    auto with = [&](const std::string& key, const char* value) {
      ag::Metadata m = good;
      if (value)
        m[key] = value;
      else
        m.erase(key);
      return m;
    };
    const std::vector<ag::Metadata> bad = {
        with("steps", nullptr),   with("base_lr.1", nullptr), with("steps", "abc"),
        with("steps", ""),        with("steps", "-1"),        with("steps", "7junk"),
        with("steps", "2.5"),     with("base_lr.0", "lr"),    with("base_lr.1", "0.5x"),
        with("base_lr.0", "nan"), with("base_lr.0", "inf"),   with("steps", "99999999999999999999999"),
    };
    for (const ag::Metadata& m : bad) {
      CAPTURE(m.count("steps") ? m.at("steps") : "<missing steps>");
      CAPTURE(m.count("base_lr.0") ? m.at("base_lr.0") : "<missing base_lr.0>");
      CAPTURE(m.count("base_lr.1") ? m.at("base_lr.1") : "<missing base_lr.1>");
      CHECK_THROWS_AS(sched.load_state_dict(m), ag::ValueError);
      CHECK(sched.last_step() == 3);
      CHECK(sgd.lr(0) == lr0);
      CHECK(sgd.lr(1) == lr1);
      CHECK(sched.state_dict() == good);
    }
    // The good state still loads.
    sched.load_state_dict(good);
    CHECK(sched.last_step() == 3);
  }
}
