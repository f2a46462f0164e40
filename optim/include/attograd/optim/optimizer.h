#pragma once
/// \file
/// Optimizers with PyTorch's update rules (torch.optim, 1.13, single-tensor path).
///   optim::Adam opt(model->named_parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}));
///   loss.backward(); opt.step(); opt.zero_grad();
/// Parameters are identified by name, so optimizer state saves and loads by name.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/safetensors.h"

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

/// Base of the optimizers: parameter groups by name, per-parameter state, state dicts for checkpoints.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// Updates every parameter that has a .grad.
  virtual void step() = 0;
  void zero_grad();  ///< drops every parameter's .grad

  /// Number of parameter groups.
  std::size_t num_groups() const { return groups_.size(); }
  /// The learning rate of a group.
  virtual double lr(std::size_t group = 0) const = 0;
  /// Sets one group's learning rate.
  virtual void set_lr(double lr, std::size_t group) = 0;
  void set_lr(double lr);  ///< every group
  /// A group's parameters by name.
  const NamedParams& group_params(std::size_t group) const { return groups_.at(group); }

  /// "<param name>.<field>" -> tensor, plus "group.<i>.lr". Loading checks every name,
  /// shape and dtype before changing anything.
  TensorMap state_dict() const;
  /// Restores state_dict(); changes nothing on a mismatch.
  void load_state_dict(const TensorMap& state);

 protected:
  /// Adds a group of named parameters (for derived constructors).
  void add_group(NamedParams params);
  /// The state of the named parameter (created empty).
  ParamState& state_of(const std::string& name) { return state_[name]; }
  /// The parameter groups, in add order.
  std::vector<NamedParams> groups_;

 private:
  std::map<std::string, ParamState> state_;
};

/// An optimizer whose groups each carry an Options struct (lr and the rest).
template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  /// The group's options().lr().
  double lr(std::size_t group = 0) const override { return options_.at(group).lr(); }
  /// Sets the group's options().lr.
  void set_lr(double lr, std::size_t group) override { options_.at(group).lr(lr); }
  /// Sets the group's options().lr.
  using Optimizer::set_lr;
  /// A group's options.
  const Options& options(std::size_t group = 0) const { return options_.at(group); }
  /// Adds parameters with their own options (PyTorch's add_param_group).
  void add_param_group(const ParamGroup<Options>& g) {
    add_group(g.params);
    options_.push_back(g.options);
  }

 protected:
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
};

}  // namespace ag::optim
