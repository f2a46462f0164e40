#pragma once
/// \file
/// Normalization over channels, as torch.nn's: BatchNorm1d, BatchNorm2d, SyncBatchNorm
/// (batch statistics over every rank of the job), InstanceNorm1d, InstanceNorm2d and
/// GroupNorm, around ag::batch_norm, ag::instance_norm and ag::group_norm
/// (attograd/ops/norm.h). Parameters and buffers carry PyTorch's state-dict names
/// (`weight`, `bias`, `running_mean`, `running_var`, `num_batches_tracked`).
///
///   nn::BatchNorm2d bn(nn::BatchNormOptions(16).momentum(std::nullopt));  // cumulative average
///   Tensor y = bn(x);   // x (N, 16, H, W); training: batch statistics, running stats updated
///   bn->eval();         // now the running statistics normalize
///
/// N batch, C channels (num_features), L length, H, W height and width.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "attograd/nn/module.h"
#include "attograd/ops.h"

namespace ag::nn {

// ---- BatchNorm ----
/// Options of the BatchNorm modules and SyncBatchNorm (LibTorch's BatchNormOptions).
struct BatchNormOptions {
  /// The required option; the others keep their PyTorch defaults.
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  /// C, the channel count (dim 1 of the input).
  AG_ARG(int64_t, num_features);
  /// Added to the variance before the square root.
  AG_ARG(double, eps) = 1e-5;
  /// The running statistics' update factor: running = (1 - momentum) * running +
  /// momentum * batch statistic; nullopt: the cumulative average (factor
  /// 1 / num_batches_tracked).
  AG_ARG(std::optional<double>, momentum) = 0.1;
  /// Learn a per-channel weight (ones) and bias (zeros).
  AG_ARG(bool, affine) = true;
  /// Keep running statistics (and use them in eval); without, every call normalizes with
  /// its own batch's statistics, in eval too.
  AG_ARG(bool, track_running_stats) = true;
};

/// What BatchNorm1d, BatchNorm2d and SyncBatchNorm share (PyTorch's _BatchNorm): the
/// parameters, the buffers, the momentum rule and train / eval.
class BatchNormImplBase : public Module {
 public:
  /// type_name is what printing and errors show ("BatchNorm2d").
  BatchNormImplBase(std::string type_name, const BatchNormOptions& options);
  /// running_mean 0, running_var 1, num_batches_tracked 0 (when tracking).
  void reset_running_stats();
  /// reset_running_stats(), then weight 1 and bias 0 (when affine).
  void reset_parameters();
  /// (N, C, *) -> same shape. Training: the batch's statistics normalize; with
  /// track_running_stats the running ones move toward them and num_batches_tracked
  /// grows by one. Eval: the running statistics normalize (the batch's without
  /// track_running_stats). ShapeError for a rank the module does not take or a channel
  /// count other than num_features; ValueError for one value per channel in training.
  Tensor forward(const Tensor& x);
  /// PyTorch's repr: "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)".
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  BatchNormOptions options;
  Tensor weight;               ///< (C), ones; undefined without affine
  Tensor bias;                 ///< (C), zeros; undefined without affine
  Tensor running_mean;         ///< (C) buffer, zeros; undefined without track_running_stats
  Tensor running_var;          ///< (C) buffer, ones; undefined without track_running_stats
  Tensor num_batches_tracked;  ///< i64 scalar buffer: training forwards so far; undefined without tracking

 protected:
  /// ShapeError unless x has a rank this module takes (what the message names).
  virtual void check_rank(const Tensor& x) const = 0;
  /// The normalization itself, once the statistics to use are known: batch_norm with
  /// the running stats given (rm, rv, possibly undefined), batch statistics when
  /// use_batch_stats, update factor `factor`. SyncBatchNorm reduces the statistics over
  /// the ranks instead.
  virtual Tensor normalize(const Tensor& x, const Tensor& rm, const Tensor& rv, bool use_batch_stats, double factor);

