#pragma once
/// \file
/// Learning-rate schedules. Call sched.step() after each opt.step(), as in PyTorch.
/// The lr set at construction is the one the first optimizer step uses.
///
/// As torch.optim.lr_scheduler (1.13), a schedule's base lr is its group's
/// `initial_lr` (the lr when the optimizer's first scheduler was made), and the
/// chainable schedules (StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR,
/// LinearLR, ConstantLR, PolynomialLR) compute each step's lr from the group's current
/// lr: two of them on one optimizer compose (StepLR and ExponentialLR multiply), a
/// ReduceLROnPlateau cut or a manual set_lr carries on, as in PyTorch. LambdaLR,
/// OneCycleLR and NoamScheduler set their closed form from the base.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attograd/optim/optimizer.h"

namespace ag::optim {

/// Base of the learning-rate schedules: step() after each optimizer step sets every group's lr.
class LRScheduler {
 public:
  /// Takes each group's initial_lr as its base, first setting it to the group's lr where
  /// no scheduler has (PyTorch's setdefault("initial_lr")).
  explicit LRScheduler(Optimizer& opt);
  virtual ~LRScheduler() = default;
  /// "StepLR", "LambdaLR", ...: the name errors start with.
  virtual const char* type_name() const = 0;
  void step();                                  ///< one more optimizer step taken
  int64_t last_step() const { return steps_; }  ///< optimizer steps taken so far (PyTorch's last_epoch)
  /// The group's current lr.
  double get_lr(std::size_t group = 0) const { return opt_.lr(group); }
  /// The lr of every group as this scheduler last set it (PyTorch's get_last_lr()).
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  /// The optimizer whose learning rates this scheduler sets.
  Optimizer& optimizer() const { return opt_; }
  /// The closed form: the lr for the optimizer step that follows `steps` completed steps
  /// of this schedule alone, from the base (PyTorch's _get_closed_form_lr).
  virtual double lr_at(int64_t steps, double base_lr) const = 0;
  /// The lr step `steps` sets, from the group's current lr (PyTorch's get_lr): the
  /// chainable schedules' recursive form; the closed form for the others.
  virtual double chained_lr(int64_t steps, std::size_t group, double lr, double base_lr) const {
    return (void)lr, group_lr_at(steps, group, base_lr);
  }
  /// lr_at for group `group` (whose base is base_lr): schedules with per-group settings
  /// beyond the base (OneCycleLR's and CyclicLR's max_lr) override this.
  virtual double group_lr_at(int64_t steps, std::size_t group, double base_lr) const {
    return (void)group, lr_at(steps, base_lr);
  }

  /// "steps", "base_lr.<i>" and "last_lr.<i>" (the lrs it set last) as text, for
  /// checkpoint metadata.
  Metadata state_dict() const;
  /// Restores state_dict() and sets each group's lr to its last_lr (the closed form at
  /// the restored step for a state without one); ValueError on missing or bad entries.
  void load_state_dict(const Metadata& state);

 protected:
  /// Called after every lr update (construction, step, load) with the step count: for
  /// schedules that set more than the lr (OneCycleLR's momentum).
  virtual void after_update(int64_t /*steps*/) {}
  /// Sets every group's lr for step 0 (chained_lr); call at the end of a derived
  /// constructor. All lrs are computed and checked first (ValueError naming the
  /// scheduler, the step and the group when one is negative, NaN or inf), so a bad one
  /// changes none.
  void apply();
  /// lr_at for every group at `steps` from `base`, checked as apply() says.
  std::vector<double> lrs_at(int64_t steps, const std::vector<double>& base) const;
  /// Sets the groups' lrs (and last_lrs_) and calls after_update(steps_).
  void set_lrs(const std::vector<double>& lrs);
  /// The optimizer whose learning rates this scheduler sets.
  Optimizer& opt_;
  /// Each group's initial_lr when the scheduler was made.
  std::vector<double> base_lrs_;
  /// What set_lrs set last.
  std::vector<double> last_lrs_;
  /// Step() calls so far.
  int64_t steps_ = 0;

