// LRScheduler, the base of the chainable schedules (steps, state_dict), and NoamScheduler
// and LambdaLR; the families: scheduler_decay.cpp, scheduler_cyclic.cpp,
// scheduler_plateau.cpp, scheduler_compose.cpp.
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

// ---- LambdaLR ----
LambdaLR::LambdaLR(Optimizer& opt, std::function<double(int64_t)> fn) : LRScheduler(opt), fn_(std::move(fn)) {
  AG_CHECK(fn_ != nullptr, ValueError, "LambdaLR: the function is empty");
  apply();
}

double LambdaLR::lr_at(int64_t steps, double base_lr) const { return base_lr * fn_(steps); }

}  // namespace ag::optim
