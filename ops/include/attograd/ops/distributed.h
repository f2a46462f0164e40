#pragma once
/// \file
/// Differentiable collectives (ops/distributed.cpp), for model parallelism across the
/// ranks of ag::dist (attograd/dist.h). In a world of one process each is the identity.
///
/// Which backward is right depends on what the ranks hold downstream, so there are two
/// families, named as where they come from:
///
/// Megatron-LM's tensor-parallel regions. Replicated tensors (the same on every rank)
/// feed rank-specific work (each rank's heads, each rank's slice of a layer), whose
/// partial results are summed back into a replicated tensor; the loss is computed the
/// same way on every rank and counted once.
///   copy_to_parallel_region(x)      "f": forward identity, backward all-reduce (sum)
///   reduce_from_parallel_region(x)  "g": forward all-reduce (sum), backward identity
///   gather_from_parallel_region(x)  forward all-gather along the last dim, backward
///                                   this rank's slice of the gradient
///   scatter_to_parallel_region(x)   forward this rank's slice of the last dim,
///                                   backward all-gather
/// A column-parallel linear is  y_r = f(x) W_r^T;  a row-parallel one  y = g(x_r W_r^T).
///
/// torch.distributed.nn.functional's: every rank's output feeds its own downstream work
/// and the loss is the sum over ranks, so each backward is the exact adjoint:
///   functional::all_reduce(x)       sum over ranks; backward all-reduce (sum)
///   functional::all_gather(x, dim)  ranks' tensors concatenated along dim; backward
///                                   reduce-scatter (sum) of the gradient along dim
///   functional::reduce_scatter(x, dim)  sum over ranks, each rank keeping its block of
///                                   dim; backward all-gather along dim
/// (all_gather + reduce_scatter along the sequence are Megatron's sequence parallelism.)
#include <cstdint>

#include "attograd/dist.h"
#include "attograd/tensor.h"

namespace ag::dist {

Tensor copy_to_parallel_region(const Tensor& x);      ///< Megatron's f: identity forward, all-reduce (sum) backward
Tensor reduce_from_parallel_region(const Tensor& x);  ///< Megatron's g: all-reduce (sum) forward, identity backward
/// x (..., n) -> (..., world_size * n), rank r's block at [r*n, (r+1)*n).
Tensor gather_from_parallel_region(const Tensor& x);
/// x (..., world_size * n) -> (..., n): this rank's block. ShapeError unless divisible.
Tensor scatter_to_parallel_region(const Tensor& x);

namespace functional {
/// op: SUM or AVG when x requires grad (the backward of AVG averages too); any ReduceOp
/// otherwise.
Tensor all_reduce(const Tensor& x, ReduceOp op = ReduceOp::SUM);
/// x (..., n, ...) with n at dim -> (..., world_size * n, ...).
Tensor all_gather(const Tensor& x, int64_t dim = 0);
/// x (..., world_size * n, ...) -> (..., n, ...): the sum over ranks of this rank's block.
Tensor reduce_scatter(const Tensor& x, int64_t dim = 0);
}  // namespace functional

}  // namespace ag::dist
