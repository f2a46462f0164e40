// The learning-rate schedules against PyTorch 1.13 (tests/fixtures/lr_schedulers,
// tools/fixtures/schedulers.py): every case's lr of both groups after construction and
// after each of K steps, the chainable schedules alone and composed (two on one
// optimizer, ChainedScheduler, SequentialLR), with a manual lr change and a
// ReduceLROnPlateau cut carried on, and CosineAnnealingLR past T_max. Each fixture case
// is built here by name; a case without a builder fails.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;
using namespace ag::optim;

namespace {

// One case: the optimizer, what it owns, and one scheduler step (with the case's hook).
struct Run {
  Tensor a = zeros({1}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD opt{{{{{"a", a}}, SGDOptions(0.1)}, {{{"b", b}}, SGDOptions(0.05)}}};
  std::vector<std::unique_ptr<LRScheduler>> scheds;
  std::unique_ptr<ChainedScheduler> chain;
  std::unique_ptr<SequentialLR> seq;
  std::unique_ptr<ReduceLROnPlateau> plateau;
  std::function<void(int)> hook;  // before the schedulers' step k (0-based)

  template <class S, class... A>
  LRScheduler* add(A&&... args) {
    scheds.push_back(std::make_unique<S>(opt, std::forward<A>(args)...));
    return scheds.back().get();
  }
  void step(int k) {
    if (hook) hook(k);
    if (chain) return chain->step();
    if (seq) return seq->step();
    for (auto& s : scheds) s->step();
  }
};

void set_all(SGD& opt, double lr) {
  for (std::size_t g = 0; g < opt.num_groups(); ++g) opt.set_lr(lr, g);
}

const std::map<std::string, std::function<void(Run&)>> kBuilders = {
    {"step", [](Run& r) { r.add<StepLR>(3, 0.5); }},
    {"multistep",
     [](Run& r) {
       r.add<MultiStepLR>(std::vector<int64_t>{2, 5, 5, 9}, 0.5);
     }},
    {"exponential", [](Run& r) { r.add<ExponentialLR>(0.9); }},
    {"cosine_past_tmax", [](Run& r) { r.add<CosineAnnealingLR>(4, 0.01); }},
    {"cosine_5", [](Run& r) { r.add<CosineAnnealingLR>(5); }},
    {"linear", [](Run& r) { r.add<LinearLR>(); }},
    {"linear_down", [](Run& r) { r.add<LinearLR>(0.5, 0.1, 4); }},
    {"constant", [](Run& r) { r.add<ConstantLR>(); }},
    {"constant_half", [](Run& r) { r.add<ConstantLR>(0.5, 3); }},
    {"polynomial", [](Run& r) { r.add<PolynomialLR>(5, 1.0); }},
    {"polynomial_sq", [](Run& r) { r.add<PolynomialLR>(4, 2.0); }},
    {"step_and_exponential",
     [](Run& r) {
       r.add<StepLR>(2, 0.5);
       r.add<ExponentialLR>(0.9);
     }},
    {"linear_and_cosine",
     [](Run& r) {
       r.add<LinearLR>(0.25, 1.0, 3);
       r.add<CosineAnnealingLR>(6, 0.001);
     }},
    {"chained",
     [](Run& r) {
       LRScheduler* c = r.add<ConstantLR>(0.1, 2);
       LRScheduler* e = r.add<ExponentialLR>(0.9);
       r.chain = std::make_unique<ChainedScheduler>(std::vector<LRScheduler*>{c, e});
     }},
    {"sequential",
     [](Run& r) {
       LRScheduler* l = r.add<LinearLR>(0.1, 1.0, 3);
       LRScheduler* e = r.add<ExponentialLR>(0.9);
       r.seq = std::make_unique<SequentialLR>(r.opt, std::vector<LRScheduler*>{l, e}, std::vector<int64_t>{3});
     }},
    {"sequential_three",
     [](Run& r) {
       LRScheduler* c = r.add<ConstantLR>(0.5, 2);
       LRScheduler* s = r.add<StepLR>(2, 0.5);
       LRScheduler* cos = r.add<CosineAnnealingLR>(4, 0.01);
       r.seq = std::make_unique<SequentialLR>(r.opt, std::vector<LRScheduler*>{c, s, cos}, std::vector<int64_t>{3, 7});
     }},
    {"onecycle_full", [](Run& r) { r.add<OneCycleLR>(OneCycleLROptions(0.5, 14).cycle_momentum(false)); }},
    {"onecycle_groups",
     [](Run& r) {
       r.add<OneCycleLR>(OneCycleLROptions(std::vector<double>{0.5, 0.2}, 14).three_phase(true).cycle_momentum(false));
     }},
    {"onecycle_linear_full",
     [](Run& r) {
       r.add<OneCycleLR>(OneCycleLROptions(0.5, 14).anneal_strategy(AnnealStrategy::linear).cycle_momentum(false));
     }},
    {"warm_restarts", [](Run& r) { r.add<CosineAnnealingWarmRestarts>(3, 2, 0.001); }},
    {"warm_restarts_4", [](Run& r) { r.add<CosineAnnealingWarmRestarts>(4); }},
    {"cyclic",
     [](Run& r) {
       r.add<CyclicLR>(CyclicLROptions({0.01, 0.005}, {0.1}).step_size_up(3));
     }},
    {"cyclic_tri2",
     [](Run& r) {
       r.add<CyclicLR>(CyclicLROptions({0.01}, {0.1, 0.2})
                           .step_size_up(2)
                           .step_size_down(3)
                           .mode(CyclicMode::triangular2)
                           .cycle_momentum(false));
     }},
    {"cyclic_exp",
     [](Run& r) {
       r.add<CyclicLR>(
           CyclicLROptions({0.01}, {0.1}).step_size_up(2).mode(CyclicMode::exp_range).gamma(0.9).cycle_momentum(false));
     }},
    {"step_manual",
     [](Run& r) {
       r.add<StepLR>(3, 0.5);
       r.hook = [&r](int k) { k == 4 ? set_all(r.opt, 0.2) : void(); };
     }},
    {"exponential_manual",
     [](Run& r) {
       r.add<ExponentialLR>(0.8);
       r.hook = [&r](int k) { k == 4 ? set_all(r.opt, 0.2) : void(); };
     }},
    {"cosine_manual",
     [](Run& r) {
       r.add<CosineAnnealingLR>(6);
       r.hook = [&r](int k) { k == 4 ? set_all(r.opt, 0.2) : void(); };
     }},
    {"step_plateau",
     [](Run& r) {
       r.add<StepLR>(4, 0.5);
       r.plateau =
           std::make_unique<ReduceLROnPlateau>(r.opt, ReduceLROnPlateauOptions().patience(0).factor(0.5).cooldown(2));
       r.hook = [&r](int k) { r.plateau->step(k < 3 ? 1.0 : 2.0); };
     }},
};

}  // namespace

TEST_CASE("learning-rate schedules match torch.optim.lr_scheduler, chained and manual changes included") {
  const test_util::Fixture f = test_util::load_fixture("lr_schedulers");
  const auto cases = nlohmann::json::parse(f.meta("cases"));
  REQUIRE(cases.size() == kBuilders.size());
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const auto builder = kBuilders.find(name);
    REQUIRE_MESSAGE(builder != kBuilders.end(), "no C++ builder for fixture case ", name);
    const Tensor want = f.at(name + "/lr");  // (K + 1, 2)
    Run r;
    builder->second(r);
    for (int64_t k = 0; k < want.size(0); ++k) {
      CAPTURE(k);
      if (k > 0) r.step(static_cast<int>(k - 1));
      for (std::size_t g = 0; g < 2; ++g) {
        double w = want.select(0, k).select(0, static_cast<int64_t>(g)).item<double>();
        if (name == "onecycle_linear_full") w = std::max(w, 0.0);  // PyTorch's last lr is negative: 0 here
        CHECK(std::abs(r.opt.lr(g) - w) <= 1e-15 + 1e-13 * std::abs(w));
      }
    }
  }
}

