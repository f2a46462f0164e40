// MultiStepLR, ExponentialLR, OneCycleLR and ReduceLROnPlateau, as torch.optim.lr_scheduler
// (1.13) computes them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "attograd/optim/scheduler.h"
#include "state_text.h"

namespace ag::optim {

// ---- MultiStepLR ----
MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  AG_CHECK(milestones_.empty() || milestones_.front() >= 0, ValueError, "MultiStepLR: milestones must be >= 0, got ",
           milestones_.front());
  apply();
}

double MultiStepLR::lr_at(int64_t steps, double base_lr) const {
  // PyTorch's closed form: gamma ** bisect_right(milestones, last_epoch).
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), steps) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}

double MultiStepLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  const auto listed = std::count(milestones_.begin(), milestones_.end(), steps);  // PyTorch's Counter
  return listed == 0 ? lr : lr * std::pow(gamma_, static_cast<double>(listed));
}

// ---- ExponentialLR ----
ExponentialLR::ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt), gamma_(gamma) {
  AG_CHECK(std::isfinite(gamma) && gamma >= 0, ValueError, "ExponentialLR: gamma must be finite and >= 0, got ", gamma);
  apply();
}

double ExponentialLR::lr_at(int64_t steps, double base_lr) const {
  return base_lr * std::pow(gamma_, static_cast<double>(steps));
}

double ExponentialLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  return steps == 0 ? lr : lr * gamma_;
}

// ---- OneCycleLR ----
// Phases (end step, lr from -> to, momentum from -> to), PyTorch's:
//   two:   [pct T - 1: initial -> max, max_m -> base_m], [T - 1: max -> min, base_m -> max_m]
//   three: [pct T - 1: initial -> max], [2 pct T - 2: max -> initial], [T - 1: initial -> min]
OneCycleLR::OneCycleLR(Optimizer& opt, const OneCycleLROptions& o) : LRScheduler(opt), options_(o) {
  AG_CHECK(o.total_steps() > 0, ValueError, "OneCycleLR: Expected positive integer total_steps, but got ",
           o.total_steps());
  AG_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, ValueError,
           "OneCycleLR: Expected float between 0 and 1 pct_start, but got ", o.pct_start());
  // One max_lr for every group, or one each (PyTorch's list form).
  max_lrs_ = o.max_lrs().empty() ? std::vector<double>(opt.num_groups(), o.max_lr()) : o.max_lrs();
  AG_CHECK(max_lrs_.size() == opt.num_groups(), ValueError, "OneCycleLR: expected ", opt.num_groups(),
           " values for max_lr, got ", max_lrs_.size());
  for (double m : max_lrs_)
    AG_CHECK(std::isfinite(m) && m >= 0 && o.div_factor() > 0 && o.final_div_factor() > 0, ValueError,
             "OneCycleLR: need max_lr >= 0 and positive div factors, got max_lr ", m, ", div_factor ", o.div_factor(),
             ", final_div_factor ", o.final_div_factor());
  if (o.cycle_momentum())
    for (std::size_t g = 0; g < opt.num_groups(); ++g) (void)opt.momentum(g);  // ValueError without one
  for (std::size_t g = 0; g < opt.num_groups(); ++g) {
    base_lrs_[g] = max_lrs_[g] / o.div_factor();
    opt.set_initial_lr(base_lrs_[g], g);  // as PyTorch's group['initial_lr']
  }
  apply();
}

// Phases (end step, lr from -> to, momentum from -> to), PyTorch's:
//   two:   [pct T - 1: initial -> max, max_m -> base_m], [T - 1: max -> min, base_m -> max_m]
//   three: [pct T - 1: initial -> max], [2 pct T - 2: max -> initial], [T - 1: initial -> min]
std::vector<OneCycleLR::Phase> OneCycleLR::phases(double max_lr) const {
  const OneCycleLROptions& o = options_;
  const double initial = max_lr / o.div_factor(), min_lr = initial / o.final_div_factor();
  const double total = static_cast<double>(o.total_steps()), up = o.pct_start() * total;
  const double hi_m = o.max_momentum(), lo_m = o.base_momentum();
  if (o.three_phase())
    return {{up - 1, initial, max_lr, hi_m, lo_m},
            {2 * up - 2, max_lr, initial, lo_m, hi_m},
            {total - 1, initial, min_lr, hi_m, hi_m}};
  return {{up - 1, initial, max_lr, hi_m, lo_m}, {total - 1, max_lr, min_lr, lo_m, hi_m}};
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == AnnealStrategy::linear) return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

