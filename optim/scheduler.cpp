#include "attograd/optim/scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include "state_text.h"

namespace ag::optim {

LRScheduler::LRScheduler(Optimizer& opt) : opt_(opt) {
  for (std::size_t i = 0; i < opt.num_groups(); ++i) {
    if (!opt.initial_lr(i)) opt.set_initial_lr(opt.lr(i), i);
    base_lrs_.push_back(*opt.initial_lr(i));
  }
}

std::vector<double> LRScheduler::checked(std::vector<double> lrs, int64_t steps,
                                         const std::vector<double>& base) const {
  for (std::size_t i = 0; i < lrs.size(); ++i)
    AG_CHECK(std::isfinite(lrs[i]) && lrs[i] >= 0, ValueError, type_name(), ": after ", steps, " steps group ", i,
             " (base lr ", base[i], ") gets Invalid learning rate: ", lrs[i]);
  return lrs;
}

std::vector<double> LRScheduler::lrs_at(int64_t steps, const std::vector<double>& base) const {
  std::vector<double> out(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) out[i] = group_lr_at(steps, i, base[i]);
  return checked(std::move(out), steps, base);
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  for (std::size_t i = 0; i < lrs.size(); ++i) opt_.set_lr(lrs[i], i);
  last_lrs_ = lrs;
  after_update(steps_);
}

void LRScheduler::apply() {
  std::vector<double> lrs(base_lrs_.size());
  for (std::size_t i = 0; i < lrs.size(); ++i) lrs[i] = chained_lr(steps_, i, opt_.lr(i), base_lrs_[i]);
  set_lrs(checked(std::move(lrs), steps_, base_lrs_));
}

void LRScheduler::step() {
  std::vector<double> lrs(base_lrs_.size());
  for (std::size_t i = 0; i < lrs.size(); ++i) lrs[i] = chained_lr(steps_ + 1, i, opt_.lr(i), base_lrs_[i]);
  lrs = checked(std::move(lrs), steps_ + 1, base_lrs_);  // a bad lr changes nothing
  ++steps_;
  set_lrs(lrs);
}

Metadata LRScheduler::state_dict() const {
  Metadata m{{"steps", std::to_string(steps_)}};
  for (std::size_t i = 0; i < base_lrs_.size(); ++i)
    m["base_lr." + std::to_string(i)] = state_text::exact(base_lrs_[i]);
  for (std::size_t i = 0; i < last_lrs_.size(); ++i)  // a chained schedule's lr, to the bit
    m["last_lr." + std::to_string(i)] = state_text::exact(last_lrs_[i]);
  return m;
}

void LRScheduler::load_state_dict(const Metadata& state) {
  const int64_t steps = state_text::read_int(state, "steps", "scheduler");
  AG_CHECK(steps >= 0 && steps <= kMaxSteps, ValueError,
           "scheduler.load_state_dict: 'steps' must be a step count in [0, 2^53], got ", steps);
  std::vector<double> base(base_lrs_.size());
  for (std::size_t i = 0; i < base.size(); ++i) {
    const std::string k = "base_lr." + std::to_string(i);
    base[i] = state_text::read_double(state, k, "scheduler");
    AG_CHECK(std::isfinite(base[i]) && base[i] >= 0, ValueError, "scheduler.load_state_dict: '", k,
             "' must be a finite lr >= 0, got ", base[i]);
  }
  // The lrs this scheduler last set (a chained schedule's value is not its closed form
  // to the bit, and a manual change or another schedule may have moved it), or the
  // closed form for a state that has none (written before 0.3).
  std::vector<double> lrs(base.size());
  if (!state.count("last_lr.0")) {
    lrs = lrs_at(steps, base);  // a bad state changes nothing
  } else {
    for (std::size_t i = 0; i < lrs.size(); ++i) {
      const std::string k = "last_lr." + std::to_string(i);
      lrs[i] = state_text::read_double(state, k, "scheduler");
      AG_CHECK(std::isfinite(lrs[i]) && lrs[i] >= 0, ValueError, "scheduler.load_state_dict: '", k,
               "' must be a finite lr >= 0, got ", lrs[i]);
    }
  }
  steps_ = steps;
  base_lrs_ = base;
  set_lrs(lrs);
}

// ---- Noam ----
NoamScheduler::NoamScheduler(Optimizer& opt, int64_t d_model, double factor, int64_t warmup)
    : LRScheduler(opt), d_model_(d_model), warmup_(warmup), factor_(factor) {
  AG_CHECK(d_model > 0 && warmup > 0, ValueError, "NoamScheduler: d_model and warmup must be positive, got ", d_model,
           " and ", warmup);
  std::fill(base_lrs_.begin(), base_lrs_.end(), 1.0);
  apply();
}

double NoamScheduler::rate(int64_t s, int64_t d_model, double factor, int64_t warmup) {
  double sd = static_cast<double>(std::max<int64_t>(s, 1));
  return factor * std::pow(static_cast<double>(d_model), -0.5) *
         std::min(std::pow(sd, -0.5), sd * std::pow(static_cast<double>(warmup), -1.5));
}

double NoamScheduler::lr_at(int64_t steps, double base_lr) const {
  return base_lr * rate(steps + 1, d_model_, factor_, warmup_);
}

// ---- StepLR ----
StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  AG_CHECK(step_size > 0, ValueError, "StepLR: step_size must be positive, got ", step_size);
  apply();
}

