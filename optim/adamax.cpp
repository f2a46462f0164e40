// Adamax, in the order torch.optim (1.13, single-tensor) computes it: one loop per
// parameter, in the parameter's dtype, scalars in double as PyTorch's Python floats.
#include <algorithm>
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"
#include "step_count.h"

namespace ag::optim {

// ---- Adamax ---------------------------------------------------------------------------
// g += wd p;  m = beta1 m + (1 - beta1) g;  u = max(beta2 u, |g| + eps);
// p -= (lr / (1 - beta1^t)) m / u
Adamax::Adamax(const NamedParams& params, const AdamaxOptions& o)
    : Adamax(std::vector<ParamGroup<AdamaxOptions>>{{params, o}}) {}
Adamax::Adamax(const std::vector<ParamGroup<AdamaxOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void Adamax::step() {
  for_each_grad([](const AdamaxOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    const int64_t t = count_step(st);
    Tensor m = st.get_or_zeros("exp_avg", p), u = st.get_or_zeros("exp_inf", p);
    const double b1 = o.betas().first, b2 = o.betas().second;  // no structured binding: captured below (clang 14)
    const double clr = o.lr() / (1 - std::pow(b1, static_cast<double>(t)));
    dispatch_float(p.dtype(), "Adamax", [&]<class T>() {
      T *w = p.data<T>(), *pm = m.data<T>(), *pu = u.data<T>();
      const T* gr = g.data<T>();
      const T wd = T(o.weight_decay()), eps = T(o.eps()), tb1 = T(b1), tb2 = T(b2), om = T(1 - b1), neg = T(-clr);
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        pm[i] = pm[i] * tb1 + d * om;
        const T a = pu[i] * tb2, b = std::abs(d) + eps;
        pu[i] = std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);  // amax propagates NaN
        w[i] = w[i] + neg * (pm[i] / pu[i]);
      }
    });
  });
}

}  // namespace ag::optim
