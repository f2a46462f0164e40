// Differentiable collectives: see attograd/ops/distributed.h. Each backward is written
// with these same ops, so double backward works across ranks too.
#include "attograd/ops/distributed.h"

#include "attograd/ops.h"
#include "kernels/kernels.h"
#include "op_util.h"

namespace ag::dist {

namespace {

// A fresh contiguous tensor holding t's values (record needs an output of its own).
Tensor fresh(const Tensor& t) {
  Tensor out = kernels::empty(t.shape(), t.dtype());
  kernels::copy(t, out);
  return out;
}

// Raw all-gather of x along dim: (..., n, ...) -> (..., world * n, ...).
Tensor gather_raw(const Tensor& x, int64_t dim) {
  Tensor front = x.detach().transpose(0, dim);  // gathered blocks are contiguous along dim 0
  Shape s = front.shape();
  s[0] *= world_size();
  Tensor out = kernels::empty(s, x.dtype(), "dist::all_gather");
  Tensor in = kernels::contiguous(front);
  all_gather_into_tensor(out, in);
  return dim == 0 ? out : fresh(out.transpose(0, dim));
}

// Raw reduce-scatter (sum) of x along dim: (..., world * n, ...) -> (..., n, ...).
Tensor reduce_scatter_raw(const Tensor& x, int64_t dim, const char* op) {
  const int64_t w = world_size();
  AG_CHECK(x.size(dim) % w == 0, ShapeError, op, ": dim ", dim, " of ", x.shape(), " must divide by the world size ",
           w);
  Tensor front = kernels::contiguous(x.detach().transpose(0, dim));
  Shape s = front.shape();
  s[0] /= w;
  Tensor out = kernels::empty(s, x.dtype(), op);
  reduce_scatter_tensor(out, front, ReduceOp::SUM);
  return dim == 0 ? out : fresh(out.transpose(0, dim));
}

void check_collective_dtype(const Tensor& x, const char* op) {
  AG_CHECK(x.defined(), ValueError, op, ": undefined tensor");
  AG_CHECK(x.dtype() == DType::f32 || x.dtype() == DType::f64 || x.dtype() == DType::i64 || is_reduced_float(x.dtype()),
           DTypeError, op, ": tensor of shape ", x.shape(), " has dtype ", x.dtype(),
           "; collectives take f32, f64, bf16, f16 or i64");
}

}  // namespace

Tensor copy_to_parallel_region(const Tensor& x) {
  check_collective_dtype(x, "copy_to_parallel_region");
  return record("copy_to_parallel_region", fresh(x), {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {reduce_from_parallel_region(g)}; });
}

Tensor reduce_from_parallel_region(const Tensor& x) {
  check_collective_dtype(x, "reduce_from_parallel_region");
  Tensor out = fresh(x);
  all_reduce(out, ReduceOp::SUM);
  return record("reduce_from_parallel_region", out, {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {copy_to_parallel_region(g)}; });
}

Tensor gather_from_parallel_region(const Tensor& x) {
  check_collective_dtype(x, "gather_from_parallel_region");
  AG_CHECK(x.dim() >= 1, ShapeError, "gather_from_parallel_region: needs at least one dim, got ", x.shape());
  const int64_t last = x.dim() - 1;
  return record("gather_from_parallel_region", gather_raw(x, last), {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {scatter_to_parallel_region(g)}; });
}

Tensor scatter_to_parallel_region(const Tensor& x) {
  check_collective_dtype(x, "scatter_to_parallel_region");
  AG_CHECK(x.dim() >= 1, ShapeError, "scatter_to_parallel_region: needs at least one dim, got ", x.shape());
  const int64_t last = x.dim() - 1, w = world_size();
  AG_CHECK(x.size(last) % w == 0, ShapeError, "scatter_to_parallel_region: the last dim of ", x.shape(),
           " must divide by the world size ", w);
  const int64_t n = x.size(last) / w;
  Tensor out = fresh(x.detach().narrow(last, rank() * n, n));
  return record("scatter_to_parallel_region", out, {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {gather_from_parallel_region(g)}; });
}

namespace functional {

Tensor all_reduce(const Tensor& x, ReduceOp op) {
  check_collective_dtype(x, "dist::functional::all_reduce");
  AG_CHECK(!x.requires_grad() || op == ReduceOp::SUM || op == ReduceOp::AVG, ValueError,
           "dist::functional::all_reduce: only SUM and AVG are differentiable (tensor of shape ", x.shape(), ")");
  Tensor out = fresh(x);
  dist::all_reduce(out, op);
  return record("all_reduce", out, {x},
                [op](const Tensor& g, NeedsGrad) -> Grads { return {functional::all_reduce(g, op)}; });
}

Tensor all_gather(const Tensor& x, int64_t dim) {
  check_collective_dtype(x, "dist::functional::all_gather");
  dim = wrap_dim(dim, x.dim(), "dist::functional::all_gather");
  return record("all_gather", gather_raw(x, dim), {x},
                [dim](const Tensor& g, NeedsGrad) -> Grads { return {functional::reduce_scatter(g, dim)}; });
}

Tensor reduce_scatter(const Tensor& x, int64_t dim) {
  check_collective_dtype(x, "dist::functional::reduce_scatter");
  dim = wrap_dim(dim, x.dim(), "dist::functional::reduce_scatter");
  return record("reduce_scatter", reduce_scatter_raw(x, dim, "dist::functional::reduce_scatter"), {x},
                [dim](const Tensor& g, NeedsGrad) -> Grads { return {functional::all_gather(g, dim)}; });
}

}  // namespace functional

}  // namespace ag::dist