TEST_CASE("SequentialLR and ChainedScheduler refuse what PyTorch refuses") {
  Tensor a = zeros({1}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD opt({a}, SGDOptions(0.1)), other({b}, SGDOptions(0.1));
  StepLR s(opt, 2), t(other, 2);
  CHECK_THROWS_WITH_AS((SequentialLR{opt, {&s, &t}, {2}}), doctest::Contains("index 1 to be different"), ValueError);
  CHECK_THROWS_WITH_AS((SequentialLR{opt, {&s}, {2}}), doctest::Contains("number of schedulers 1"), ValueError);
  CHECK_THROWS_WITH_AS((ChainedScheduler{{&s, &t}}), doctest::Contains("same optimizer"), ValueError);
  CHECK_THROWS_WITH_AS((ChainedScheduler{{}}), doctest::Contains("no schedulers"), ValueError);
  CHECK_THROWS_WITH_AS((LinearLR{opt, 0.0}), doctest::Contains("Starting multiplicative factor"), ValueError);
  CHECK_THROWS_WITH_AS((ConstantLR{opt, 1.5}), doctest::Contains("got 1.5"), ValueError);
  CHECK_THROWS_WITH_AS((PolynomialLR{opt, 0}), doctest::Contains("total_iters must be positive"), ValueError);
}

TEST_CASE("a schedule's base is the optimizer's initial_lr, set once by its first scheduler") {
  Tensor a = zeros({1}).requires_grad_();
  SGD opt({a}, SGDOptions(0.1));
  CHECK(!opt.initial_lr(0));
  LinearLR warm(opt, 0.5, 1.0, 2);  // lr 0.05 now; initial_lr stays 0.1
  CHECK(*opt.initial_lr(0) == 0.1);
  CosineAnnealingLR cos(opt, 4);
  CHECK(cos.lr_at(0, 0.1) == 0.1);
  CHECK(warm.get_last_lr() == std::vector<double>{0.05});
}

TEST_CASE("a chained schedule resumes from its state to the bit") {
  Tensor a = zeros({1}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD o1({a}, SGDOptions(0.1)), o2({b}, SGDOptions(0.1));
  CosineAnnealingLR c1(o1, 7, 0.003), c2(o2, 7, 0.003);
  ExponentialLR e1(o1, 0.97);
  for (int k = 0; k < 9; ++k) {
    if (k == 4) o1.set_lr(0.05, 0);  // a manual change the chain carries on
    c1.step();
    e1.step();
  }
  ExponentialLR e2(o2, 0.97);
  c2.load_state_dict(c1.state_dict());
  e2.load_state_dict(e1.state_dict());
  CHECK(o2.lr(0) == o1.lr(0));
  for (int k = 0; k < 6; ++k) {
    c1.step(), e1.step(), c2.step(), e2.step();
    CHECK(o2.lr(0) == o1.lr(0));
  }
}

TEST_CASE("CyclicLR cycles the momentum opposite to the lr; CosineAnnealingWarmRestarts restarts") {
  Tensor a = zeros({1}).requires_grad_();
  SGD opt({a}, SGDOptions(0.5).momentum(0.5));
  CyclicLR c(opt, CyclicLROptions({0.01}, {0.1}).step_size_up(2));
  CHECK(opt.lr(0) == 0.01);
  CHECK(opt.momentum(0) == 0.9);  // max_momentum at the lr's floor
  c.step();
  CHECK(opt.lr(0) == doctest::Approx(0.055));
  CHECK(opt.momentum(0) == doctest::Approx(0.85));
  c.step();
  CHECK(opt.lr(0) == doctest::Approx(0.1));
  CHECK(opt.momentum(0) == doctest::Approx(0.8));
  CHECK_THROWS_MSG((CyclicLR{opt, CyclicLROptions({0.01}, {0.1}).step_size_up(0)}), ValueError,
                   "CyclicLR: step sizes must be positive, got up 0 and down 0");
  Adagrad ada({a}, AdagradOptions(0.1));
  CHECK_THROWS_MSG((CyclicLR{ada, CyclicLROptions({0.01}, {0.1})}), ValueError,
                   "Adagrad: optimizer must support momentum or beta1 (cycle_momentum of");  // no momentum to cycle
  CHECK_THROWS_WITH_AS((CosineAnnealingWarmRestarts{opt, 0}), doctest::Contains("positive integer T_0"), ValueError);
}

TEST_CASE("SequentialLR and ChainedScheduler resume from their state_dict to the bit") {
  auto make_opt = [](Tensor& p) { return SGD({p}, SGDOptions(0.1)); };
  Tensor a = zeros({1}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD o1 = make_opt(a), o2 = make_opt(b);
  LinearLR l1(o1, 0.1, 1.0, 3), l2(o2, 0.1, 1.0, 3);
  CosineAnnealingLR c1(o1, 5, 0.001), c2(o2, 5, 0.001);
  SequentialLR s1(o1, {&l1, &c1}, {3}), s2(o2, {&l2, &c2}, {3});
  for (int k = 0; k < 6; ++k) s1.step();
  s2.load_state_dict(s1.state_dict());
  CHECK(s2.last_step() == 6);
  CHECK(o2.lr(0) == o1.lr(0));
  for (int k = 0; k < 5; ++k) {
    s1.step(), s2.step();
    CHECK(o2.lr(0) == o1.lr(0));
  }
  Metadata bad = s1.state_dict();
  bad.erase("1.steps");
  const double lr = o2.lr(0);
  CHECK_THROWS_MSG(s2.load_state_dict(bad), ValueError, "scheduler.load_state_dict: missing 'steps'");
  CHECK(o2.lr(0) == lr);  // nothing changed

  Tensor c = zeros({1}).requires_grad_(), d = zeros({1}).requires_grad_();
  SGD o3 = make_opt(c), o4 = make_opt(d);
  StepLR st3(o3, 2, 0.5), st4(o4, 2, 0.5);
  ExponentialLR e3(o3, 0.9), e4(o4, 0.9);
  ChainedScheduler ch3({&st3, &e3}), ch4({&st4, &e4});
  for (int k = 0; k < 5; ++k) ch3.step();
  ch4.load_state_dict(ch3.state_dict());
  CHECK(o4.lr(0) == o3.lr(0));
  ch3.step(), ch4.step();
  CHECK(o4.lr(0) == o3.lr(0));
}

TEST_CASE("SequentialLR saved before its milestone resumes: the later schedule has not started") {
  Tensor a = zeros({1}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD o1({a}, SGDOptions(0.1)), o2({b}, SGDOptions(0.1));
  ConstantLR k1(o1, 0.5, 2), k2(o2, 0.5, 2);
  ExponentialLR e1(o1, 0.9), e2(o2, 0.9);
  SequentialLR s1(o1, {&k1, &e1}, {4}), s2(o2, {&k2, &e2}, {4});
  s1.step();
  CHECK(e1.last_step() == -1);  // one step back, as PyTorch's
  s2.load_state_dict(s1.state_dict());
  CHECK(o2.lr(0) == o1.lr(0));
  for (int k = 0; k < 6; ++k) {
    s1.step(), s2.step();
    CHECK(o2.lr(0) == o1.lr(0));
  }
}
