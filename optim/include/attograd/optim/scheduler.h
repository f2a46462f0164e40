#pragma once
/// \file
/// Learning-rate schedules. Call sched.step() after each opt.step(), as in PyTorch.
/// The schedule is a function of the number of optimizer steps taken so far; the
/// lr set at construction is the one the first optimizer step uses.
#include <functional>
#include <string>
#include <vector>

#include "attograd/optim/optimizer.h"

namespace ag::optim {

/// Base of the learning-rate schedules: step() after each optimizer step sets every group's lr from lr_at.
class LRScheduler {
 public:
  /// Records each group's current lr as its base.
  explicit LRScheduler(Optimizer& opt);
  virtual ~LRScheduler() = default;
  /// "StepLR", "LambdaLR", ...: the name errors start with.
  virtual const char* type_name() const = 0;
  void step();                                  ///< one more optimizer step taken
  int64_t last_step() const { return steps_; }  ///< optimizer steps taken so far
  /// The group's current lr.
  double get_lr(std::size_t group = 0) const { return opt_.lr(group); }
  /// The lr for the optimizer step that follows `steps` completed steps.
  virtual double lr_at(int64_t steps, double base_lr) const = 0;

  /// "steps" and "base_lr.<i>" as text, for checkpoint metadata.
  Metadata state_dict() const;
  void load_state_dict(const Metadata& state);  ///< ValueError on missing or bad entries

 protected:
  /// Sets every group's lr for the current step; call at the end of a derived constructor.
  /// All lrs are computed and checked first (ValueError naming the scheduler, the step and
  /// the group when one is negative, NaN or inf), so a bad one changes none.
  void apply();
  /// lr_at for every group at `steps` from `base`, checked as apply() says.
  std::vector<double> lrs_at(int64_t steps, const std::vector<double>& base) const;
  /// The optimizer whose learning rates this scheduler sets.
  Optimizer& opt_;
  /// Each group's learning rate when the scheduler was made.
  std::vector<double> base_lrs_;
  /// Step() calls so far.
  int64_t steps_ = 0;
};

/// Vaswani et al.: lr(s) = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5), with s
/// counted from 1 (the first optimizer step uses s = 1). The optimizer's own lr is not
/// used (base lr 1, as the Annotated Transformer's LambdaLR).
class NoamScheduler : public LRScheduler {
 public:
  const char* type_name() const override { return "NoamScheduler"; }
  /// lr(s) as above with these constants.
  NoamScheduler(Optimizer& opt, int64_t d_model, double factor = 1.0, int64_t warmup = 4000);
  double lr_at(int64_t steps, double base_lr) const override;
  /// The formula above, for step s.
  static double rate(int64_t s, int64_t d_model, double factor, int64_t warmup);

 private:
  int64_t d_model_, warmup_;
  double factor_;
};

/// lr = base * gamma ^ floor(steps / step_size)
class StepLR : public LRScheduler {
 public:
  const char* type_name() const override { return "StepLR"; }
  /// Multiplies lr by gamma every step_size steps.
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t steps, double base_lr) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// Linear warm-up from base/warmup to base over `warmup` steps, then cosine annealing
/// to eta_min at t_max (held there after).
class CosineAnnealingLR : public LRScheduler {
 public:
  const char* type_name() const override { return "CosineAnnealingLR"; }
  /// Warm-up steps, then cosine from base to eta_min at t_max.
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0.0, int64_t warmup = 0);
  double lr_at(int64_t steps, double base_lr) const override;

 private:
  int64_t t_max_, warmup_;
  double eta_min_;
};

/// lr = base * fn(steps)
class LambdaLR : public LRScheduler {
 public:
  const char* type_name() const override { return "LambdaLR"; }
  /// lr = base * fn(steps).
  LambdaLR(Optimizer& opt, std::function<double(int64_t)> fn);
  double lr_at(int64_t steps, double base_lr) const override;

 private:
  std::function<double(int64_t)> fn_;
};

}  // namespace ag::optim
