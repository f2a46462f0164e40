// Adagrad, in the order torch.optim (1.13, single-tensor) computes it: one fused loop
// per parameter, in the parameter's dtype.
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"
#include "step_count.h"

namespace ag::optim {

// ---- Adagrad ----------------------------------------------------------------------
// t += 1;  g += wd p;  clr = lr / (1 + (t - 1) lr_decay);  sum += g^2;
// p -= clr g / (sqrt(sum) + eps)
Adagrad::Adagrad(const NamedParams& params, const AdagradOptions& o)
    : Adagrad(std::vector<ParamGroup<AdagradOptions>>{{params, o}}) {}

Adagrad::Adagrad(const std::vector<ParamGroup<AdagradOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void Adagrad::step() {
  for_each_grad([](const AdagradOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    const int64_t t = count_step(st);
    if (st.find("sum") == nullptr) st.fields["sum"] = full(p.shape(), o.initial_accumulator_value(), p.dtype());
    Tensor sum = *st.find("sum");
    const double clr = o.lr() / (1 + static_cast<double>(t - 1) * o.lr_decay());
    dispatch_float(p.dtype(), "Adagrad", [&]<class T>() {
      T* w = p.data<T>();
      const T* gr = g.data<T>();
      T* s = sum.data<T>();
      const T wd = T(o.weight_decay()), eps = T(o.eps()), neg_clr = T(-clr);
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        s[i] = s[i] + d * d;
        w[i] = w[i] + neg_clr * (d / (std::sqrt(s[i]) + eps));
      }
    });
  });
}

}  // namespace ag::optim
