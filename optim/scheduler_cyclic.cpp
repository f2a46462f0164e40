// The cycles: CosineAnnealingWarmRestarts, CyclicLR and OneCycleLR, as
// torch.optim.lr_scheduler (1.13) computes them (closed forms of the step count).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <numbers>
#include <string>

#include "attograd/optim/scheduler.h"
#include "state_text.h"

namespace ag::optim {

// ---- CosineAnnealingWarmRestarts ----
CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& opt, int64_t t_0, int64_t t_mult, double eta_min)
    : LRScheduler(opt), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
  AG_CHECK(t_0 >= 1, ValueError, "CosineAnnealingWarmRestarts: Expected positive integer T_0, but got ", t_0);
  AG_CHECK(t_mult >= 1, ValueError, "CosineAnnealingWarmRestarts: Expected integer T_mult >= 1, but got ", t_mult);
  AG_CHECK(std::isfinite(eta_min) && eta_min >= 0, ValueError,
           "CosineAnnealingWarmRestarts: eta_min must be finite and >= 0, got ", eta_min);
  apply();
}

// T_cur and T_i as PyTorch's step() advances them one step at a time: past the end of a
// period T_cur wraps and the next period is t_mult times longer.
double CosineAnnealingWarmRestarts::lr_at(int64_t steps, double base_lr) const {
  int64_t t_cur = steps, t_i = t_0_;
  if (t_mult_ == 1) {
    t_cur = steps % t_0_;
  } else {
    while (t_cur >= t_i) t_cur -= t_i, t_i *= t_mult_;
  }
  const double pi = std::numbers::pi;
  return eta_min_ +
         (base_lr - eta_min_) * (1 + std::cos(pi * static_cast<double>(t_cur) / static_cast<double>(t_i))) / 2;
}

// ---- CyclicLR ----
namespace {

// One value for every group, or one each.
std::vector<double> per_group(const std::vector<double>& v, std::size_t groups, const char* what) {
  AG_CHECK(v.size() == 1 || v.size() == groups, ValueError, "CyclicLR: expected ", groups, " values for ", what,
           ", got ", v.size());
  return v.size() == 1 ? std::vector<double>(groups, v[0]) : v;
}

}  // namespace

CyclicLR::CyclicLR(Optimizer& opt, const CyclicLROptions& o) : LRScheduler(opt), options_(o) {
  const std::size_t n = opt.num_groups();
  const std::vector<double> base = per_group(o.base_lr(), n, "base_lr");
  max_lrs_ = per_group(o.max_lr(), n, "max_lr");
  const int64_t up = o.step_size_up(), down = o.step_size_down().value_or(up);
  AG_CHECK(up > 0 && down > 0, ValueError, "CyclicLR: step sizes must be positive, got up ", up, " and down ", down);
  total_ = static_cast<double>(up + down);
  ratio_ = static_cast<double>(up) / total_;
  // PyTorch sets each group's lr (and so its initial_lr) to base_lr.
  for (std::size_t g = 0; g < n; ++g) {
    opt.set_lr(base[g], g);
    opt.set_initial_lr(base[g], g);
    base_lrs_[g] = base[g];
  }
  if (o.cycle_momentum()) {
    base_m_ = per_group(o.base_momentum(), n, "base_momentum");
    max_m_ = per_group(o.max_momentum(), n, "max_momentum");
    for (std::size_t g = 0; g < n; ++g) opt.set_momentum(base_m_[g], g);  // ValueError without one
  }
  apply();
}

std::pair<double, double> CyclicLR::phase(int64_t steps) const {
  const double s = static_cast<double>(steps);
  const double cycle = std::floor(1 + s / total_), x = 1. + s / total_ - cycle;
  const double factor = x <= ratio_ ? x / ratio_ : (x - 1) / (ratio_ - 1);
  double amp = 1.0;  // triangular
  if (options_.mode() == CyclicMode::triangular2) amp = 1 / std::pow(2.0, cycle - 1);
  if (options_.mode() == CyclicMode::exp_range) amp = std::pow(options_.gamma(), s);  // scale_mode 'iterations'
  return {factor, amp};
}

double CyclicLR::group_lr_at(int64_t steps, std::size_t group, double base_lr) const {
  const auto [factor, amp] = phase(steps);
  return base_lr + (max_lrs_[group] - base_lr) * factor * amp;
}
double CyclicLR::lr_at(int64_t steps, double base_lr) const { return group_lr_at(steps, 0, base_lr); }

void CyclicLR::after_update(int64_t steps) {
  if (!options_.cycle_momentum()) return;
  const auto [factor, amp] = phase(steps);
  for (std::size_t g = 0; g < opt_.num_groups(); ++g)
    opt_.set_momentum(max_m_[g] - (max_m_[g] - base_m_[g]) * factor * amp, g);
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

}  // namespace ag::optim
