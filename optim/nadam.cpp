// NAdam, in the order torch.optim (1.13, single-tensor) computes it: one loop per
// parameter, in the parameter's dtype, scalars in double as PyTorch's Python floats.
#include <algorithm>
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"
#include "step_count.h"

namespace ag::optim {

// ---- NAdam ----------------------------------------------------------------------------
// mu_t = beta1 (1 - 0.5 * 0.96^(t psi)), mu_prod *= mu_t;  m, v as Adam;
// denom = sqrt(v / (1 - beta2^t)) + eps;
// p -= lr (1 - mu_t) / (1 - mu_prod) g / denom + lr mu_{t+1} / (1 - mu_prod mu_{t+1}) m / denom
NAdam::NAdam(const NamedParams& params, const NAdamOptions& o)
    : NAdam(std::vector<ParamGroup<NAdamOptions>>{{params, o}}) {}
NAdam::NAdam(const std::vector<ParamGroup<NAdamOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void NAdam::step() {
  for_each_grad([](const NAdamOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    const int64_t t = count_step(st);
    Tensor m = st.get_or_zeros("exp_avg", p), v = st.get_or_zeros("exp_avg_sq", p);
    if (st.find("mu_product") == nullptr) st.fields["mu_product"] = full(Shape{}, 1.0, DType::f64);
    double& mu_product = st.find("mu_product")->data<double>()[0];
    const double b1 = o.betas().first, b2 = o.betas().second;  // no structured binding: captured below (clang 14)
    const double s = static_cast<double>(t), psi = o.momentum_decay();
    const double bc2 = 1 - std::pow(b2, s);
    const double mu = b1 * (1. - 0.5 * std::pow(0.96, s * psi));
    const double mu_next = b1 * (1. - 0.5 * std::pow(0.96, (s + 1) * psi));
    mu_product *= mu;
    const double mu_product_next = mu_product * mu_next;
    const double c_g = -o.lr() * (1. - mu) / (1. - mu_product), c_m = (-o.lr() * mu_next) / (1. - mu_product_next);
    dispatch_float(p.dtype(), "NAdam", [&]<class T>() {
      T *w = p.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
      const T* gr = g.data<T>();
      const T wd = T(o.weight_decay()), eps = T(o.eps()), tb1 = T(b1), tb2 = T(b2), om1 = T(1 - b1), om2 = T(1 - b2);
      const T tbc2 = T(bc2), tcg = T(c_g), tcm = T(c_m);
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        pm[i] = pm[i] * tb1 + d * om1;
        pv[i] = pv[i] * tb2 + om2 * (d * d);
        const T denom = std::sqrt(pv[i] / tbc2) + eps;
        w[i] = w[i] + tcg * (d / denom);
        w[i] = w[i] + tcm * (pm[i] / denom);
      }
    });
  });
}

}  // namespace ag::optim
