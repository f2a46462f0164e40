#pragma once
/// \file
/// Optimizers with PyTorch's update rules (torch.optim, 1.13, single-tensor path).
///   optim::Adam opt(model->named_parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}));
///   loss.backward(); opt.step(); opt.zero_grad();
/// Parameters are identified by name, so optimizer state saves and loads by name. Each
/// tensor may be listed once: the same tensor (or one overlapping its memory) under two
/// names or in two groups is a ValueError, as PyTorch's "some parameters appear in more
/// than one parameter group" (it would be stepped twice).
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/safetensors.h"
#include "attograd/tape.h"

namespace ag::optim {

/// Parameters with their names: state-dict keys of the optimizer state.
using NamedParams = std::vector<std::pair<std::string, Tensor>>;
/// The largest step count a loaded optimizer or scheduler state may hold. Every count up
/// to 2^53 is exact as the double that bias corrections (1 - beta^t) and schedules are
/// computed from, and count + 1 cannot overflow int64 (a stored INT64_MAX did, undefined
/// behaviour). At a million steps a second, 2^53 steps take 285 years.
constexpr int64_t kMaxSteps = int64_t{1} << 53;
NamedParams name_params(const std::vector<Tensor>& params);  ///< names "0", "1", ...

// ---- options ----
/// Options of SGD; lr is required.
struct SGDOptions {
  /// The required options; the others keep their PyTorch defaults.
  SGDOptions(double lr) : lr_(lr) {}
  /// The learning rate.
  AG_ARG(double, lr);
  /// Momentum factor; 0 = plain SGD.
  AG_ARG(double, momentum) = 0.0;
  /// Momentum dampening: buf = momentum * buf + (1 - dampening) * g.
  AG_ARG(double, dampening) = 0.0;
  /// Nesterov momentum (needs momentum > 0 and dampening 0).
  AG_ARG(bool, nesterov) = false;
  /// L2 penalty added to the gradient (decoupled in AdamW).
  AG_ARG(double, weight_decay) = 0.0;
};

/// (beta1, beta2).
using Betas = std::pair<double, double>;

/// Options of Adam (PyTorch's defaults).
struct AdamOptions {
  /// The required options; the others keep their PyTorch defaults.
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  /// The learning rate.
  AG_ARG(double, lr);
  /// (beta1, beta2): decay of the first and second moment averages.
  AG_ARG(Betas, betas) = {0.9, 0.999};
  /// Added to sqrt(v_hat) so that the step stays finite.
  AG_ARG(double, eps) = 1e-8;
  AG_ARG(double, weight_decay) = 0.0;  ///< added to the gradient
  /// Keeps the running maximum of the second moment (AMSGrad).
  AG_ARG(bool, amsgrad) = false;
};

/// AdamW's own options (LibTorch's name), so that its weight decay defaults to 1e-2 however
/// the optimizer is built, as in PyTorch: AdamW(params), AdamW(params, 1e-3) and
/// AdamW(params, AdamWOptions(1e-3)) all decay. (AdamW does not take AdamOptions, whose
/// default 0 could not be told apart from an explicit 0.)
struct AdamWOptions {
  /// The required options; the others keep their PyTorch defaults.
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  /// The learning rate.
  AG_ARG(double, lr);
  /// (beta1, beta2): decay of the first and second moment averages.
  AG_ARG(Betas, betas) = {0.9, 0.999};
  /// Added to sqrt(v_hat) so that the step stays finite.
  AG_ARG(double, eps) = 1e-8;
  AG_ARG(double, weight_decay) = 1e-2;  ///< decoupled: p *= 1 - lr * weight_decay
  /// Keeps the running maximum of the second moment (AMSGrad).
  AG_ARG(bool, amsgrad) = false;
};

/// Options of RMSprop (PyTorch's defaults).
struct RMSpropOptions {
  /// The required options; the others keep their PyTorch defaults.
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  /// The learning rate.
  AG_ARG(double, lr);
  /// Decay of the squared-gradient average: v = alpha v + (1 - alpha) g^2.
  AG_ARG(double, alpha) = 0.99;
  /// Added to the root of the average.
  AG_ARG(double, eps) = 1e-8;
  AG_ARG(double, weight_decay) = 0.0;  ///< added to the gradient
  /// Momentum of the scaled step: buf = momentum buf + g / (sqrt(v) + eps).
  AG_ARG(double, momentum) = 0.0;
  /// Divide by the centered second moment v - mean(g)^2 (keeps "grad_avg").
  AG_ARG(bool, centered) = false;
};

/// Options of Adagrad (PyTorch's defaults).
struct AdagradOptions {
  /// The required options; the others keep their PyTorch defaults.
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  /// The learning rate.
  AG_ARG(double, lr);
  /// lr / (1 + (t - 1) lr_decay) at step t.
  AG_ARG(double, lr_decay) = 0.0;
  AG_ARG(double, weight_decay) = 0.0;  ///< added to the gradient
  /// Where the sum of squared gradients starts.
  AG_ARG(double, initial_accumulator_value) = 0.0;
  /// Added to the root of the sum.
  AG_ARG(double, eps) = 1e-10;
};

/// Options of Adamax (PyTorch's defaults).
struct AdamaxOptions {
  /// The required options; the others keep their PyTorch defaults.
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}
  AG_ARG(double, lr);                   ///< the learning rate
  AG_ARG(Betas, betas) = {0.9, 0.999};  ///< decay of the first moment and of the infinity norm
  AG_ARG(double, eps) = 1e-8;           ///< added to |g| inside the max
  AG_ARG(double, weight_decay) = 0.0;   ///< added to the gradient
};

