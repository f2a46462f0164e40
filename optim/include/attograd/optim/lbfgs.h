#pragma once
/// \file
/// L-BFGS as torch.optim.LBFGS (1.13): a closure re-evaluates the model, each step runs up
/// to max_iter quasi-Newton iterations with a fixed step or PyTorch's strong-Wolfe line
/// search, over all parameters flattened into one vector (one group, as PyTorch's).
///   optim::LBFGS opt(model->parameters(), optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
///   auto closure = [&] { opt.zero_grad(); Tensor loss = f(model); loss.backward(); return loss; };
///   for (int i = 0; i < 10; ++i) opt.step(closure);
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attograd/optim/optimizer.h"

namespace ag::optim {

/// Options of LBFGS (PyTorch's defaults; LibTorch's names).
struct LBFGSOptions {
  /// The required options; the others keep their PyTorch defaults.
  LBFGSOptions(double lr = 1) : lr_(lr) {}
  AG_ARG(double, lr);                        ///< the step length (the line search's first trial)
  AG_ARG(int64_t, max_iter) = 20;            ///< iterations per step()
  AG_ARG(std::optional<int64_t>, max_eval);  ///< closure calls per step(); default max_iter * 5 / 4
  AG_ARG(double, tolerance_grad) = 1e-7;     ///< stop when max |gradient| <= this
  AG_ARG(double, tolerance_change) = 1e-9;   ///< stop when the loss or the step changes less
  AG_ARG(int64_t, history_size) = 100;       ///< (s, y) pairs kept
  /// "strong_wolfe", or none: a fixed step of lr.
  AG_ARG(std::optional<std::string>, line_search_fn);
};

/// ValueError unless lr, the tolerances and the counts are valid and line_search_fn is
/// "strong_wolfe" or none.
void check_options(const LBFGSOptions& o, const char* who);

/// torch.optim.LBFGS. Parameters must be f32 or f64 and share one dtype; the iteration's
/// vectors (direction, gradients, history) are of that dtype, scalars (dot products, step
/// lengths, losses) double, as PyTorch's Python floats (f64 results equal PyTorch's to
/// rounding; tests/optim/test_lbfgs.cpp).
class LBFGS : public OptimizerWithOptions<LBFGSOptions> {
 public:
  /// Over named parameters.
  LBFGS(const NamedParams& params, const LBFGSOptions& options = {});
  /// Over unnamed parameters ("0", "1", ...).
  LBFGS(const std::vector<Tensor>& params, const LBFGSOptions& options = {}) : LBFGS(name_params(params), options) {}

  /// Runs up to max_iter iterations; `closure` zeroes the gradients, computes the loss
  /// (one element), calls backward and returns it. Returns the closure's first loss.
  Tensor step(const std::function<Tensor()>& closure);
  /// ValueError: L-BFGS needs a closure (PyTorch's step() without one fails too).
  void step() override;
  const char* type_name() const override { return "LBFGS"; }
  /// PyTorch's: "LBFGS doesn't support per-parameter options (parameter groups)".
  void add_param_group(const ParamGroup<LBFGSOptions>& group);

  /// The base's entries plus "lbfgs.<field>": d, t, H_diag, prev_flat_grad, prev_loss,
  /// old_dirs and old_stps (history, N), ro (history), func_evals, n_iter.
  TensorMap state_dict() const override;
  /// Restores state_dict(); checks every lbfgs.* shape, dtype and value first.
  void load_state_dict(const TensorMap& state) override;

  /// Closure calls over all steps (PyTorch's state["func_evals"]).
  int64_t func_evals() const { return func_evals_; }
  /// Iterations over all steps (PyTorch's state["n_iter"]).
  int64_t n_iter() const { return n_iter_; }

 private:
  Tensor flat_grad() const;                       // (N) of every gradient, zeros where none
  void add_to_params(double t, const Tensor& d);  // p += t d[slice of p]
  std::vector<Tensor> params() const;
  // One closure call at x + t d, then back to x: (loss, flat gradient).
  std::pair<double, Tensor> evaluate_at(const std::function<Tensor()>& closure, const std::vector<Tensor>& x, double t,
                                        const Tensor& d);

  // PyTorch's state, kept across steps.
  Tensor d_, prev_flat_grad_;  // (N)
  double t_ = 0, h_diag_ = 1, prev_loss_ = 0;
  std::deque<Tensor> old_dirs_, old_stps_;  // y and s, oldest first
  std::deque<double> ro_;                   // 1 / (y . s)
  int64_t func_evals_ = 0, n_iter_ = 0;
};

}  // namespace ag::optim
