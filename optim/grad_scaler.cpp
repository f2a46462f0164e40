// GradScaler (attograd/optim/grad_scaler.h): PyTorch 1.13's torch.cuda.amp.GradScaler
// algorithm (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) on the CPU.
#include "attograd/optim/grad_scaler.h"

#include <cmath>

#include "attograd/autograd.h"
#include "attograd/ops.h"
#include "state_text.h"

namespace ag::amp {
namespace {

// PyTorch keeps the scale in a float32 tensor: every new value is rounded to float.
double as_float(double v) { return static_cast<double>(static_cast<float>(v)); }

void check(const GradScalerOptions& o, double scale, const char* who) {
  AG_CHECK(std::isfinite(scale) && scale > 0, ValueError, who, ": the scale must be finite and > 0, got ", scale);
  AG_CHECK(o.growth_factor() > 1.0 && std::isfinite(o.growth_factor()), ValueError, who,
           ": The growth factor must be > 1.0 (and finite), got ", o.growth_factor());
  AG_CHECK(o.backoff_factor() > 0.0 && o.backoff_factor() < 1.0, ValueError, who,
           ": The backoff factor must be < 1.0 (and > 0), got ", o.backoff_factor());
  AG_CHECK(o.growth_interval() > 0, ValueError, who, ": growth_interval must be > 0, got ", o.growth_interval());
}

}  // namespace

GradScaler::GradScaler(const GradScalerOptions& options) : options_(options), scale_(as_float(options.init_scale())) {
  if (options_.enabled()) check(options_, scale_, "GradScaler");
}

// PyTorch multiplies by its scale tensor, f32 of shape (1): an f16 / bf16 loss comes back
// f32 (so 65536 x an f16 loss does not overflow to inf), a 0-d loss as shape (1).
Tensor GradScaler::scale(const Tensor& outputs) const {
  AG_CHECK(outputs.defined(), ValueError, "GradScaler.scale: outputs is an undefined tensor");
  return options_.enabled() ? ag::mul(outputs, full({1}, scale_, DType::f32)) : outputs;
}

void GradScaler::unscale_(optim::Optimizer& opt) {
  if (!options_.enabled()) return;
  PerOptimizer& st = per_optimizer_[opt.id()];
  AG_CHECK(st.stage != Stage::unscaled, AutogradError,
           "GradScaler.unscale_: unscale_() has already been called on this optimizer since the last update()");
  AG_CHECK(st.stage != Stage::stepped, AutogradError, "GradScaler.unscale_: unscale_() is being called after step()");
  NoGradGuard no_grad;
  const double inv_scale = as_float(1.0 / scale_);  // PyTorch: scale.double().reciprocal().float()
  bool found_inf = false, checked = false;
  for (std::size_t g = 0; g < opt.num_groups(); ++g) {
    for (const auto& entry : opt.group_params(g)) {
      Tensor grad = entry.second.grad();
      if (!grad.defined()) continue;
      checked = true;
      found_inf = found_inf || !ag::all(ag::isfinite(grad)).item<bool>();
      grad.mul_(inv_scale);  // every gradient, inf or not, as PyTorch's kernel
    }
  }
  st.found_inf = found_inf;
  st.checked = checked;
  st.stage = Stage::unscaled;
}

bool GradScaler::step(optim::Optimizer& opt) {
  if (!options_.enabled()) {
    opt.step();
    return true;
  }
  PerOptimizer& st = per_optimizer_[opt.id()];
  AG_CHECK(st.stage != Stage::stepped, AutogradError,
           "GradScaler.step: step() has already been called since the last update()");
  if (st.stage == Stage::ready) unscale_(opt);
  // PyTorch asserts the same: a step with no gradient at all is a bug in the loop.
  AG_CHECK(st.checked, AutogradError, "GradScaler.step: No inf checks were recorded for this optimizer (",
           opt.type_name(), " has no parameter with a .grad: backward first)");
  const bool stepped = !st.found_inf;
  if (stepped) opt.step();
  st.stage = Stage::stepped;
  return stepped;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!options_.enabled()) return;
  if (new_scale) {
    const double s = as_float(*new_scale);
    check(options_, s, "GradScaler.update");
    scale_ = s;
  } else {
    bool checked = false;
    for (const auto& entry : per_optimizer_) checked = checked || entry.second.checked;
    AG_CHECK(checked, ValueError,
             "GradScaler.update: No inf checks were recorded prior to update() (call step() or unscale_() first, "
             "after a backward)");
    bool found_inf = false;
    for (const auto& entry : per_optimizer_) found_inf = found_inf || entry.second.found_inf;
    if (found_inf) {
      scale_ = as_float(scale_ * options_.backoff_factor());
      growth_tracker_ = 0;
    } else if (growth_tracker_ + 1 == options_.growth_interval()) {
      const double grown = as_float(scale_ * options_.growth_factor());
      if (std::isfinite(grown)) scale_ = grown;
      growth_tracker_ = 0;
    } else {
      ++growth_tracker_;
    }
  }
  per_optimizer_.clear();
}

Metadata GradScaler::state_dict() const {
  if (!options_.enabled()) return {};
  return {{"scale", optim::state_text::exact(scale_)},
          {"growth_factor", optim::state_text::exact(options_.growth_factor())},
          {"backoff_factor", optim::state_text::exact(options_.backoff_factor())},
          {"growth_interval", std::to_string(options_.growth_interval())},
          {"_growth_tracker", std::to_string(growth_tracker_)}};
}

void GradScaler::load_state_dict(const Metadata& state) {
  if (!options_.enabled()) return;
  AG_CHECK(!state.empty(), ValueError,
           "GradScaler.load_state_dict: The source state dict is empty, possibly because it was saved from a "
           "disabled instance of GradScaler");
  const char* who = "GradScaler";
  GradScalerOptions o = options_;
  o.growth_factor(optim::state_text::read_double(state, "growth_factor", who));
  o.backoff_factor(optim::state_text::read_double(state, "backoff_factor", who));
  o.growth_interval(optim::state_text::read_int(state, "growth_interval", who));
  const double scale = optim::state_text::read_double(state, "scale", who);
  const int64_t tracker = optim::state_text::read_int(state, "_growth_tracker", who);
  check(o, scale, "GradScaler.load_state_dict");
  AG_CHECK(tracker >= 0 && tracker < o.growth_interval(), ValueError,
           "GradScaler.load_state_dict: '_growth_tracker' must be in [0, growth_interval), got ", tracker);
  options_ = o;
  scale_ = as_float(scale);
  growth_tracker_ = tracker;
  per_optimizer_.clear();
}

}  // namespace ag::amp
