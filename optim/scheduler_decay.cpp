// The chainable decays and warm-ups: StepLR, MultiStepLR, ExponentialLR,
// CosineAnnealingLR, LinearLR, ConstantLR and PolynomialLR, as torch.optim.lr_scheduler
// (1.13) computes them (each steps from the group's current lr; closed forms where PyTorch has them).
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

// ---- LinearLR ----
LinearLR::LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(opt), start_(start_factor), end_(end_factor), total_(total_iters) {
  AG_CHECK(start_factor > 0 && start_factor <= 1, ValueError,
           "LinearLR: Starting multiplicative factor expected to be greater than 0 and less or equal to 1, got ",
           start_factor);
  AG_CHECK(end_factor >= 0 && end_factor <= 1, ValueError,
           "LinearLR: Ending multiplicative factor expected to be between 0 and 1, got ", end_factor);
  AG_CHECK(total_iters >= 0, ValueError, "LinearLR: total_iters must be >= 0, got ", total_iters);
  apply();
}

double LinearLR::lr_at(int64_t steps, double base_lr) const {
  if (total_ == 0) return base_lr * end_;
  const double done = static_cast<double>(std::min(total_, steps)) / static_cast<double>(total_);
  return base_lr * (start_ + (end_ - start_) * done);
}

double LinearLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  if (steps == 0) return lr * start_;
  if (steps > total_) return lr;
  const double t = static_cast<double>(total_), s = static_cast<double>(steps);
  return lr * (1.0 + (end_ - start_) / (t * start_ + (s - 1) * (end_ - start_)));
}

// ---- ConstantLR ----
ConstantLR::ConstantLR(Optimizer& opt, double factor, int64_t total_iters)
    : LRScheduler(opt), factor_(factor), total_(total_iters) {
  AG_CHECK(factor >= 0 && factor <= 1, ValueError,
           "ConstantLR: Constant multiplicative factor expected to be between 0 and 1, got ", factor);
  AG_CHECK(total_iters >= 0, ValueError, "ConstantLR: total_iters must be >= 0, got ", total_iters);
  apply();
}

double ConstantLR::lr_at(int64_t steps, double base_lr) const {
  return base_lr * (factor_ + (steps >= total_ ? 1 - factor_ : 0.0));
}

double ConstantLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  if (steps == 0) return lr * factor_;
  return steps == total_ ? lr * (1.0 / factor_) : lr;
}

// ---- PolynomialLR ----
PolynomialLR::PolynomialLR(Optimizer& opt, int64_t total_iters, double power)
    : LRScheduler(opt), total_(total_iters), power_(power) {
  AG_CHECK(total_iters > 0, ValueError, "PolynomialLR: total_iters must be positive, got ", total_iters);
  apply();
}

double PolynomialLR::lr_at(int64_t steps, double base_lr) const {
  const double done = static_cast<double>(std::min(total_, steps)) / static_cast<double>(total_);
  return base_lr * std::pow(1.0 - done, power_);
}

double PolynomialLR::chained_lr(int64_t steps, std::size_t, double lr, double) const {
  if (steps == 0 || steps > total_) return lr;
  const double t = static_cast<double>(total_), s = static_cast<double>(steps);
  return lr * std::pow((1.0 - s / t) / (1.0 - (s - 1) / t), power_);
}

}  // namespace ag::optim