 private:
  std::vector<double> checked(std::vector<double> lrs, int64_t steps, const std::vector<double>& base) const;
  friend class SequentialLR;  // restarts a schedule at a milestone, as PyTorch's step(0)
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

/// lr = base * gamma ^ floor(steps / step_size); chainable: lr * gamma every step_size steps.
class StepLR : public LRScheduler {
 public:
  const char* type_name() const override { return "StepLR"; }
  /// Multiplies lr by gamma every step_size steps.
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< lr * gamma at multiples of step_size

 private:
  int64_t step_size_;
  double gamma_;
};

/// PyTorch's CosineAnnealingLR: lr = eta_min + (base - eta_min) (1 + cos(pi steps / t_max)) / 2,
/// which past t_max rises again (a period of 2 t_max), chainable as PyTorch's recursive
/// form. attograd's `warmup` (not in PyTorch) first rises linearly from base/warmup to
/// base over `warmup` steps, then anneals over t_max - warmup steps; with a warm-up the
/// schedule is its closed form, not chainable.
class CosineAnnealingLR : public LRScheduler {
 public:
  const char* type_name() const override { return "CosineAnnealingLR"; }
  /// Warm-up steps, then cosine from base to eta_min at t_max.
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0.0, int64_t warmup = 0);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< PyTorch's recursive form

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

/// lr = base * gamma ^ (number of milestones <= steps), as PyTorch's MultiStepLR (a
/// milestone listed twice counts twice).
class MultiStepLR : public LRScheduler {
 public:
  const char* type_name() const override { return "MultiStepLR"; }
  /// Multiplies lr by gamma at each milestone; ValueError for a negative milestone.
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< lr * gamma^(times steps is listed)

 private:
  std::vector<int64_t> milestones_;  ///< sorted
  double gamma_;
};

/// lr = base * gamma ^ steps, as PyTorch's ExponentialLR.
class ExponentialLR : public LRScheduler {
 public:
  const char* type_name() const override { return "ExponentialLR"; }
  /// Multiplies lr by gamma every step.
  ExponentialLR(Optimizer& opt, double gamma);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< lr * gamma after step 0

 private:
  double gamma_;
};

/// How OneCycleLR moves between two values.
enum class AnnealStrategy { cos, linear };

/// Options of OneCycleLR (PyTorch's defaults).
struct OneCycleLROptions {
  /// The peak lr and the number of steps of the cycle.
  OneCycleLROptions(double max_lr, int64_t total_steps) : max_lr_(max_lr), total_steps_(total_steps) {}
  /// One peak lr per parameter group (PyTorch's list form of max_lr).
  OneCycleLROptions(std::vector<double> max_lrs, int64_t total_steps)
      : max_lr_(max_lrs.empty() ? 0.0 : max_lrs[0]), total_steps_(total_steps), max_lrs_(std::move(max_lrs)) {}
  AG_ARG(double, max_lr);                                         ///< the peak lr
  AG_ARG(int64_t, total_steps);                                   ///< steps in the cycle
  AG_ARG(double, pct_start) = 0.3;                                ///< fraction of the cycle spent rising
  AG_ARG(AnnealStrategy, anneal_strategy) = AnnealStrategy::cos;  ///< cos or linear
  AG_ARG(bool, cycle_momentum) = true;                            ///< momentum / beta1 moves opposite to lr
  AG_ARG(double, base_momentum) = 0.85;                           ///< momentum at the peak lr
  AG_ARG(double, max_momentum) = 0.95;                            ///< momentum at the lowest lr
  AG_ARG(double, div_factor) = 25.0;                              ///< initial lr = max_lr / div_factor
  AG_ARG(double, final_div_factor) = 1e4;                         ///< min lr = initial lr / final_div_factor
  AG_ARG(bool, three_phase) = false;                              ///< down to initial lr, then to min lr
  AG_ARG(std::vector<double>, max_lrs) = {};                      ///< per group (empty: max_lr for all)
};

/// Smith's 1cycle, as PyTorch's OneCycleLR: lr rises from max_lr / div_factor to max_lr
/// over pct_start of total_steps, then anneals to the min lr (three_phase: back to the
/// initial lr first, symmetric, then to the min lr). The optimizer's own lr is not used.
/// With cycle_momentum, the group's momentum (SGD, RMSprop) or beta1 (Adam, AdamW) moves
/// from max_momentum to base_momentum and back. Stepping past total_steps is a ValueError,
/// as PyTorch's "Tried to step N times"; step total_steps (the last of PyTorch's own
/// loop) extends the last phase as PyTorch does (0 where that lr would be negative).
class OneCycleLR : public LRScheduler {
 public:
  const char* type_name() const override { return "OneCycleLR"; }
  /// ValueError for total_steps <= 0, pct_start outside [0, 1], or an optimizer without
  /// momentum when cycle_momentum is on.
  OneCycleLR(Optimizer& opt, const OneCycleLROptions& options);
  double lr_at(int64_t steps, double base_lr) const override;  ///< group 0's max_lr scaled to base_lr
  double group_lr_at(int64_t steps, std::size_t group, double base_lr) const override;  ///< the group's max_lr
  /// The momentum (or beta1) the schedule sets after `steps` steps.
  double momentum_at(int64_t steps) const;