/// Options of NAdam (PyTorch's defaults).
struct NAdamOptions {
  /// The required options; the others keep their PyTorch defaults.
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}
  AG_ARG(double, lr);                     ///< the learning rate
  AG_ARG(Betas, betas) = {0.9, 0.999};    ///< decay of the first and second moments
  AG_ARG(double, eps) = 1e-8;             ///< added to sqrt(v_hat)
  AG_ARG(double, weight_decay) = 0.0;     ///< added to the gradient
  AG_ARG(double, momentum_decay) = 4e-3;  ///< psi of mu_t = beta1 (1 - 0.5 * 0.96^(t psi))
};

/// Options of RAdam (PyTorch's defaults).
struct RAdamOptions {
  /// The required options; the others keep their PyTorch defaults.
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}
  AG_ARG(double, lr);                   ///< the learning rate
  AG_ARG(Betas, betas) = {0.9, 0.999};  ///< decay of the first and second moments
  AG_ARG(double, eps) = 1e-8;           ///< added to sqrt(v)
  AG_ARG(double, weight_decay) = 0.0;   ///< added to the gradient
};

/// A parameter group: its own parameters and options.
template <class Options>
struct ParamGroup {
  /// The parameters, by name.
  NamedParams params;
  /// The group's options (lr and the rest).
  Options options;
};

/// Per-parameter state, by field name ("exp_avg", "step", ...). A map, so references
/// returned by get_or_zeros stay valid when more fields are added.
struct ParamState {
  /// Per-parameter state tensors by name (exp_avg, momentum_buffer, ...).
  std::map<std::string, Tensor> fields;
  /// The field, or null if absent.
  Tensor* find(const std::string& name);
  /// The field, created as zeros like `like` on first use.
  Tensor& get_or_zeros(const std::string& name, const Tensor& like);
};

/// PyTorch's option checks, as ValueError "<optimizer>: Invalid learning rate: -1" and the
/// like: lr, eps, weight_decay and momentum finite and >= 0 (NaN and inf refused), betas in
/// [0, 1), Nesterov with momentum > 0 and dampening 0. add_param_group calls them too.
void check_options(const SGDOptions& o, const char* who);
void check_options(const AdamOptions& o, const char* who);     ///< see above
void check_options(const AdamWOptions& o, const char* who);    ///< see above
void check_options(const RMSpropOptions& o, const char* who);  ///< see above; alpha too
void check_options(const AdagradOptions& o, const char* who);  ///< see above; lr_decay, initial value
void check_options(const AdamaxOptions& o, const char* who);   ///< see above
void check_options(const NAdamOptions& o, const char* who);    ///< see above; momentum_decay too
void check_options(const RAdamOptions& o, const char* who);    ///< see above
/// ValueError "<who>: Invalid learning rate: <lr>" unless lr is finite and >= 0.
void check_lr(double lr, const char* who);

