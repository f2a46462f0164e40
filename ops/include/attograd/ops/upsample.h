#pragma once
/// \file
/// Resampling (ops/upsample.cpp): torch.nn.functional.interpolate with PyTorch 1.13's
/// index math, on (N, C, L) and (N, C, H, W) inputs.
///
///   interpolate(x, InterpolateFuncOptions().scale_factor({2}).mode(InterpolateMode::bilinear))
///
/// Output size per spatial dim (n input): `size`, or floor(n * scale_factor). With a scale
/// factor (and recompute_scale_factor not true) the source coordinates use 1 / scale_factor,
/// otherwise n / out (PyTorch's compute_scales_value), so floor(3 * 1.7) = 5 outputs still
/// step by 1 / 1.7, not 3 / 5. Per output index i, as PyTorch 1.13's CPU kernel for NCHW
/// inputs:
///   nearest        src = min(floor(i * scale), n - 1)
///   nearest_exact  src = min(floor((i + 0.5) * scale), n - 1)
///   linear, bilinear (per dim, last dim first)
///                  align_corners: src = i (n - 1) / (out - 1)   (0 when out == 1)
///                  otherwise:     src = max((i + 0.5) * scale - 0.5, 0)
///                  out = x[floor(src)] (1 - l) + x[min(floor(src) + 1, n - 1)] l,
///                  l = src - floor(src) (out == n: x itself, as x * 1 + x * 0)
///   area           adaptive average pooling to the output size (ops/pool.h)
/// Coordinates and weights are computed in the input's float type (f64, else f32; bf16 and
/// f16 compute in f32 and round once). PyTorch's channels-last path, which a (N, 1, H, W)
/// input also takes, uses other nearest indices when out == n or 2n with a scale factor
/// (i or i / 2 whatever the factor); this follows the NCHW kernel. Under autocast nearest
/// and (bi)linear run in f32, as on PyTorch's CPU autocast fp32 list.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// The resampling rule of interpolate (torch's mode strings: "nearest", "nearest-exact",
/// "linear", "bilinear", "area").
enum class InterpolateMode { nearest, nearest_exact, linear, bilinear, area };

/// interpolate's arguments, as LibTorch's nn::functional::InterpolateFuncOptions: exactly
/// one of size and scale_factor; each takes one value per spatial dim, or one for all.
struct InterpolateFuncOptions {
  /// Sets the output's spatial size ({H_out, W_out}, {L_out}, or one size for every dim).
  InterpolateFuncOptions& size(std::vector<int64_t> v) {
    size_ = std::move(v);
    return *this;
  }
  /// Sets the multiplier of each spatial size ({2.0} doubles every dim).
  InterpolateFuncOptions& scale_factor(std::vector<double> v) {
    scale_factor_ = std::move(v);
    return *this;
  }
  /// Sets the resampling rule (nearest by default).
  InterpolateFuncOptions& mode(InterpolateMode m) {
    mode_ = m;
    return *this;
  }
  /// linear and bilinear only: true maps the corner pixels' centres onto each other;
  /// unset means false. A ValueError with nearest, nearest_exact or area, as PyTorch's.
  InterpolateFuncOptions& align_corners(std::optional<bool> v) {
    align_corners_ = v;
    return *this;
  }
  /// true: with a scale factor, the coordinates use n / out instead of 1 / scale_factor
  /// (a ValueError with an explicit size).
  InterpolateFuncOptions& recompute_scale_factor(std::optional<bool> v) {
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

/// F.interpolate: (N, C, L) with nearest, nearest_exact, linear or area; (N, C, H, W) with
/// nearest, nearest_exact, bilinear or area -> the same with the output's spatial size.
/// Differentiable to any order (built from index_select, mul and add, or adaptive pooling).
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

/// torch's name of a mode ("nearest-exact" for nearest_exact), for messages and printing.
const char* interpolate_mode_name(InterpolateMode mode);

}  // namespace ag
