// SGD's update, in the order torch.optim (1.13, single-tensor) computes it: one fused
// loop per parameter, in the parameter's dtype.
#include <cmath>

#include "attograd/optim/optimizer.h"

namespace ag::optim {

// ---- SGD --------------------------------------------------------------------------
// d = g + wd * p;  with momentum: buf = d (first step) or momentum * buf + (1 - dampening) * d,
// d = nesterov ? d + momentum * buf : buf;  p -= lr * d
SGD::SGD(const NamedParams& params, const SGDOptions& o) : SGD(std::vector<ParamGroup<SGDOptions>>{{params, o}}) {}

SGD::SGD(const std::vector<ParamGroup<SGDOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void SGD::step() {
  for_each_grad([](const SGDOptions& o, Tensor& p, const Tensor& g, ParamState& st) {
    bool first = o.momentum() != 0 && st.find("momentum_buffer") == nullptr;
    Tensor buf = o.momentum() != 0 ? st.get_or_zeros("momentum_buffer", p) : Tensor{};
    dispatch_float(p.dtype(), "SGD", [&]<class T>() {
      T* w = p.data<T>();
      const T* gr = g.data<T>();
      T* b = buf.defined() ? buf.data<T>() : nullptr;
      const T lr = T(o.lr()), wd = T(o.weight_decay()), mom = T(o.momentum()), damp = T(1 - o.dampening());
      for (int64_t i = 0, n = p.numel(); i < n; ++i) {
        T d = gr[i];
        if (wd != 0) d = d + wd * w[i];
        if (b) {
          b[i] = first ? d : b[i] * mom + damp * d;
          d = o.nesterov() ? d + mom * b[i] : b[i];
        }
        w[i] = w[i] - lr * d;
      }
    });
  });
}

}  // namespace ag::optim
