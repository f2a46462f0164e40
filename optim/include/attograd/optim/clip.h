#pragma once
/// \file
/// Gradient clipping, as torch.nn.utils.
#include <limits>
#include <vector>

#include "attograd/tensor.h"

namespace ag::optim {

/// Pass as norm_type for the max-norm.
inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

/// Scales every gradient by max_norm / (total + 1e-6) when the total norm over all of
/// them (norm_type 2, 1, ..., or kInfNorm) exceeds max_norm; returns the total norm. A
/// non-finite total is returned and logged as a warning, and the gradients are left as
/// they are (never scaled by NaN).
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

/// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace ag::optim
