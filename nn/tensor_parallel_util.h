#pragma once
// Internal to nn/: helpers shared by the tensor-parallel sources.
#include "attograd/nn/tensor_parallel.h"

namespace ag::nn::detail {

// ShapeError unless `value` (named `what`, a size of the full tensor `full_shape`) is
// positive and divides by the world size. `op` names the module.
void check_divides(const char* op, const char* what, int64_t value, const Shape& full_shape);
// This rank's slice of a full tensor (see ShardSpec): a fresh tensor, never a view.
Tensor take_shard(const Tensor& full, ShardSpec spec);
// A replicated copy of a LayerNorm (options, dtype, weights).
LayerNorm replica(const LayerNormImpl& full);

}  // namespace ag::nn::detail
