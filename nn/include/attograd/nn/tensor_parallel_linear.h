#pragma once
/// \file
/// The building blocks of tensor parallelism (the design and an example are in
/// attograd/nn/tensor_parallel.h, which includes this header): how a parameter is split
/// (ShardSpec), the base module that records it, the full-layout state dicts and
/// gradients, the per-rank generator, and the parallel linears.
/// Legend: p world size, r this rank; in, out the full Linear's feature counts.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attograd/generator.h"
#include "attograd/nn/layers.h"
#include "attograd/nn/module.h"

namespace ag::nn {

// ---- how a parameter is split across ranks ----
/// The full tensor's `dim` holds `parts` equal blocks (3 for a packed q, k, v weight, else
/// 1); each block is cut into p equal slices and rank r keeps slice r of every block,
/// concatenated in block order along dim. A parameter without a ShardSpec is replicated.
struct ShardSpec {
  /// the dim the full tensor is cut along
  int64_t dim = 0;
  /// How many shards the dim is cut into (the world size).
  int64_t parts = 1;
};

/// Base of the tensor-parallel modules: records the ShardSpec of its own parameters.
class TensorParallelModule : public Module {
 public:
  /// type_name as Module's.
  using Module::Module;
  /// nullopt for a replicated (or unknown) parameter of this module (not of its children).
  std::optional<ShardSpec> shard_spec(const std::string& name) const;
  /// The free functions below, on this module.
  TensorMap full_state_dict() const;
  /// Loads this rank's slices of a full state dict (see nn::load_full_state_dict).
  void load_full_state_dict(const TensorMap& state, bool strict = true);

 protected:
  /// Module::register_parameter (by address) and its ShardSpec.
  Tensor& register_sharded_parameter(const std::string& name, Tensor* member, ShardSpec spec);

 private:
  std::vector<std::pair<std::string, ShardSpec>> shards_;
};

/// For any module tree holding tensor-parallel modules (a TensorParallelModule or plain
/// modules around them). full_state_dict and full_grads are collectives: every rank
/// calls them together.
///   full_state_dict: the state dict in the single-process layout; sharded tensors are
///     all-gathered (every rank gets all of it), replicated ones are this rank's own.
///   load_full_state_dict: loads this rank's slices of a full state dict, checking every
///     full shape (ShapeError naming the key, the full and local shapes and p); missing
///     and unexpected keys as Module::load_state_dict. No communication.
///   full_grads: the parameters' gradients in the full layout, under full_state_dict's
///     names; parameters without a gradient are left out (DistError when some ranks have
///     a sharded parameter's gradient and others not).
TensorMap full_state_dict(const Module& module);
/// See above: loads this rank's slices of a full state dict.
void load_full_state_dict(Module& module, const TensorMap& state, bool strict = true);
/// See above: the gradients in the full layout (collective).
TensorMap full_grads(const Module& module);

/// The generator of randomness that differs by rank: dropout inside the parallel region.
/// Seeded on first use with 5489 + 2718 + rank (Megatron-LM's offset).
Generator& tensor_parallel_generator();
/// Megatron-LM's model_parallel_cuda_manual_seed: the default generator gets `seed` on
/// every rank (replicated dropout agrees across ranks), tensor_parallel_generator() gets
/// seed + 2718 + rank.
void tensor_parallel_manual_seed(uint64_t seed);

// ---- ColumnParallelLinear: y_r = f(x) W_r^T + b_r ----
/// Example: nn::ColumnParallelLinear fc(nn::ColumnParallelLinearOptions(512, 2048).gather_output(true));
struct ColumnParallelLinearOptions {
  /// The required options; the others keep their PyTorch defaults.
  ColumnParallelLinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  /// The input width `in` (the last dim of the input).
  AG_ARG(int64_t, in_features);
  AG_ARG(int64_t, out_features);  ///< must divide by p (ShapeError)
  /// Learn an additive bias (out).
  AG_ARG(bool, bias) = true;
  /// Megatron-LM's gather_output (whose default is true): all-gather the p output blocks
  /// into (..., out) on every rank. false keeps this rank's (..., out / p) for a
  /// following RowParallelLinear.
  AG_ARG(bool, gather_output) = false;
};

/// Linear whose output features are split over ranks: (..., in) -> (..., out / p) or gathered (..., out).
class ColumnParallelLinearImpl : public TensorParallelModule {
 public:
  /// Initialized as nn::Linear(in, out) from the same generator state, then sliced.
  explicit ColumnParallelLinearImpl(const ColumnParallelLinearOptions& options);
  /// Shorthand for the options constructor.
  ColumnParallelLinearImpl(int64_t in, int64_t out) : ColumnParallelLinearImpl(ColumnParallelLinearOptions(in, out)) {}
  /// This rank's slice of `full` (its dtype; no generator draws).
  explicit ColumnParallelLinearImpl(const LinearImpl& full, bool gather_output = false);
  /// Re-draws the parameters with PyTorch's default initialization.
  void reset_parameters();
  /// x (..., in), replicated -> (..., out / p) this rank's features, or (..., out) gathered.
  Tensor forward(const Tensor& x);
  /// The same on an input already passed through copy_to_parallel_region (so that
  /// several column-parallel layers reading one input share one all-reduce backward).
  Tensor forward_parallel(const Tensor& x_parallel);
  void pretty_print(std::ostream& os) const override;
  /// out / p.
  int64_t out_features_per_partition() const { return weight.size(0); }

