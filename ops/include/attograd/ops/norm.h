#pragma once
/// \file
/// Normalization over trailing dims or along a dim (ops/norm.cpp): layer_norm, rms_norm,
/// normalize, and the norms themselves (linalg_vector_norm, norm, linalg_matrix_norm,
/// frobenius_norm, cdist); over channels (ops/norm/batch_norm.cpp): batch_norm,
/// group_norm, instance_norm. layer_norm and rms_norm are fused primitives whose create_graph backward
/// differentiates the composite formula, so second derivatives work.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// Normalizes over the trailing dims given by normalized_shape; weight and bias (that
/// shape) are optional. A fused primitive; under create_graph its backward differentiates
/// the composite (x - mean) * rsqrt(var + eps) * weight + bias, so second derivatives work.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// PyTorch 2.4's torch.nn.functional.rms_norm: over the trailing dims given by
/// normalized_shape,  y = x * rsqrt(mean(x^2) + eps) * weight  (weight of that shape,
/// optional; no mean is subtracted and there is no bias). eps defaults to the machine
/// epsilon of x's dtype (torch.finfo(x.dtype).eps: 2^-23 for f32, 2^-52 for f64).
/// A fused primitive (one pass per row forward and backward); under create_graph its
/// backward differentiates the composite formula above, so second derivatives work.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
/// x / max(||x||_p, eps) along dim (keeps the shape), torch's F.normalize for any order:
/// p = 0 counts the non-zeros, p < 0 is (sum |x|^p)^(1/p) (0 when an entry is 0), +-inf
/// max / min |x|. A zero row stays zero, with gradient g / eps.
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12);
/// torch.linalg.vector_norm: the ord-norm of x over dims (all dims when empty), with
/// keepdim; ord 2, 1, inf, -inf, 0 (non-zeros), any p (negative p as torch). The gradient
/// at a zero vector is 0, as PyTorch's (not the 0 * inf of sqrt(sum(x^2))).
Tensor linalg_vector_norm(const Tensor& x, double ord = 2.0, const std::vector<int64_t>& dims = {},
                          bool keepdim = false);
/// torch.norm(x, p, dim, keepdim): linalg_vector_norm with p as the order.
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// torch.linalg.matrix_norm(x, "fro", dims, keepdim): the Frobenius norm over the two
/// matrix dims (default the last two). "nuc" (needs an SVD) is a ValueError naming it.
Tensor linalg_matrix_norm(const Tensor& x, const std::string& ord = "fro", const std::vector<int64_t>& dims = {-2, -1},
                          bool keepdim = false);
/// torch.linalg.matrix_norm(x, ord) with a number: ord 1 / -1 the max / min over columns of
/// the column sums of |x|, inf / -inf the max / min row sum; 2 and -2 (singular values)
/// are a ValueError naming the ord. dims = {row dim, column dim} of the matrices.
Tensor linalg_matrix_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims = {-2, -1},
                          bool keepdim = false);
/// torch.frobenius_norm: the 2-norm over dims (all when empty).
Tensor frobenius_norm(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// torch.cdist: x1 (..., P, M), x2 (..., R, M) -> (..., P, R), the p-norm of every row
/// difference (batch dims broadcast); a zero distance has gradient 0, as PyTorch's.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);

// ---- batch, group and instance norm (ops/norm/batch_norm.cpp) ----
// Input (N, C, *): N batch, C channels, * any number of spatial dims (none for (N, C)).
// Per-channel tensors (weight, bias, running stats) hold C elements.

/// torch.nn.functional.batch_norm. training: normalizes with the batch statistics over
/// every dim but 1 (biased variance) and, when running_mean / running_var are defined,
/// updates them in place outside the graph: running = (1 - momentum) * running +
/// momentum * stat, the variance's stat unbiased (n / (n - 1)); ValueError when a channel
/// has one value (N * prod(*) == 1). Eval (training false): normalizes with the running
/// statistics (required). weight and bias optional. A fused primitive (one pass for the
/// statistics, one to normalize, threaded over channels) that saves the mean and 1/std;
/// under create_graph its backward differentiates the composite formula. bf16 / f16
/// input: computed in f32 (weight, bias and running stats may be f32 or the input's
/// dtype), rounded once.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, bool training = false, double momentum = 0.1, double eps = 1e-5);
/// torch.nn.functional.group_norm: the C channels split into num_groups groups, each
/// sample's group normalized over its channels and *, then weight and bias (C) per
/// channel. ShapeError unless C is divisible by num_groups.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// torch.nn.functional.instance_norm: each (sample, channel) normalized over * alone,
/// i.e. batch_norm over the input viewed as (1, N * C, *). With use_input_stats the
/// running stats, when defined, move toward the batch's per-channel statistics averaged
/// over N; without it they normalize (required). weight and bias (C) optional.
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = {}, const Tensor& running_var = {},
                     const Tensor& weight = {}, const Tensor& bias = {}, bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

}  // namespace ag