/// Base of the optimizers: parameter groups by name, per-parameter state, state dicts for checkpoints.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// "SGD", "Adam", "AdamW": the name errors start with.
  virtual const char* type_name() const = 0;
  /// Updates every parameter that has a .grad.
  virtual void step() = 0;
  /// Drops every parameter's .grad (PyTorch 2.x's default set_to_none = true), or with
  /// set_to_none = false sets each existing .grad to zeros in place (detached first).
  void zero_grad(bool set_to_none = true);

  /// Number of parameter groups.
  std::size_t num_groups() const { return groups_.size(); }
  /// A number no other optimizer of this process has had (per-optimizer state elsewhere,
  /// GradScaler's, is keyed by it: an address may be reused).
  uint64_t id() const { return id_; }
  /// The learning rate of a group.
  virtual double lr(std::size_t group = 0) const = 0;
  /// Sets one group's learning rate: ValueError unless finite and >= 0, IndexError for a
  /// group that does not exist.
  virtual void set_lr(double lr, std::size_t group) = 0;
  void set_lr(double lr);  ///< every group
  /// The group's momentum as OneCycleLR cycles it: SGD's and RMSprop's momentum, Adam's
  /// and AdamW's beta1 (PyTorch's use_beta1); ValueError for an optimizer without one
  /// (Adagrad), as PyTorch's "optimizer must support momentum or beta1".
  virtual double momentum(std::size_t group) const;
  /// Sets what momentum() reads (checked as the constructor checks it).
  virtual void set_momentum(double momentum, std::size_t group);
  /// The group's lr when its first scheduler was made (PyTorch's group["initial_lr"]):
  /// the base of every schedule on this optimizer; none before a scheduler.
  std::optional<double> initial_lr(std::size_t group) const { return initial_lrs_[check_group(group, "initial_lr")]; }
  /// Sets initial_lr (schedulers set it once, as PyTorch's setdefault).
  void set_initial_lr(double lr, std::size_t group) { initial_lrs_[check_group(group, "set_initial_lr")] = lr; }
  /// A group's parameters by name (IndexError for a group that does not exist).
  const NamedParams& group_params(std::size_t group) const { return groups_[check_group(group, "group_params")]; }

  /// "<param name>.<field>" -> tensor, plus "group.<i>.lr". Loading checks every name,
  /// shape and dtype before changing anything.
  virtual TensorMap state_dict() const;
  /// Restores state_dict(); changes nothing on a mismatch.
  virtual void load_state_dict(const TensorMap& state);

 protected:
  /// Adds a group of named parameters (for derived constructors). ValueError for a name
  /// or a tensor (same tensor, or one sharing its memory) listed twice, in this group or
  /// in an earlier one; nothing is added then.
  void add_group(NamedParams params);
  /// group, or IndexError "<type>.<what>: parameter group <group> is out of range for <n> groups".
  std::size_t check_group(std::size_t group, const char* what) const;
  /// The state of the named parameter (created empty).
  ParamState& state_of(const std::string& name) { return state_[name]; }
  /// The parameter groups, in add order.
  std::vector<NamedParams> groups_;

 private:
  std::map<std::string, ParamState> state_;
  std::vector<std::optional<double>> initial_lrs_;  ///< one per group
  uint64_t id_ = next_id();
  static uint64_t next_id();
};