 protected:
  void after_update(int64_t steps) override;

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  std::vector<Phase> phases(double max_lr) const;
  double anneal(double start, double end, double pct) const;
  /// (lr, momentum) after `steps` steps of a group peaking at max_lr.
  std::pair<double, double> at(int64_t steps, double max_lr) const;
  OneCycleLROptions options_;
  std::vector<double> max_lrs_;  ///< per group
};

/// Which way ReduceLROnPlateau's metric improves.
enum class PlateauMode { min, max };
/// Whether the improvement threshold is relative or absolute.
enum class ThresholdMode { rel, abs };

/// Options of ReduceLROnPlateau (PyTorch's defaults).
struct ReduceLROnPlateauOptions {
  AG_ARG(PlateauMode, mode) = PlateauMode::min;                ///< min: lower is better
  AG_ARG(double, factor) = 0.1;                                ///< new lr = lr * factor, < 1
  AG_ARG(int64_t, patience) = 10;                              ///< bad steps tolerated
  AG_ARG(double, threshold) = 1e-4;                            ///< what counts as better
  AG_ARG(ThresholdMode, threshold_mode) = ThresholdMode::rel;  ///< rel: best * (1 -+ threshold)
  AG_ARG(int64_t, cooldown) = 0;                               ///< steps ignored after a cut
  AG_ARG(std::vector<double>, min_lr) = {0.0};                 ///< one for all groups, or one each
  AG_ARG(double, eps) = 1e-8;                                  ///< smaller cuts are skipped
};

/// PyTorch's ReduceLROnPlateau: step(metric) after each evaluation; after more than
/// `patience` steps without improvement each group's lr becomes max(lr * factor, min_lr)
/// (unless that changes it by eps or less), then `cooldown` steps are ignored. It reads
/// and sets the optimizer's current lrs, so it is not an LRScheduler (as in PyTorch);
/// its state_dict() goes into a checkpoint's extra metadata.
class ReduceLROnPlateau {
 public:
  /// ValueError for factor >= 1, a negative patience or cooldown, or a min_lr list whose
  /// length is neither 1 nor the number of groups.
  explicit ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& options = {});
  /// "ReduceLROnPlateau": the name errors start with.
  const char* type_name() const { return "ReduceLROnPlateau"; }
  /// One evaluation's metric (NaN counts as no improvement, as in PyTorch).
  void step(double metric);
  double best() const { return best_; }                        ///< best metric so far
  int64_t num_bad_epochs() const { return num_bad_; }          ///< steps since it improved
  int64_t cooldown_counter() const { return cooldown_left_; }  ///< cooldown steps left
  int64_t last_epoch() const { return last_epoch_; }           ///< step() calls so far
  /// "best", "num_bad_epochs", "cooldown_counter", "last_epoch" as text.
  Metadata state_dict() const;
  /// ValueError on missing or bad entries; changes nothing then.
  void load_state_dict(const Metadata& state);

