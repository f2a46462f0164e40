// softmax and log_softmax: primitives (a composite would turn an all -inf row, a fully
// masked query, into NaN). Backward from the saved output y:
//   softmax:      dx = y * (g - sum(g * y))
//   log_softmax:  dx = g - exp(y) * sum(g)
#include "op_util.h"

namespace ag {

static Tensor softmax_op(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_float(x, name);
  dim = wrap_dim(dim, x.dim(), name);
  Tensor y = K::softmax(x, dim, log);
  return record(name, y, {x}, [sy = save_if(wants_grad(x), y), dim, log](const Tensor& g, NeedsGrad) {
    return Grads{K::softmax_backward(sy.get(), g, dim, log)};
  });
}

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, true); }

}  // namespace ag
