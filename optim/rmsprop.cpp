// RMSprop, in the order torch.optim (1.13, single-tensor) computes it: one fused loop
// per parameter, in the parameter's dtype.
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"
#include "step_count.h"

namespace ag::optim {

// ---- RMSprop ----------------------------------------------------------------------
// g += wd p;  v = alpha v + (1 - alpha) g^2;  centered: a = alpha a + (1 - alpha) g,
// avg = sqrt(v - a^2) + eps, else sqrt(v) + eps;
// momentum: buf = momentum buf + g / avg, p -= lr buf;  else p -= lr g / avg
RMSprop::RMSprop(const NamedParams& params, const RMSpropOptions& o)
    : RMSprop(std::vector<ParamGroup<RMSpropOptions>>{{params, o}}) {}

RMSprop::RMSprop(const std::vector<ParamGroup<RMSpropOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void RMSprop::step() {
  for_each_grad([](const RMSpropOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    count_step(st);
    Tensor v = st.get_or_zeros("square_avg", p);
    Tensor a = o.centered() ? st.get_or_zeros("grad_avg", p) : Tensor{};
    Tensor buf = o.momentum() > 0 ? st.get_or_zeros("momentum_buffer", p) : Tensor{};
    dispatch_float(p.dtype(), "RMSprop", [&]<class T>() {
      T* w = p.data<T>();
      const T* gr = g.data<T>();
      T* vs = v.data<T>();
      T* as = a.defined() ? a.data<T>() : nullptr;
      T* bs = buf.defined() ? buf.data<T>() : nullptr;
      const T lr = T(o.lr()), alpha = T(o.alpha()), one_m = T(1 - o.alpha()), eps = T(o.eps()),
              wd = T(o.weight_decay()), mom = T(o.momentum());
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        vs[i] = vs[i] * alpha + one_m * (d * d);
        T avg;
        if (as) {
          as[i] = as[i] * alpha + one_m * d;
          avg = std::sqrt(vs[i] + T(-1) * (as[i] * as[i])) + eps;
        } else {
          avg = std::sqrt(vs[i]) + eps;
        }
        if (bs) {
          bs[i] = bs[i] * mom + d / avg;
          w[i] = w[i] + (-lr) * bs[i];
        } else {
          w[i] = w[i] + (-lr) * (d / avg);
        }
      }
    });
  });
}

}  // namespace ag::optim
