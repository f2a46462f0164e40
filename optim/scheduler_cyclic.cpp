// CosineAnnealingWarmRestarts and CyclicLR, as torch.optim.lr_scheduler (1.13) computes
// them: both are closed forms of the step count (neither is chainable in PyTorch).
#include <cmath>
#include <numbers>

#include "attograd/optim/scheduler.h"

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

}  // namespace ag::optim
