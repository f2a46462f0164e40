// Adam's and AdamW's update, in the order torch.optim (1.13, single-tensor) computes it:
// one fused loop per parameter (kernels/adam.h, per ISA).
#include <cmath>

#include "attograd/optim/optimizer.h"
#include "kernels/adam.h"
#include "step_count.h"

namespace ag::optim {

// ---- Adam / AdamW -----------------------------------------------------------------
// t += 1;  g += wd * p (Adam) or p *= 1 - lr * wd (AdamW)
// m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  vmax = max(vmax, v) (amsgrad)
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
namespace {

// The fields Adam and AdamW share (their options types differ only in defaults).
struct AdamHyper {
  double lr, b1, b2, eps, weight_decay;
  bool amsgrad, decoupled;
};
template <class O>
AdamHyper hyper(const O& o, bool decoupled) {
  return {o.lr(), o.betas().first, o.betas().second, o.eps(), o.weight_decay(), o.amsgrad(), decoupled};
}

// One Adam(W) update of p (contiguous, same shape as its contiguous grad g) and its state.
void adam_update(const Tensor& p, const Tensor& g, ParamState& st, const AdamHyper& h) {
  const int64_t t = count_step(st);
  Tensor m = st.get_or_zeros("exp_avg", p), v = st.get_or_zeros("exp_avg_sq", p);
  Tensor vmax = h.amsgrad ? st.get_or_zeros("max_exp_avg_sq", p) : Tensor{};
  const double step_size = h.lr / (1 - std::pow(h.b1, static_cast<double>(t)));
  const double bc2_sqrt = std::sqrt(1 - std::pow(h.b2, static_cast<double>(t)));
  dispatch_float(p.dtype(), "Adam", [&]<class T>() {
    const kernels::AdamStep<T> hs{h.decoupled, T(h.weight_decay), T(1 - h.lr * h.weight_decay),
                                  T(h.b1),     T(h.b2),           T(1 - h.b1),
                                  T(1 - h.b2), T(h.eps),          T(step_size),
                                  T(bc2_sqrt)};
    kernels::adam_update.of<T>()(p.data<T>(), g.data<T>(), m.data<T>(), v.data<T>(),
                                 vmax.defined() ? vmax.data<T>() : nullptr, p.numel(), hs);
  });
}

}  // namespace

Adam::Adam(const NamedParams& params, const AdamOptions& o) : Adam(std::vector<ParamGroup<AdamOptions>>{{params, o}}) {}

Adam::Adam(const std::vector<ParamGroup<AdamOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void Adam::step() {
  for_each_grad(
      [](const AdamOptions& o, Tensor& p, const Tensor& g, ParamState& st) { adam_update(p, g, st, hyper(o, false)); });
}

AdamW::AdamW(const NamedParams& params, const AdamWOptions& o)
    : AdamW(std::vector<ParamGroup<AdamWOptions>>{{params, o}}) {}

AdamW::AdamW(const std::vector<ParamGroup<AdamWOptions>>& groups) {
  for (auto& g : groups) add_param_group(g);  // checks the options
}

void AdamW::step() {
  for_each_grad(
      [](const AdamWOptions& o, Tensor& p, const Tensor& g, ParamState& st) { adam_update(p, g, st, hyper(o, true)); });
}

}  // namespace ag::optim