 private:
  friend std::shared_ptr<Module> convert_sync_batchnorm(std::shared_ptr<Module> module);
  /// Set by convert_sync_batchnorm: the SyncBatchNorm that took this module's place in its
  /// parent (sharing its tensors); forward goes there, so a parent calling this module
  /// through a typed member gets the synchronized one too.
  std::shared_ptr<BatchNormImplBase> replaced_by_;
};

/// torch.nn.BatchNorm1d: (N, C) or (N, C, L), statistics per channel over N (and L).
class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  /// Builds the module from its options; parameters and buffers start as in PyTorch.
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", options) {}
  /// Shorthand for BatchNormOptions(num_features).
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNorm1dImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_rank(const Tensor& x) const override;
};
/// The holder of BatchNorm1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(BatchNorm1d);

/// torch.nn.BatchNorm2d: (N, C, H, W), statistics per channel over N, H and W.
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  /// Builds the module from its options; parameters and buffers start as in PyTorch.
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", options) {}
  /// Shorthand for BatchNormOptions(num_features).
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_rank(const Tensor& x) const override;
};
/// The holder of BatchNorm2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(BatchNorm2d);

/// torch.nn.SyncBatchNorm over the job's processes (ag::dist; its one process group is
/// the world): in training each rank's (N_r, C, *) batch is normalized with the
/// statistics of all ranks' batches together, as one process holding the concatenated
/// batch would (outputs, running statistics and, summed over the ranks, gradients;
/// ranks may hold different N_r). Each rank's per-channel count, mean and sum of squared
/// deviations are gathered with the differentiable dist::functional::all_gather and
/// combined (Chan et al.'s pairwise rule, stable where sum and sum of squares would
/// cancel), so backward runs a collective too: every rank must call forward and
/// backward together. Eval, or a world of one: BatchNorm. Any rank >= 2.
class SyncBatchNormImpl : public BatchNormImplBase {
 public:
  /// Builds the module from its options; parameters and buffers start as in PyTorch.
  explicit SyncBatchNormImpl(const BatchNormOptions& options) : BatchNormImplBase("SyncBatchNorm", options) {}
  /// Shorthand for BatchNormOptions(num_features).
  explicit SyncBatchNormImpl(int64_t num_features) : SyncBatchNormImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_rank(const Tensor& x) const override;
  Tensor normalize(const Tensor& x, const Tensor& rm, const Tensor& rv, bool use_batch_stats, double factor) override;
};
/// The holder of SyncBatchNormImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(SyncBatchNorm);

/// torch.nn.SyncBatchNorm.convert_sync_batchnorm: every BatchNorm1d / BatchNorm2d in the
/// tree becomes a SyncBatchNorm with the same options, training mode and tensors (the
/// same handles: optimizers built before keep working), in its parent's place (so the
/// state-dict keys do not change). Returns the new root when `module` is itself a
/// BatchNorm, else `module`. A replaced module forwards its calls to its SyncBatchNorm,
/// so a parent that calls it through a typed member (`nn::BatchNorm2d bn`) is
/// synchronized too; train() / eval() reach the new module through the parent.
std::shared_ptr<Module> convert_sync_batchnorm(std::shared_ptr<Module> module);
/// The same for a holder (nn::Sequential, a custom module's holder).
template <class Impl>
std::shared_ptr<Module> convert_sync_batchnorm(const ModuleHolder<Impl>& module) {
  return convert_sync_batchnorm(std::shared_ptr<Module>(module.ptr()));
}

// ---- InstanceNorm ----
/// Options of the InstanceNorm modules (LibTorch's InstanceNormOptions).
struct InstanceNormOptions {
  /// The required option; the others keep their PyTorch defaults.
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  /// C, the channel count (dim 1 of a batched input).
  AG_ARG(int64_t, num_features);
  /// Added to the variance before the square root.
  AG_ARG(double, eps) = 1e-5;
  /// The running statistics' update factor (with track_running_stats).
  AG_ARG(double, momentum) = 0.1;
  /// Learn a per-channel weight (ones) and bias (zeros).
  AG_ARG(bool, affine) = false;
  /// Keep running statistics, averaged over the batch, and normalize with them in eval.
  AG_ARG(bool, track_running_stats) = false;
};

