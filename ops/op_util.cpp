// Helpers shared by the op files (internal).
#include "op_util.h"

namespace ag {

Grads composite_backward(const std::function<Tensor(const std::vector<Tensor>&)>& composite,
                         const std::vector<Tensor>& inputs, const Tensor& g, NeedsGrad need) {
  std::vector<Tensor> args(inputs.size()), wrt;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (x.defined() && x.requires_grad() && need[i]) {
      args[i] = view(x, x.shape());
      wrt.push_back(args[i]);
      where.push_back(i);
    } else {
      args[i] = x;
    }
  }
  Grads grads(inputs.size());
  if (wrt.empty()) return grads;
  Tensor out = composite(args);
  if (!out.requires_grad()) return grads;
  std::vector<Tensor> gs = grad({out}, wrt, {g}, /*retain_graph=*/true, /*create_graph=*/true,
                                /*allow_unused=*/true);
  for (std::size_t j = 0; j < where.size(); ++j) grads[where[j]] = gs[j];
  return grads;
}

}  // namespace ag
