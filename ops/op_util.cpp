// Helpers shared by the op files (internal).
#include "op_util.h"

#include <sstream>

namespace ag {

std::string list_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + "]";
}

int64_t wrap_dim_nonscalar(int64_t dim, int64_t ndim, const char* op) {
  AG_CHECK(ndim > 0, IndexError, op, ": dimension specified as ", dim, " but the tensor has no dimensions");
  return wrap_dim(dim, ndim, op);
}

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