  /// The options it was built with (pretty_print shows them).
  ColumnParallelLinearOptions options;
  Tensor weight;  ///< (out / p, in): rows [r*out/p, (r+1)*out/p) of the full (out, in)
  Tensor bias;    ///< (out / p), the same rows, or undefined

 private:
  void build(const LinearImpl& full);
};
/// The holder of ColumnParallelLinearImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ColumnParallelLinear);

// ---- RowParallelLinear: y = g(x_r W_r^T) + b ----
/// Options of nn::RowParallelLinear: required ones in the constructor, the rest chainable setters.
struct RowParallelLinearOptions {
  /// The required options; the others keep their PyTorch defaults.
  RowParallelLinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  AG_ARG(int64_t, in_features);  ///< must divide by p (ShapeError)
  /// The output width `out`.
  AG_ARG(int64_t, out_features);
  /// Learn an additive bias (out).
  AG_ARG(bool, bias) = true;
  /// Megatron-LM's input_is_parallel: x is this rank's (..., in / p) block (a
  /// ColumnParallelLinear's output); false takes a replicated (..., in) and scatters it.
  AG_ARG(bool, input_is_parallel) = true;
};

/// Linear whose input features are split over ranks; one all-reduce makes (..., out) whole.
class RowParallelLinearImpl : public TensorParallelModule {
 public:
  /// Initialized as nn::Linear(in, out) from the same generator state, then sliced.
  explicit RowParallelLinearImpl(const RowParallelLinearOptions& options);
  /// Shorthand for the options constructor.
  RowParallelLinearImpl(int64_t in, int64_t out) : RowParallelLinearImpl(RowParallelLinearOptions(in, out)) {}
  /// Shorthand for the options constructor.
  explicit RowParallelLinearImpl(const LinearImpl& full, bool input_is_parallel = true);
  /// Re-draws the parameters with PyTorch's default initialization.
  void reset_parameters();
  /// x (..., in / p) (or (..., in) replicated, see input_is_parallel) -> (..., out),
  /// replicated: the bias is added once, after the all-reduce.
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  /// in / p.
  int64_t in_features_per_partition() const { return weight.size(1); }

  /// The options it was built with (pretty_print shows them).
  RowParallelLinearOptions options;
  Tensor weight;  ///< (out, in / p): columns [r*in/p, (r+1)*in/p) of the full (out, in)
  Tensor bias;    ///< (out), replicated, or undefined

 private:
  void build(const LinearImpl& full);
};
/// The holder of RowParallelLinearImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(RowParallelLinear);

}  // namespace ag::nn
