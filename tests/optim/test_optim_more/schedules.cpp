// test_optim_more, part: MultiStepLR, ExponentialLR, OneCycleLR and ReduceLROnPlateau against
// the lr and momentum printed by real torch.optim (tools/optim_reference.py --more); the
// plateau state's round trip; a checkpoint carrying RMSprop, OneCycleLR and plateau state.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_util.h"

using ag::DType;
using ag::Tensor;
namespace optim = ag::optim;
using test_util::contains;
using test_util::error_of;

namespace {

// ---- SCHEDULES of tools/optim_reference.py: (lr, momentum or beta1) at each step ----
struct TorchSchedule {
  const char* name;
  std::vector<std::pair<double, double>> steps;
};

// clang-format off
const std::vector<TorchSchedule> kTorchSchedules = {
    {"multistep",
      {
        {0.1, 0.0},
        {0.1, 0.0},
        {0.05, 0.0},
        {0.05, 0.0},
        {0.05, 0.0},
        {0.0125, 0.0},
        {0.0125, 0.0},
        {0.0125, 0.0},
        {0.0125, 0.0},
        {0.00625, 0.0},
        {0.00625, 0.0},
        {0.00625, 0.0},
        {0.00625, 0.0},
      }},
    {"exponential",
      {
        {0.1, 0.0},
        {0.09000000000000001, 0.0},
        {0.08100000000000002, 0.0},
        {0.07290000000000002, 0.0},
        {0.06561000000000002, 0.0},
        {0.05904900000000002, 0.0},
        {0.05314410000000002, 0.0},
        {0.04782969000000002, 0.0},
        {0.043046721000000024, 0.0},
        {0.03874204890000002, 0.0},
        {0.03486784401000002, 0.0},
        {0.03138105960900001, 0.0},
        {0.028242953648100012, 0.0},
      }},
    {"onecycle_cos",
      {
        {0.020000000000000018, 0.95},
        {0.17489482710979154, 0.9177302443521267},
        {0.43964257956106434, 0.8625744625914449},
        {0.49720771772545586, 0.8505584586887436},
        {0.46650648492070584, 0.856698729810778},
        {0.4058728269748815, 0.8688255099070633},
        {0.32368949884755166, 0.8852622412794547},
        {0.23131855133348753, 0.9037365046793212},
        {0.14153049910434962, 0.9216941869558779},
        {0.0667387650944153, 0.9366525935914912},
        {0.01728349371269761, 0.9465436874322102},
        {2e-06, 0.95},
        {0.017283493712697582, 0.9465436874322102},
      }},
    {"onecycle_linear",
      {
        {0.05, 0.95},
        {0.25, 0.9055555555555556},
        {0.44999999999999996, 0.861111111111111},
        {0.46157692307692305, 0.8576923076923076},
        {0.41034615384615386, 0.867948717948718},
        {0.3591153846153846, 0.8782051282051282},
        {0.30788461538461537, 0.8884615384615384},
        {0.2566538461538461, 0.8987179487179486},
        {0.20542307692307693, 0.908974358974359},
        {0.15419230769230768, 0.9192307692307692},
        {0.1029615384615385, 0.9294871794871794},
        {0.05173076923076919, 0.9397435897435897},
        {0.0005000000000000004, 0.95},
      }},
    {"onecycle_three",
      {
        {0.040000000000000036, 0.9},
        {0.3497896542195831, 0.8677302443521268},
        {0.8792851591221287, 0.812574462591445},
        {0.9450188923135407, 0.8057271987173396},
        {0.4621423934774446, 0.8560268340127662},
        {0.05394792763549498, 0.8985470908713026},
        {0.0381516932425798, 0.9},
        {0.031224618933116923, 0.9},
        {0.02108466989389118, 0.9},
        {0.010634768002885594, 0.9},
        {0.0028665701910005545, 0.9},
        {4e-06, 0.9},
        {0.002866570191000548, 0.9},
      }},
    {"onecycle_nomom",
      {
        {0.01200000000000001, 0.0},
        {0.03129234185504082, 0.0},
        {0.08400000000000002, 0.0},
        {0.156, 0.0},
        {0.22799999999999998, 0.0},
        {0.2807076581449592, 0.0},
        {0.3, 0.0},
        {0.2851453896040421, 0.0},
        {0.24352369618492894, 0.0},
        {0.18337860658088678, 0.0},
        {0.11662259341911323, 0.0},
        {0.05647750381507109, 0.0},
        {0.014855810395957887, 0.0},
      }},
    {"plateau_min",
      {
        {0.1, 0.0},
        {0.1, 0.0},
        {0.1, 0.0},
        {0.1, 0.0},
        {0.05, 0.0},
        {0.05, 0.0},
        {0.025, 0.0},
        {0.025, 0.0},
        {0.025, 0.0},
        {0.0125, 0.0},
        {0.0125, 0.0},
        {0.00625, 0.0},
        {0.00625, 0.0},
      }},
    {"plateau_max_abs",
      {
        {0.1, 0.0},
        {0.1, 0.0},
        {0.05, 0.0},
        {0.05, 0.0},
        {0.05, 0.0},
        {0.025, 0.0},
        {0.025, 0.0},
        {0.025, 0.0},
        {0.02, 0.0},
        {0.02, 0.0},
        {0.02, 0.0},
        {0.02, 0.0},
        {0.02, 0.0},
      }},
};
// clang-format on

const std::vector<double> kPlateauMetrics = {5.0, 4.0, 4.0, 3.9999, 4.5, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0};

// The schedule's (lr, momentum) before the first step and after each of the steps.
template <class MakeOpt, class MakeSched>
std::vector<std::pair<double, double>> run_schedule(MakeOpt make_opt, MakeSched make_sched, int steps) {
  Tensor p = ag::zeros({1}, DType::f64);
  p.requires_grad_(true);
  auto opt = make_opt(optim::NamedParams{{"p", p}});
  auto sched = make_sched(*opt);
  auto mom = [&] {
    try {
      return opt->momentum(0);
    } catch (const ag::ValueError&) {
      return 0.0;  // Adagrad: none
    }
  };
  std::vector<std::pair<double, double>> out{{opt->lr(0), mom()}};
  for (int k = 0; k < steps; ++k) {
    p.set_grad(ag::zeros({1}, DType::f64));
    opt->step();
    if constexpr (std::is_same_v<decltype(sched), std::unique_ptr<optim::ReduceLROnPlateau>>)
      sched->step(kPlateauMetrics[static_cast<std::size_t>(k)]);
    else
      sched->step();
    out.emplace_back(opt->lr(0), mom());
  }
  return out;
}

std::vector<std::pair<double, double>> our_schedule(const std::string& name) {
  auto sgd = [](double lr, double m) {
    return [lr, m](const optim::NamedParams& ps) {
      return std::make_unique<optim::SGD>(ps, optim::SGDOptions(lr).momentum(m));
    };
  };
  const int n = 12;
  if (name == "multistep")
    return run_schedule(
        sgd(0.1, 0),
        [](auto& o) {
          return std::make_unique<optim::MultiStepLR>(o, std::vector<int64_t>{2, 5, 5, 9}, 0.5);
        },
        n);
  if (name == "exponential")
    return run_schedule(
        sgd(0.1, 0), [](auto& o) { return std::make_unique<optim::ExponentialLR>(o, 0.9); }, n);
  if (name == "onecycle_cos")
    return run_schedule(
        sgd(0.1, 0.9),
        [](auto& o) { return std::make_unique<optim::OneCycleLR>(o, optim::OneCycleLROptions(0.5, 12)); }, n);
  if (name == "onecycle_linear")
    return run_schedule(
        [](const optim::NamedParams& ps) { return std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.1)); },
        [](auto& o) {
          return std::make_unique<optim::OneCycleLR>(o, optim::OneCycleLROptions(0.5, 13)
                                                            .pct_start(0.25)
                                                            .anneal_strategy(optim::AnnealStrategy::linear)
                                                            .div_factor(10.0)
                                                            .final_div_factor(100.0));
        },
        n);
  if (name == "onecycle_three")
    return run_schedule(
        sgd(0.1, 0.9),
        [](auto& o) {
          return std::make_unique<optim::OneCycleLR>(
              o, optim::OneCycleLROptions(1.0, 12).three_phase(true).base_momentum(0.8).max_momentum(0.9));
        },
        n);
  if (name == "onecycle_nomom")
    return run_schedule(
        [](const optim::NamedParams& ps) { return std::make_unique<optim::Adagrad>(ps, optim::AdagradOptions(0.1)); },
        [](auto& o) {
          return std::make_unique<optim::OneCycleLR>(
              o, optim::OneCycleLROptions(0.3, 14).cycle_momentum(false).pct_start(0.5));
        },
        n);
  if (name == "plateau_min")
    return run_schedule(
        sgd(0.1, 0),
        [](auto& o) {
          return std::make_unique<optim::ReduceLROnPlateau>(o,
                                                            optim::ReduceLROnPlateauOptions().patience(1).factor(0.5));
        },
        n);
  if (name == "plateau_max_abs")
    return run_schedule(
        sgd(0.1, 0),
        [](auto& o) {
          return std::make_unique<optim::ReduceLROnPlateau>(o, optim::ReduceLROnPlateauOptions()
                                                                   .mode(optim::PlateauMode::max)
                                                                   .patience(0)
                                                                   .factor(0.5)
                                                                   .threshold(0.5)
                                                                   .threshold_mode(optim::ThresholdMode::abs)
                                                                   .cooldown(2)
                                                                   .min_lr({0.02}));
        },
        n);
  throw std::logic_error("no schedule " + name);
}

}  // namespace