/// What InstanceNorm1d and InstanceNorm2d share (PyTorch's _InstanceNorm).
class InstanceNormImplBase : public Module {
 public:
  /// type_name is what printing and errors show ("InstanceNorm2d").
  InstanceNormImplBase(std::string type_name, const InstanceNormOptions& options);
  /// running_mean 0, running_var 1, num_batches_tracked 0 (when tracking).
  void reset_running_stats();
  /// reset_running_stats(), then weight 1 and bias 0 (when affine).
  void reset_parameters();
  /// (N, C, *) or unbatched (C, *) -> same shape: each sample's channel normalized over *
  /// (ag::instance_norm). The running statistics normalize only in eval with
  /// track_running_stats. ShapeError for a rank the module does not take, or, with
  /// affine, a channel count other than num_features.
  Tensor forward(const Tensor& x);
  /// PyTorch's repr: "InstanceNorm2d(16, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false)".
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  InstanceNormOptions options;
  Tensor weight;               ///< (C), ones; undefined without affine
  Tensor bias;                 ///< (C), zeros; undefined without affine
  Tensor running_mean;         ///< (C) buffer, zeros; undefined without track_running_stats
  Tensor running_var;          ///< (C) buffer, ones; undefined without track_running_stats
  Tensor num_batches_tracked;  ///< i64 scalar buffer (PyTorch keeps it, never counts); with tracking

 protected:
  /// The rank of a batched input: 3 for InstanceNorm1d, 4 for InstanceNorm2d.
  virtual int64_t batched_rank() const = 0;
};

/// torch.nn.InstanceNorm1d: (N, C, L) or (C, L).
class InstanceNorm1dImpl : public InstanceNormImplBase {
 public:
  /// Builds the module from its options; parameters and buffers start as in PyTorch.
  explicit InstanceNorm1dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm1d", options) {}
  /// Shorthand for InstanceNormOptions(num_features).
  explicit InstanceNorm1dImpl(int64_t num_features) : InstanceNorm1dImpl(InstanceNormOptions(num_features)) {}

 protected:
  int64_t batched_rank() const override { return 3; }
};
/// The holder of InstanceNorm1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(InstanceNorm1d);

/// torch.nn.InstanceNorm2d: (N, C, H, W) or (C, H, W).
class InstanceNorm2dImpl : public InstanceNormImplBase {
 public:
  /// Builds the module from its options; parameters and buffers start as in PyTorch.
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm2d", options) {}
  /// Shorthand for InstanceNormOptions(num_features).
  explicit InstanceNorm2dImpl(int64_t num_features) : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}

 protected:
  int64_t batched_rank() const override { return 4; }
};
/// The holder of InstanceNorm2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(InstanceNorm2d);

// ---- GroupNorm ----
/// Options of nn::GroupNorm (LibTorch's GroupNormOptions).
struct GroupNormOptions {
  /// The required options; the others keep their PyTorch defaults.
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  /// G, the number of groups the channels are split into (dividing num_channels).
  AG_ARG(int64_t, num_groups);
  /// C, the channel count (dim 1 of the input).
  AG_ARG(int64_t, num_channels);
  /// Added to the variance before the square root.
  AG_ARG(double, eps) = 1e-5;
  /// Learn a per-channel weight (ones) and bias (zeros).
  AG_ARG(bool, affine) = true;
};

/// torch.nn.GroupNorm: (N, C, *) -> same shape, each sample's groups of C / G channels
/// normalized over their channels and *, then the per-channel weight and bias. No
/// running statistics: train and eval agree.
class GroupNormImpl : public Module {
 public:
  /// Builds the module; ValueError unless num_groups divides num_channels.
  explicit GroupNormImpl(const GroupNormOptions& options);
  /// Shorthand for the options constructor.
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  void reset_parameters();          ///< weight 1, bias 0
  Tensor forward(const Tensor& x);  ///< (N, C, *) -> same shape (ag::group_norm)
  /// PyTorch's repr: "GroupNorm(4, 16, eps=1e-05, affine=true)".
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  GroupNormOptions options;
  Tensor weight;  ///< (C), ones; undefined without affine
  Tensor bias;    ///< (C), zeros; undefined without affine
};
/// The holder of GroupNormImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(GroupNorm);

}  // namespace ag::nn