// Step total_steps (the last scheduler.step() of PyTorch's own loop of total_steps
// iterations) runs the last phase past its end, as PyTorch does; no optimizer step uses
// that lr.
std::pair<double, double> OneCycleLR::at(int64_t steps, double max_lr) const {
  AG_CHECK(steps <= options_.total_steps(), ValueError, "OneCycleLR: Tried to step ", steps + 1,
           " times. The specified number of total steps is ", options_.total_steps());
  const auto step = static_cast<double>(steps);
  const std::vector<Phase> ph = phases(max_lr);
  double start = 0;
  for (std::size_t i = 0; i < ph.size(); ++i) {
    if (step <= ph[i].end_step || i + 1 == ph.size()) {
      const double pct = (step - start) / (ph[i].end_step - start);
      return {anneal(ph[i].start_lr, ph[i].end_lr, pct), anneal(ph[i].start_momentum, ph[i].end_momentum, pct)};
    }
    start = ph[i].end_step;
  }
  AG_ASSERT(false, "OneCycleLR: no phase");
  return {};
}

// Past the end of a linear anneal PyTorch's lr is negative (-0.0595 for max_lr 0.5 over
// 12 steps), which no optimizer takes: 0 then.
double OneCycleLR::group_lr_at(int64_t steps, std::size_t group, double) const {
  return std::max(0.0, at(steps, max_lrs_[group]).first);
}
double OneCycleLR::lr_at(int64_t steps, double base_lr) const {
  return std::max(0.0, at(steps, base_lr * options_.div_factor()).first);
}
double OneCycleLR::momentum_at(int64_t steps) const { return at(steps, max_lrs_.empty() ? 1.0 : max_lrs_[0]).second; }

void OneCycleLR::after_update(int64_t steps) {
  if (!options_.cycle_momentum()) return;
  const double m = momentum_at(steps);
  for (std::size_t g = 0; g < opt_.num_groups(); ++g) opt_.set_momentum(m, g);
}

// ---- ReduceLROnPlateau ----
ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& o)
    : opt_(opt), options_(o), best_(o.mode() == PlateauMode::min ? INFINITY : -INFINITY) {
  AG_CHECK(o.factor() < 1.0 && o.factor() >= 0, ValueError,
           "ReduceLROnPlateau: Factor should be < 1.0 (and >= 0), got ", o.factor());
  AG_CHECK(o.patience() >= 0 && o.cooldown() >= 0, ValueError,
           "ReduceLROnPlateau: patience and cooldown must be >= 0, got ", o.patience(), " and ", o.cooldown());
  AG_CHECK(std::isfinite(o.threshold()) && std::isfinite(o.eps()), ValueError,
           "ReduceLROnPlateau: threshold and eps must be finite, got ", o.threshold(), " and ", o.eps());
  const std::size_t n = opt.num_groups();
  AG_CHECK(o.min_lr().size() == 1 || o.min_lr().size() == n, ValueError, "ReduceLROnPlateau: expected ", n,
           " min_lrs, got ", o.min_lr().size());
  min_lrs_ = o.min_lr().size() == 1 ? std::vector<double>(n, o.min_lr()[0]) : o.min_lr();
  for (double m : min_lrs_)
    AG_CHECK(std::isfinite(m) && m >= 0, ValueError, "ReduceLROnPlateau: min_lr must be finite and >= 0, got ", m);
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double th = options_.threshold();
  const bool rel = options_.threshold_mode() == ThresholdMode::rel;
  if (options_.mode() == PlateauMode::min) return rel ? a < best_ * (1 - th) : a < best_ - th;
  return rel ? a > best_ * (th + 1) : a > best_ + th;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_ = 0;
  } else {
    ++num_bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    num_bad_ = 0;  // bad steps in cooldown are ignored
  }
  if (num_bad_ > options_.patience()) {
    for (std::size_t g = 0; g < opt_.num_groups(); ++g) {
      const double old_lr = opt_.lr(g), new_lr = std::max(old_lr * options_.factor(), min_lrs_[g]);
      if (old_lr - new_lr > options_.eps()) opt_.set_lr(new_lr, g);
    }
    cooldown_left_ = options_.cooldown();
    num_bad_ = 0;
  }
}

Metadata ReduceLROnPlateau::state_dict() const {
  return {{"best", state_text::exact(best_)},  // exact; "inf" before any step
          {"num_bad_epochs", std::to_string(num_bad_)},
          {"cooldown_counter", std::to_string(cooldown_left_)},
          {"last_epoch", std::to_string(last_epoch_)}};
}

void ReduceLROnPlateau::load_state_dict(const Metadata& state) {
  auto count = [&](const std::string& k) {
    const int64_t v = state_text::read_int(state, k, "ReduceLROnPlateau");
    AG_CHECK(v >= 0 && v <= kMaxSteps, ValueError, "ReduceLROnPlateau.load_state_dict: '", k,
             "' must be a count in [0, 2^53], got '", state.at(k), "'");
    return v;
  };
  const double best = state_text::read_double(state, "best", "ReduceLROnPlateau");
  AG_CHECK(!std::isnan(best), ValueError, "ReduceLROnPlateau.load_state_dict: 'best' is not a valid number: '",
           state.at("best"), "'");
  const int64_t bad = count("num_bad_epochs"), cool = count("cooldown_counter"), epoch = count("last_epoch");
  best_ = best;
  num_bad_ = bad;
  cooldown_left_ = cool;
  last_epoch_ = epoch;
}

}  // namespace ag::optim