TEST_CASE("MultiStepLR, ExponentialLR, OneCycleLR, ReduceLROnPlateau match torch's lr and momentum") {
  for (const TorchSchedule& ref : kTorchSchedules) {
    CAPTURE(ref.name);
    auto got = our_schedule(ref.name);
    REQUIRE(got.size() == ref.steps.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      CHECK(std::abs(got[k].first - ref.steps[k].first) <= 1e-12);
      CHECK(std::abs(got[k].second - ref.steps[k].second) <= 1e-12);
    }
  }
}

TEST_CASE("ReduceLROnPlateau state round trip; a checkpoint carries it as extra metadata") {
  auto make = [](Tensor& p) {
    return std::make_unique<optim::SGD>(optim::NamedParams{{"p", p}}, optim::SGDOptions(0.1));
  };
  Tensor p = ag::zeros({1}, DType::f64), q = ag::zeros({1}, DType::f64);
  p.requires_grad_(true);
  q.requires_grad_(true);
  auto o1 = make(p), o2 = make(q);
  optim::ReduceLROnPlateau s1(*o1, optim::ReduceLROnPlateauOptions().patience(1).factor(0.5).cooldown(1));
  optim::ReduceLROnPlateau s2(*o2, optim::ReduceLROnPlateauOptions().patience(1).factor(0.5).cooldown(1));
  CHECK(s1.state_dict().at("best") == "inf");
  for (int k = 0; k < 5; ++k) s1.step(kPlateauMetrics[static_cast<std::size_t>(k)]);
  s2.load_state_dict(s1.state_dict());
  o2->set_lr(o1->lr(0));
  CHECK(s2.best() == s1.best());
  CHECK(s2.num_bad_epochs() == s1.num_bad_epochs());
  CHECK(s2.last_epoch() == 5);
  for (int k = 5; k < 12; ++k) {
    s1.step(kPlateauMetrics[static_cast<std::size_t>(k)]);
    s2.step(kPlateauMetrics[static_cast<std::size_t>(k)]);
    CHECK(o1->lr(0) == o2->lr(0));
  }
  ag::Metadata bad = s1.state_dict();
  bad["num_bad_epochs"] = "7junk";
  CHECK(contains(error_of<ag::ValueError>([&] { s2.load_state_dict(bad); }), "'num_bad_epochs'"));
  bad = s1.state_dict();
  bad.erase("best");
  CHECK_THROWS_AS(s2.load_state_dict(bad), ag::ValueError);
}

