#pragma once
/// \file
/// Dynamic loss scaling for low-precision training, as PyTorch's torch.amp.GradScaler
/// (torch.cuda.amp.GradScaler in 1.13; the same algorithm on CPU here):
///
///   amp::GradScaler scaler;
///   scaler.scale(loss).backward();  // gradients of loss * scale: small ones survive f16
///   scaler.step(opt);               // unscales; skips the step if any gradient is inf/NaN
///   scaler.update();                // halves the scale after an overflow, doubles it after
///                                   // growth_interval clean steps
///
/// Between backward and step, `scaler.unscale_(opt)` gives the true gradients (for
/// clip_grad_norm_). The scale is a float (f32) value, as PyTorch's scale tensor; the
/// unscaling multiplies each gradient by float(1 / double(scale)). Its state goes into a
/// checkpoint's extra metadata (state_dict() / load_state_dict(), optim/CHECKPOINTS.md).
#include <cstdint>
#include <map>
#include <optional>

#include "attograd/optim/optimizer.h"

namespace ag::amp {

/// Options of GradScaler (PyTorch's defaults).
struct GradScalerOptions {
  /// The scale before the first update.
  AG_ARG(double, init_scale) = 65536.0;
  /// The scale is multiplied by this after growth_interval steps without inf/NaN.
  AG_ARG(double, growth_factor) = 2.0;
  /// The scale is multiplied by this after a step whose gradients had an inf or NaN.
  AG_ARG(double, backoff_factor) = 0.5;
  /// Clean steps between growths.
  AG_ARG(int64_t, growth_interval) = 2000;
  /// A disabled scaler passes everything through (scale() returns its input, step() just
  /// steps), so one training loop serves every precision.
  AG_ARG(bool, enabled) = true;
};

/// PyTorch's GradScaler: scale(loss), unscale_(opt), step(opt), update().
class GradScaler {
 public:
  /// ValueError for a scale that is not finite and > 0, growth_factor <= 1, backoff_factor
  /// outside (0, 1) or growth_interval <= 0 (PyTorch's checks).
  explicit GradScaler(const GradScalerOptions& options = {});

  /// outputs * scale, as PyTorch's multiplication by its f32 scale tensor of shape (1):
  /// f32 for f16 / bf16 outputs, shape (1) for a 0-d loss (outputs unchanged when
  /// disabled); differentiable: backward then gives scaled gradients.
  Tensor scale(const Tensor& outputs) const;
  /// Divides opt's gradients by the scale in place and notes whether any was inf or NaN.
  /// At most once per optimizer between updates (AutogradError otherwise, PyTorch's
  /// "unscale_() has already been called on this optimizer since the last update()").
  void unscale_(optim::Optimizer& opt);
  /// unscale_ (unless done), then opt.step() unless a gradient was inf or NaN. Returns
  /// whether it stepped. AutogradError when no parameter has a gradient (PyTorch's "No
  /// inf checks were recorded for this optimizer").
  bool step(optim::Optimizer& opt);
  /// After the steps of an iteration: backoff on inf/NaN, growth after growth_interval
  /// clean steps (a growth to a non-finite scale is skipped), as PyTorch's
  /// _amp_update_scale_. new_scale sets the scale instead.
  void update(std::optional<double> new_scale = std::nullopt);

  double get_scale() const { return options_.enabled() ? scale_ : 1.0; }  ///< 1 when disabled
  int64_t growth_tracker() const { return growth_tracker_; }              ///< clean steps since the last change
  bool is_enabled() const { return options_.enabled(); }                  ///< see GradScalerOptions::enabled
  const GradScalerOptions& options() const { return options_; }           ///< as constructed

  /// PyTorch's keys: "scale", "growth_factor", "backoff_factor", "growth_interval",
  /// "_growth_tracker", as exact text; empty when disabled.
  Metadata state_dict() const;
  /// Restores state_dict() (ValueError on missing or bad entries, changing nothing;
  /// ValueError for an empty state, as PyTorch's "saved from a disabled instance").
  void load_state_dict(const Metadata& state);

 private:
  enum class Stage { ready, unscaled, stepped };
  struct PerOptimizer {
    Stage stage = Stage::ready;
    bool found_inf = false;
    bool checked = false;  // a gradient was seen
  };
  GradScalerOptions options_;
  double scale_;  // a float value, kept in a double
  int64_t growth_tracker_ = 0;
  // By Optimizer::id(), never reused: an optimizer made where a destroyed one lived is
  // another optimizer (keyed by address, it inherited "already unscaled").
  std::map<uint64_t, PerOptimizer> per_optimizer_;
};

}  // namespace ag::amp
