#pragma once
// Optimizers with PyTorch's update rules (torch.optim, 1.13, single-tensor path).
//   optim::Adam opt(model->named_parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}));
//   loss.backward(); opt.step(); opt.zero_grad();
// Parameters are identified by name, so optimizer state saves and loads by name.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/safetensors.h"

namespace ag::optim {

using NamedParams = std::vector<std::pair<std::string, Tensor>>;

// The largest step count a loaded optimizer or scheduler state may hold. Every count up to
// 2^53 is exact as the double that bias corrections (1 - beta^t) and schedules are computed
// from, and count + 1 cannot overflow int64 (a stored INT64_MAX did, undefined behaviour).
// At a million steps a second, 2^53 steps take 285 years.
constexpr int64_t kMaxSteps = int64_t{1} << 53;
NamedParams name_params(const std::vector<Tensor>& params);  // names "0", "1", ...

// ---- options ----
struct SGDOptions {
  SGDOptions(double lr) : lr_(lr) {}
  AG_ARG(double, lr);
  AG_ARG(double, momentum) = 0.0;
  AG_ARG(double, dampening) = 0.0;
  AG_ARG(bool, nesterov) = false;
  AG_ARG(double, weight_decay) = 0.0;
};

using Betas = std::pair<double, double>;

struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AG_ARG(double, lr);
  AG_ARG(Betas, betas) = {0.9, 0.999};
  AG_ARG(double, eps) = 1e-8;
  AG_ARG(double, weight_decay) = 0.0;  // added to the gradient
  AG_ARG(bool, amsgrad) = false;
};

// AdamW's own options (LibTorch's name), so that its weight decay defaults to 1e-2 however
// the optimizer is built, as in PyTorch: AdamW(params), AdamW(params, 1e-3) and
// AdamW(params, AdamWOptions(1e-3)) all decay. (AdamW does not take AdamOptions, whose
// default 0 could not be told apart from an explicit 0.)
struct AdamWOptions {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  AG_ARG(double, lr);
  AG_ARG(Betas, betas) = {0.9, 0.999};
  AG_ARG(double, eps) = 1e-8;
  AG_ARG(double, weight_decay) = 1e-2;  // decoupled: p *= 1 - lr * weight_decay
  AG_ARG(bool, amsgrad) = false;
};

// A parameter group: its own parameters and options.
template <class Options>
struct ParamGroup {
  NamedParams params;
  Options options;
};

// Per-parameter state, by field name ("exp_avg", "step", ...). A map, so references
// returned by get_or_zeros stay valid when more fields are added.
struct ParamState {
  std::map<std::string, Tensor> fields;
  Tensor* find(const std::string& name);
  Tensor& get_or_zeros(const std::string& name, const Tensor& like);
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // drops every parameter's .grad

  std::size_t num_groups() const { return groups_.size(); }
  virtual double lr(std::size_t group = 0) const = 0;
  virtual void set_lr(double lr, std::size_t group) = 0;
  void set_lr(double lr);  // every group
  const NamedParams& group_params(std::size_t group) const { return groups_.at(group); }

  // "<param name>.<field>" -> tensor, plus "group.<i>.lr". Loading checks every name,
  // shape and dtype before changing anything.
  TensorMap state_dict() const;
  void load_state_dict(const TensorMap& state);

 protected:
  void add_group(NamedParams params);
  ParamState& state_of(const std::string& name) { return state_[name]; }
  std::vector<NamedParams> groups_;

 private:
  std::map<std::string, ParamState> state_;
};

template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  double lr(std::size_t group = 0) const override { return options_.at(group).lr(); }
  void set_lr(double lr, std::size_t group) override { options_.at(group).lr(lr); }
  using Optimizer::set_lr;
  const Options& options(std::size_t group = 0) const { return options_.at(group); }
  void add_param_group(const ParamGroup<Options>& g) {
    add_group(g.params);
    options_.push_back(g.options);
  }

 protected:
  std::vector<Options> options_;
};

class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  SGD(const NamedParams& params, const SGDOptions& options);
  SGD(const std::vector<Tensor>& params, const SGDOptions& options) : SGD(name_params(params), options) {}
  SGD(const std::vector<ParamGroup<SGDOptions>>& groups);
  void step() override;
};

class Adam : public OptimizerWithOptions<AdamOptions> {
 public:
  Adam(const NamedParams& params, const AdamOptions& options = {});
  Adam(const std::vector<Tensor>& params, const AdamOptions& options = {})
      : Adam(name_params(params), options) {}
  Adam(const std::vector<ParamGroup<AdamOptions>>& groups);
  void step() override;
};

// Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step.
class AdamW : public OptimizerWithOptions<AdamWOptions> {
 public:
  AdamW(const NamedParams& params, const AdamWOptions& options = {});
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& options = {})
      : AdamW(name_params(params), options) {}
  AdamW(const std::vector<ParamGroup<AdamWOptions>>& groups);
  void step() override;
};

}  // namespace ag::optim