 private:
  bool is_better(double a) const;
  Optimizer& opt_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_ = 0, cooldown_left_ = 0, last_epoch_ = 0;
};
/// LibTorch's name.
using ReduceLROnPlateauScheduler = ReduceLROnPlateau;

/// PyTorch's LinearLR: the lr factor moves linearly from start_factor to end_factor over
/// total_iters steps, then stays (chainable).
class LinearLR : public LRScheduler {
 public:
  const char* type_name() const override { return "LinearLR"; }
  /// ValueError unless 0 < start_factor <= 1 and 0 <= end_factor <= 1 (PyTorch's bounds).
  explicit LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< PyTorch's recursive form

 private:
  double start_, end_;
  int64_t total_;
};

/// PyTorch's ConstantLR: lr = base * factor until total_iters steps, then base (chainable).
class ConstantLR : public LRScheduler {
 public:
  const char* type_name() const override { return "ConstantLR"; }
  /// ValueError unless 0 <= factor <= 1.
  explicit ConstantLR(Optimizer& opt, double factor = 1.0 / 3, int64_t total_iters = 5);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< PyTorch's recursive form

 private:
  double factor_;
  int64_t total_;
};

/// PyTorch's PolynomialLR: lr = base * (1 - min(steps, total_iters) / total_iters)^power (chainable).
class PolynomialLR : public LRScheduler {
 public:
  const char* type_name() const override { return "PolynomialLR"; }
  /// ValueError for total_iters <= 0.
  explicit PolynomialLR(Optimizer& opt, int64_t total_iters = 5, double power = 1.0);
  double lr_at(int64_t steps, double base_lr) const override;
  double chained_lr(int64_t steps, std::size_t group, double lr,
                    double base_lr) const override;  ///< PyTorch's recursive form

 private:
  int64_t total_;
  double power_;
};

/// PyTorch's CosineAnnealingWarmRestarts: cosine from the base to eta_min over T_i steps,
/// then a restart at the base with T_i multiplied by t_mult (T_0 = t_0).
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  const char* type_name() const override { return "CosineAnnealingWarmRestarts"; }
  /// ValueError unless t_0 >= 1 and t_mult >= 1 (PyTorch's integer bounds).
  CosineAnnealingWarmRestarts(Optimizer& opt, int64_t t_0, int64_t t_mult = 1, double eta_min = 0.0);
  /// eta_min + (base - eta_min) (1 + cos(pi T_cur / T_i)) / 2 after `steps` steps.
  double lr_at(int64_t steps, double base_lr) const override;

 private:
  int64_t t_0_, t_mult_;
  double eta_min_;
};

/// How CyclicLR scales the cycle's amplitude (PyTorch's mode).
enum class CyclicMode { triangular, triangular2, exp_range };

/// Options of CyclicLR (PyTorch's defaults); base_lr and max_lr one value for every group
/// or one each.
struct CyclicLROptions {
  /// The cycle's bounds (per group, or one for all).
  CyclicLROptions(std::vector<double> base_lr, std::vector<double> max_lr)
      : base_lr_(std::move(base_lr)), max_lr_(std::move(max_lr)) {}
  AG_ARG(std::vector<double>, base_lr);                ///< the lower bound (set at construction)
  AG_ARG(std::vector<double>, max_lr);                 ///< the upper bound
  AG_ARG(int64_t, step_size_up) = 2000;                ///< steps of the rising half
  AG_ARG(std::optional<int64_t>, step_size_down);      ///< steps of the falling half (default: up)
  AG_ARG(CyclicMode, mode) = CyclicMode::triangular;   ///< amplitude policy
  AG_ARG(double, gamma) = 1.0;                         ///< exp_range: amplitude gamma^steps
  AG_ARG(bool, cycle_momentum) = true;                 ///< momentum moves opposite to lr
  AG_ARG(std::vector<double>, base_momentum) = {0.8};  ///< momentum at the lr's peak
  AG_ARG(std::vector<double>, max_momentum) = {0.9};   ///< momentum at the lr's floor
};

