#pragma once
/// \file
/// nn::Upsample, torch.nn.Upsample: a module around ag::interpolate (attograd/ops/upsample.h)
/// with no parameters. `nn::Upsample(nn::UpsampleOptions().scale_factor({2}).mode(InterpolateMode::bilinear))`
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/ops.h"

namespace ag::nn {

/// Options of nn::Upsample (LibTorch's UpsampleOptions; the modes are interpolate's):
/// exactly one of size and scale_factor, each one value per spatial dim or one for all.
struct UpsampleOptions {
  /// Sets the output's spatial size.
  UpsampleOptions& size(std::vector<int64_t> v) {
    size_ = std::move(v);
    return *this;
  }
  /// Sets the multiplier of each spatial size.
  UpsampleOptions& scale_factor(std::vector<double> v) {
    scale_factor_ = std::move(v);
    return *this;
  }
  /// Sets the resampling rule (nearest by default, as PyTorch's).
  UpsampleOptions& mode(InterpolateMode m) {
    mode_ = m;
    return *this;
  }
  /// linear and bilinear only (unset means false).
  UpsampleOptions& align_corners(std::optional<bool> v) {
    align_corners_ = v;
    return *this;
  }
  /// true: with a scale factor, the coordinates use n / out (interpolate's option).
  UpsampleOptions& recompute_scale_factor(std::optional<bool> v) {
    recompute_scale_factor_ = v;
    return *this;
  }
  const std::optional<std::vector<int64_t>>& size() const { return size_; }                 ///< the output size, if set
  const std::optional<std::vector<double>>& scale_factor() const { return scale_factor_; }  ///< the factor, if set
  InterpolateMode mode() const { return mode_; }                                            ///< the resampling rule
  std::optional<bool> align_corners() const { return align_corners_; }                      ///< unset: false
  std::optional<bool> recompute_scale_factor() const { return recompute_scale_factor_; }    ///< unset: false

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = InterpolateMode::nearest;
  std::optional<bool> align_corners_;
  std::optional<bool> recompute_scale_factor_;
};

/// torch.nn.Upsample: (N, C, L) or (N, C, H, W) resampled by interpolate; prints as
/// PyTorch's repr, `Upsample(scale_factor=2.0, mode=nearest)`.
class UpsampleImpl : public Module {
 public:
  /// Builds the module; ValueError unless exactly one of size and scale_factor is set, or
  /// for align_corners with a mode that does not interpolate.
  explicit UpsampleImpl(const UpsampleOptions& options = {});
  Tensor forward(const Tensor& input);  ///< interpolate(input, the options)
  void pretty_print(std::ostream& os) const override;
  UpsampleOptions options;  ///< the options it was built with
};
/// The holder of UpsampleImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Upsample);

}  // namespace ag::nn
