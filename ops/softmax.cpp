// softmax and log_softmax: primitives (a composite would turn an all -inf row, a fully
// masked query, into NaN). Backward from the saved output y:
//   softmax:      dx = y * (g - sum(g * y))
//   log_softmax:  dx = g - exp(y) * sum(g)
// softmin is a composite: softmax(-x).
#include "attograd/ops/softmax.h"

#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {

static Tensor softmax_op(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_float(x, name);
  dim = wrap_dim(dim, x.dim(), name);
  Tensor y = K::softmax(x, dim, log);
  return record(name, y, {x}, [sy = save_output_if(wants_grad(x), y), dim, log](const Tensor& g, NeedsGrad) {
    const Tensor y = sy.get();
    if (!grad_enabled()) return Grads{K::softmax_backward(y, g, dim, log)};
    // create_graph: the same formulas from differentiable ops.
    if (log) return Grads{g - exp(y) * sum(g, {dim}, true)};
    return Grads{y * (g - sum(g * y, {dim}, true))};
  });
}

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op(detail::autocast_f32(x), dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_op(detail::autocast_f32(x), dim, true); }

Tensor softmin(const Tensor& x, int64_t dim) try {
  check_float(x, "softmin");
  return softmax(neg(x), dim);
} catch (const Error& e) { detail::rethrow_in_op("softmin", e); }

}  // namespace ag