/// An optimizer whose groups each carry an Options struct (lr and the rest).
template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  /// The group's options().lr().
  double lr(std::size_t group = 0) const override { return options_[check_group(group, "lr")].lr(); }
  /// Sets the group's options().lr (checked as the constructor checks it).
  void set_lr(double lr, std::size_t group) override {
    const std::size_t g = check_group(group, "set_lr");
    check_lr(lr, detail::cat(type_name(), ".set_lr").c_str());
    options_[g].lr(lr);
  }
  /// Sets the group's options().lr.
  using Optimizer::set_lr;
  /// The group's beta1 (Adam, AdamW) or momentum (SGD, RMSprop); ValueError otherwise.
  double momentum(std::size_t group) const override {
    const Options& o = options_[check_group(group, "momentum")];
    if constexpr (requires { o.betas(); })
      return o.betas().first;
    else if constexpr (requires { o.momentum(); })
      return o.momentum();
    else
      return Optimizer::momentum(group);
  }
  /// Sets the group's beta1 or momentum, checked as the constructor's options.
  void set_momentum(double momentum, std::size_t group) override {
    Options o = options_[check_group(group, "set_momentum")];
    if constexpr (requires { o.betas(); })
      o.betas({momentum, o.betas().second});
    else if constexpr (requires { o.momentum(); })
      o.momentum(momentum);
    else
      Optimizer::set_momentum(momentum, group);
    check_options(o, type_name());
    options_[group] = o;
  }
  /// A group's options.
  const Options& options(std::size_t group = 0) const { return options_[check_group(group, "options")]; }
  /// Every group with its parameters and options, as PyTorch's optimizer.param_groups
  /// (a copy: change an lr through set_lr, which checks it).
  std::vector<ParamGroup<Options>> param_groups() const {
    std::vector<ParamGroup<Options>> out;
    for (std::size_t i = 0; i < groups_.size(); ++i) out.push_back({groups_[i], options_[i]});
    return out;
  }
  /// Adds parameters with their own options (PyTorch's add_param_group): the options are
  /// checked as the constructor's, and every tensor must be new to this optimizer.
  void add_param_group(const ParamGroup<Options>& g) {
    check_options(g.options, type_name());
    add_group(g.params);
    options_.push_back(g.options);
  }

 protected:
  /// The loop every step() shares: under NoGradGuard, for each parameter that has a
  /// .grad, update(group options, p, its gradient (contiguous), p's state), then bump p's
  /// storage version (tensors saved for backward notice the write). bf16 / f16
  /// parameters are updated through an f32 master copy, the state field "master".
  template <class Update>
  void for_each_grad(Update&& update) {
    NoGradGuard no_grad;
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      for (auto& entry : groups_[gi]) {
        Tensor& p = entry.second;
        Tensor g = p.grad();
        if (!g.defined()) continue;
        ParamState& st = state_of(entry.first);
        if (is_reduced_float(p.dtype())) {
          // A bf16 / f16 parameter is updated through an f32 master copy (state field
          // "master", made from p at its first step) with f32 state; p gets the master
          // rounded once. Updates below the 16-bit spacing add up in the master instead
          // of rounding away (lr * g under 2^-8 of a bf16 weight never moved it).
          Tensor* master = st.find("master");
          if (!master) master = &st.fields.emplace("master", p.to(DType::f32)).first->second;
          update(options_[gi], *master, g.to(DType::f32).contiguous(), st);
          p.copy_(*master);
        } else {
          update(options_[gi], p, g.contiguous(), st);
        }
        p.storage()->bump_version();
      }
    }
  }
  /// Each group's options, parallel to groups_.
  std::vector<Options> options_;
};

/// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (PyTorch's update).
class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  SGD(const NamedParams& params, const SGDOptions& options);
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  SGD(const std::vector<Tensor>& params, const SGDOptions& options) : SGD(name_params(params), options) {}
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  SGD(const std::vector<ParamGroup<SGDOptions>>& groups);
  /// One SGD update of every parameter with a .grad.
  void step() override;
  const char* type_name() const override { return "SGD"; }
};

/// Adam (Kingma & Ba) with bias correction, optional AMSGrad and coupled L2 weight decay.
class Adam : public OptimizerWithOptions<AdamOptions> {
 public:
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adam(const NamedParams& params, const AdamOptions& options = {});
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adam(const std::vector<Tensor>& params, const AdamOptions& options = {}) : Adam(name_params(params), options) {}
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adam(const std::vector<ParamGroup<AdamOptions>>& groups);
  /// One Adam update of every parameter with a .grad.
  void step() override;
  const char* type_name() const override { return "Adam"; }
};

/// Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step.
class AdamW : public OptimizerWithOptions<AdamWOptions> {
 public:
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  AdamW(const NamedParams& params, const AdamWOptions& options = {});
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& options = {}) : AdamW(name_params(params), options) {}
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  AdamW(const std::vector<ParamGroup<AdamWOptions>>& groups);
  /// One AdamW update of every parameter with a .grad.
  void step() override;
  const char* type_name() const override { return "AdamW"; }
};