TEST_CASE("a checkpoint carries RMSprop's state, OneCycleLR's step and momentum, and the plateau state") {
  const std::string path = test_util::tmp_dir("optim_more", "ckpt") + "/ckpt.safetensors";
  auto make = [] {
    ag::manual_seed(3);
    return ag::nn::Linear(2, 2);
  };
  ag::nn::Linear m1 = make(), m2 = make();
  auto opts = optim::RMSpropOptions(0.01).momentum(0.9).centered(true);
  optim::RMSprop o1(m1->named_parameters(), opts), o2(m2->named_parameters(), opts);
  optim::OneCycleLR s1(o1, optim::OneCycleLROptions(0.1, 10)), s2(o2, optim::OneCycleLROptions(0.1, 10));
  optim::ReduceLROnPlateau p1(o1), p2(o2);
  for (int k = 0; k < 3; ++k) {
    Tensor y = m1(ag::ones({4, 2}, DType::f32));
    Tensor loss = ag::sum(ag::mul(y, y));
    loss.backward();
    o1.step();
    o1.zero_grad();
    s1.step();
    p1.step(1.0 / (k + 1));
  }
  ag::Metadata extra;
  for (auto& [k, v] : p1.state_dict()) extra["plateau." + k] = v;
  ag::save_checkpoint(path, *m1, &o1, &s1, extra);
  ag::Metadata got = ag::load_checkpoint(path, *m2, &o2, &s2);
  ag::Metadata plateau;
  for (auto& [k, v] : got)
    if (k.rfind("plateau.", 0) == 0) plateau[k.substr(8)] = v;
  p2.load_state_dict(plateau);
  CHECK(test_util::map_diff(o1.state_dict(), o2.state_dict()) == "");
  CHECK(o2.state_dict().contains("weight.grad_avg"));
  CHECK(s2.last_step() == 3);
  CHECK(o2.momentum(0) == o1.momentum(0));  // OneCycleLR set it from the loaded step
  CHECK(p2.best() == p1.best());
}
