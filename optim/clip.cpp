#include "attograd/optim/clip.h"

#include <cmath>

#include "attograd/autograd.h"
#include "attograd/ops.h"
#include "attograd/log.h"
#include "kernels/adam.h"

namespace ag::optim {

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  AG_CHECK(norm_type > 0, ValueError, "clip_grad_norm_: norm_type must be positive, got ", norm_type);
  double acc = 0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    g = g.contiguous();
    dispatch_float(g.dtype(), "clip_grad_norm_", [&]<class T>() {
      const T* p = g.data<T>();
      if (norm_type == 2.0) {  // the common case, in double vector lanes
        acc += kernels::sum_sq.of<T>()(p, g.numel());
        return;
      }
      for (int64_t i = 0, n = g.numel(); i < n; ++i) {
        double a = std::abs(static_cast<double>(p[i]));
        if (std::isinf(norm_type))
          acc = std::isnan(a) || std::isnan(acc) ? NAN : std::max(acc, a);
        else
          acc += norm_type == 2.0 ? a * a : norm_type == 1.0 ? a : std::pow(a, norm_type);
      }
    });
  }
  double total = std::isinf(norm_type) ? acc : std::pow(acc, 1.0 / norm_type);
  if (!std::isfinite(total)) {
    log().warn("clip_grad_norm_: the total gradient norm is {}; gradients left unclipped", total);
    return total;
  }
  double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    NoGradGuard no_grad;
    for (const Tensor& p : params) {
      Tensor g = p.grad();
      if (g.defined()) g.mul_(coef);
    }
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  AG_CHECK(clip_value >= 0, ValueError, "clip_grad_value_: clip_value must be >= 0, got ", clip_value);
  NoGradGuard no_grad;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) g.copy_(clamp(g, -clip_value, clip_value));
  }
}

}  // namespace ag::optim