/// RMSprop (Hinton) as torch.optim.RMSprop: v = alpha v + (1 - alpha) g^2, optional
/// centering and momentum. State: "step", "square_avg", "momentum_buffer", "grad_avg".
class RMSprop : public OptimizerWithOptions<RMSpropOptions> {
 public:
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  RMSprop(const NamedParams& params, const RMSpropOptions& options = {});
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  RMSprop(const std::vector<Tensor>& params, const RMSpropOptions& options = {})
      : RMSprop(name_params(params), options) {}
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  RMSprop(const std::vector<ParamGroup<RMSpropOptions>>& groups);
  /// One RMSprop update of every parameter with a .grad.
  void step() override;
  const char* type_name() const override { return "RMSprop"; }
};

/// Adagrad as torch.optim.Adagrad: sum += g^2, p -= lr_t g / (sqrt(sum) + eps). State:
/// "step", "sum" (initial_accumulator_value before the first step).
class Adagrad : public OptimizerWithOptions<AdagradOptions> {
 public:
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adagrad(const NamedParams& params, const AdagradOptions& options = {});
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adagrad(const std::vector<Tensor>& params, const AdagradOptions& options = {})
      : Adagrad(name_params(params), options) {}
  /// Over named parameters, unnamed ones ("0", "1", ...) or groups with their own options.
  Adagrad(const std::vector<ParamGroup<AdagradOptions>>& groups);
  /// One Adagrad update of every parameter with a .grad.
  void step() override;
  const char* type_name() const override { return "Adagrad"; }
};

/// Adamax as torch.optim.Adamax: m = beta1 m + (1 - beta1) g, u = max(beta2 u, |g| + eps),
/// p -= lr / (1 - beta1^t) m / u. State: "step", "exp_avg", "exp_inf".
class Adamax : public OptimizerWithOptions<AdamaxOptions> {
 public:
  /// Over named parameters with one set of options.
  Adamax(const NamedParams& params, const AdamaxOptions& options = {});
  /// Over unnamed parameters ("0", "1", ...).
  Adamax(const std::vector<Tensor>& params, const AdamaxOptions& options = {}) : Adamax(name_params(params), options) {}
  /// Over groups with their own options.
  Adamax(const std::vector<ParamGroup<AdamaxOptions>>& groups);
  void step() override;  ///< one Adamax update of every parameter with a .grad
  const char* type_name() const override { return "Adamax"; }
};

/// NAdam as torch.optim.NAdam (Dozat's Nesterov Adam with PyTorch's momentum schedule
/// mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay))). State: "step", "mu_product",
/// "exp_avg", "exp_avg_sq".
class NAdam : public OptimizerWithOptions<NAdamOptions> {
 public:
  /// Over named parameters with one set of options.
  NAdam(const NamedParams& params, const NAdamOptions& options = {});
  /// Over unnamed parameters ("0", "1", ...).
  NAdam(const std::vector<Tensor>& params, const NAdamOptions& options = {}) : NAdam(name_params(params), options) {}
  /// Over groups with their own options.
  NAdam(const std::vector<ParamGroup<NAdamOptions>>& groups);
  void step() override;  ///< one NAdam update of every parameter with a .grad
  const char* type_name() const override { return "NAdam"; }
};

/// RAdam as torch.optim.RAdam (Liu et al.): Adam with the variance rectification term
/// once rho_t > 5, plain momentum SGD with bias correction before. State: "step",
/// "exp_avg", "exp_avg_sq".
class RAdam : public OptimizerWithOptions<RAdamOptions> {
 public:
  /// Over named parameters with one set of options.
  RAdam(const NamedParams& params, const RAdamOptions& options = {});
  /// Over unnamed parameters ("0", "1", ...).
  RAdam(const std::vector<Tensor>& params, const RAdamOptions& options = {}) : RAdam(name_params(params), options) {}
  /// Over groups with their own options.
  RAdam(const std::vector<ParamGroup<RAdamOptions>>& groups);
  void step() override;  ///< one RAdam update of every parameter with a .grad
  const char* type_name() const override { return "RAdam"; }
};

}  // namespace ag::optim
