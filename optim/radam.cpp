// RAdam, in the order torch.optim (1.13, single-tensor) computes it: one loop per
// parameter, in the parameter's dtype, scalars in double as PyTorch's Python floats.
#include <algorithm>
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"
#include "step_count.h"

namespace ag::optim {

// ---- RAdam ----------------------------------------------------------------------------
// m, v as Adam;  m_hat = m / (1 - beta1^t);  rho_inf = 2 / (1 - beta2) - 1,
// rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t);  rho_t > 5: p -= lr m_hat r sqrt(1 - beta2^t) /
// (sqrt(v) + eps) with r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t));
// else p -= lr m_hat
RAdam::RAdam(const NamedParams& params, const RAdamOptions& o)
    : RAdam(std::vector<ParamGroup<RAdamOptions>>{{params, o}}) {}
RAdam::RAdam(const std::vector<ParamGroup<RAdamOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void RAdam::step() {
  for_each_grad([](const RAdamOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    const int64_t t = count_step(st);
    Tensor m = st.get_or_zeros("exp_avg", p), v = st.get_or_zeros("exp_avg_sq", p);
    const double b1 = o.betas().first, b2 = o.betas().second;  // no structured binding: captured below (clang 14)
    const double s = static_cast<double>(t);
    const double bc1 = 1 - std::pow(b1, s), bc2 = 1 - std::pow(b2, s);
    const double rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 * s * std::pow(b2, s) / bc2;
    const bool rectified = rho_t > 5.;
    const double rect =
        rectified ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0.0;
    dispatch_float(p.dtype(), "RAdam", [&]<class T>() {
      T *w = p.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
      const T* gr = g.data<T>();
      const T wd = T(o.weight_decay()), eps = T(o.eps()), tb1 = T(b1), tb2 = T(b2), om1 = T(1 - b1), om2 = T(1 - b2);
      const T tbc1 = T(bc1), lr = T(o.lr()), sq_bc2 = T(std::sqrt(bc2)), trect = T(rect);
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        pm[i] = pm[i] * tb1 + d * om1;
        pv[i] = pv[i] * tb2 + om2 * (d * d);
        const T m_hat = pm[i] / tbc1;
        if (rectified) {
          const T adaptive = sq_bc2 / (std::sqrt(pv[i]) + eps);
          w[i] = w[i] - m_hat * lr * adaptive * trect;
        } else {
          w[i] = w[i] - m_hat * lr;
        }
      }
    });
  });
}

}  // namespace ag::optim