double StepLR::lr_at(int64_t steps, double base_lr) const {
  return base_lr * std::pow(gamma_, static_cast<double>(steps / step_size_));
}

double StepLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  return steps == 0 || steps % step_size_ != 0 ? lr : lr * gamma_;
}

// ---- CosineAnnealingLR ----
CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min, int64_t warmup)
    : LRScheduler(opt), t_max_(t_max), warmup_(warmup), eta_min_(eta_min) {
  AG_CHECK(t_max > warmup && warmup >= 0, ValueError, "CosineAnnealingLR: need t_max > warmup >= 0, got t_max ", t_max,
           ", warmup ", warmup);
  AG_CHECK(std::isfinite(eta_min) && eta_min >= 0, ValueError,
           "CosineAnnealingLR: eta_min must be finite and >= 0, got ", eta_min);
  apply();
}

double CosineAnnealingLR::lr_at(int64_t steps, double base_lr) const {
  if (steps < warmup_) return base_lr * static_cast<double>(steps + 1) / static_cast<double>(warmup_);
  const double progress = static_cast<double>(steps - warmup_) / static_cast<double>(t_max_ - warmup_);
  return eta_min_ + (base_lr - eta_min_) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

// PyTorch 1.13's get_lr: each step's cosine ratio applied to the current lr's distance
// from eta_min; at steps = t_max + 1 (mod 2 t_max), where that ratio is 0 / 0, the
// increment of the rising half instead.
double CosineAnnealingLR::chained_lr(int64_t steps, std::size_t, double lr, double base_lr) const {
  if (warmup_ > 0) return lr_at(steps, base_lr);
  if (steps == 0) return lr;
  const double pi = std::numbers::pi, t = static_cast<double>(t_max_);
  const int64_t period = 2 * t_max_, phase = ((steps - 1 - t_max_) % period + period) % period;  // Python's %
  if (phase == 0) return lr + (base_lr - eta_min_) * (1 - std::cos(pi / t)) / 2;
  const double s = static_cast<double>(steps);
  return (1 + std::cos(pi * s / t)) / (1 + std::cos(pi * (s - 1) / t)) * (lr - eta_min_) + eta_min_;
}

// ---- LambdaLR ----
LambdaLR::LambdaLR(Optimizer& opt, std::function<double(int64_t)> fn) : LRScheduler(opt), fn_(std::move(fn)) {
  AG_CHECK(fn_ != nullptr, ValueError, "LambdaLR: the function is empty");
  apply();
}

double LambdaLR::lr_at(int64_t steps, double base_lr) const { return base_lr * fn_(steps); }

}  // namespace ag::optim