/// PyTorch's CyclicLR (Smith's cyclical learning rates): the lr goes from base_lr to
/// max_lr over step_size_up steps and back over step_size_down, its amplitude constant
/// (triangular), halved each cycle (triangular2) or multiplied by gamma^steps (exp_range);
/// with cycle_momentum the momentum (or Adam's beta1) moves the other way. The
/// optimizer's own lr is replaced by base_lr at construction.
class CyclicLR : public LRScheduler {
 public:
  const char* type_name() const override { return "CyclicLR"; }
  /// ValueError for list lengths that are neither 1 nor the number of groups, a step
  /// size <= 0, or cycle_momentum with an optimizer without momentum.
  CyclicLR(Optimizer& opt, const CyclicLROptions& options);
  double lr_at(int64_t steps, double base_lr) const override;                           ///< group 0's max_lr
  double group_lr_at(int64_t steps, std::size_t group, double base_lr) const override;  ///< the group's max_lr

 protected:
  void after_update(int64_t steps) override;

 private:
  /// (scale factor in [0, 1], amplitude scale) after `steps` steps.
  std::pair<double, double> phase(int64_t steps) const;
  CyclicLROptions options_;
  std::vector<double> max_lrs_, base_m_, max_m_;
  double total_, ratio_;
};

/// PyTorch's ChainedScheduler: step() steps every scheduler in order; the chainable ones
/// compose (StepLR with ExponentialLR multiply). The schedulers are not owned and must
/// outlive it.
class ChainedScheduler {
 public:
  /// ValueError when empty, or when the schedulers set different optimizers.
  explicit ChainedScheduler(std::vector<LRScheduler*> schedulers);
  void step();  ///< each scheduler's step(), in order
  /// The last scheduler's get_last_lr().
  const std::vector<double>& get_last_lr() const { return schedulers_.back()->get_last_lr(); }
  /// Each scheduler's state under "<i>.<key>" (PyTorch's _schedulers list).
  Metadata state_dict() const;
  /// Restores state_dict() into the same schedulers, in order; ValueError (nothing
  /// changed) for a missing or bad entry.
  void load_state_dict(const Metadata& state);

 private:
  std::vector<LRScheduler*> schedulers_;
};

/// PyTorch's SequentialLR: schedulers[i] runs from milestones[i - 1] on. At construction
/// each group's lr goes back to its initial_lr and the first schedule restarts; at a
/// milestone the next schedule restarts from its closed form at step 0 (PyTorch's
/// step(0)). The schedulers are not owned and must outlive it.
class SequentialLR {
 public:
  /// ValueError unless there is one more scheduler than milestones and every scheduler
  /// sets `opt`.
  SequentialLR(Optimizer& opt, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones);
  void step();                                  ///< the current schedule's step (or restart)
  int64_t last_step() const { return steps_; }  ///< step() calls so far
  /// The lrs the last schedule stepped set.
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  /// "steps" and each scheduler's state under "<i>.<key>" (PyTorch's last_epoch and
  /// _schedulers).
  Metadata state_dict() const;
  /// Restores state_dict(); the lrs end as the active schedule's restored last_lr.
  /// ValueError (nothing changed) for a missing or bad entry.
  void load_state_dict(const Metadata& state);

 private:
  /// Loads one schedule's state, step -1 (not started) included.
  static void load_part(LRScheduler& s, Metadata m);
  std::vector<LRScheduler*> schedulers_;
  std::vector<int64_t> milestones_;
  std::vector<double> last_lrs_;
  int64_t steps_ = 0;
};

}  // namespace ag::optim
