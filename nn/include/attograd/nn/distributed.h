#pragma once
/// \file
/// Data parallelism (PyTorch's torch.nn.parallel.DistributedDataParallel, LibTorch's name):
/// every rank holds the whole model, runs it on its own shard of each batch, and the
/// gradients are averaged across ranks during backward, so that after backward every rank
/// holds the gradient of the loss averaged over the global batch (for a loss that is a
/// mean over the batch: exactly the gradient one process would get from the whole batch).
///
///   ag::dist::InitGuard dist(&argc, &argv);
///   MyNet model(...);
///   nn::DistributedDataParallel ddp(model.ptr(), nn::DistributedDataParallelOptions().bucket_cap_mb(25));
///   optim::Adam opt(model->named_parameters(), optim::AdamOptions(1e-3));
///   for (...) {                       // each rank its shard (data::DistributedRandomSampler)
///     Tensor loss = loss_fn(model(x), y);
///     loss.backward();                 // gradients averaged over ranks when this returns
///     opt.step(); opt.zero_grad();
///   }
///
/// C++ modules have typed forwards, so unlike PyTorch the wrapper does not forward: the
/// model is called directly; the wrapper only hooks its parameters.
///
/// What happens when:
/// - Construction: every parameter and buffer is broadcast from rank 0, so all ranks start
///   equal (the ranks must hold as many parameters and buffers, with the same shapes,
///   dtypes and requires_grad: checked, a DistError on every rank otherwise). Trainable
///   parameters are grouped into buckets in REVERSE registration order (parameters():
///   the order in which backward tends to finish them), one dtype per bucket, at most
///   bucket_cap_mb each (a parameter larger than the cap gets a bucket of its own).
///   PyTorch closes a bucket once it has reached the cap, so its buckets may exceed it
///   by one tensor; ours never do.
/// - Backward: a post-accumulate-grad hook on each trainable parameter marks it final.
///   When every parameter of a bucket is final, their .grad are copied into the bucket's
///   flat buffer and an all-reduce (average) of it starts, while backward goes on with
///   the layers below. Buckets start in bucket order on every rank (a ready bucket waits
///   for its predecessors: MPI needs the same collective order everywhere). Later hooks
///   test the started ones, so that MPI makes progress during backward.
/// - End of backward (a callback the first hook queues): buckets not yet started start
///   now (a parameter that got no gradient in this pass, unused in this rank's forward,
///   contributes its .grad as it is, zeros when undefined, so different ranks may leave
///   different parameters unused), every all-reduce is waited for, and the averages are
///   written back into each .grad (in place). A parameter with no .grad gets one when
///   some rank had one; when no rank had one it stays undefined, as in one process, and
///   optimizers skip it. Then, with broadcast_buffers, buffers are broadcast from rank 0
///   (after backward passes inside no_sync() too; b8 and i32 buffers go through i64).
///   PyTorch broadcasts them before each forward instead; after the broadcast at
///   construction both give every forward rank 0's buffers as left by its last forward
///   (a forward with no backward after it, e.g. in eval mode, is not followed by one).
/// - no_sync(): inside the guard, backward only accumulates into .grad locally; the
///   first backward after it averages the accumulated .grad. Averaging is linear and the
///   part of .grad averaged earlier is already equal on every rank, so
///   accumulate-then-average is exact (also when .grad is not zeroed between steps).
///
/// Rules (as PyTorch's):
/// - Every rank must run backward the same number of times, each reaching at least one
///   trainable parameter (the first hook starts the reduction), inside no_sync() on all
///   ranks or on none. A rank that skips a backward leaves the others waiting.
/// - Build the model completely (weight tying included) before wrapping it; parameters
///   registered or reassigned later are not seen.
/// - Not for backward(create_graph=true): the averaged .grad carries no graph.
/// - An exception that escapes backward after the reduction started leaves this wrapper
///   unusable (its next backward throws DistError): the ranks no longer agree on which
///   all-reduces ran. In a job, such an exception normally ends every rank anyway.
///
/// World size 1: nothing is broadcast, no hook is registered and no bucket buffer is
/// made; backward is the plain local backward (bucket_indices() still tells the
/// assignment).
///
/// find_unused_parameters is accepted for PyTorch compatibility and changes nothing:
/// parameters that got no gradient are always handled at the end of backward.
#include <cstdint>
#include <memory>
#include <vector>

#include "attograd/nn/module.h"

namespace ag::nn {

/// Bucket size and gradient-averaging choices of DistributedDataParallel.
struct DistributedDataParallelOptions {
  AG_ARG(double, bucket_cap_mb) = 25;            ///< MB = 2^20 bytes, as PyTorch
  AG_ARG(bool, broadcast_buffers) = true;        ///< buffers from rank 0 after each backward
  AG_ARG(bool, find_unused_parameters) = false;  ///< no effect (see above)
};

/// Data parallelism: every rank holds the whole model; gradients are averaged over ranks in buckets as backward produces them.
class DistributedDataParallel {
 public:
  struct Reducer;  ///< the buckets and the per-backward state (distributed_data_parallel.cpp)

  explicit DistributedDataParallel(std::shared_ptr<Module> module, const DistributedDataParallelOptions& options = {});
  /// Wraps module: broadcasts rank 0's parameters and hooks every parameter's gradient.
  template <class Impl>
  explicit DistributedDataParallel(const ModuleHolder<Impl>& module, const DistributedDataParallelOptions& options = {})
      : DistributedDataParallel(std::shared_ptr<Module>(module.ptr()), options) {}
  ~DistributedDataParallel();  ///< removes the hooks: the module trains locally again
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;
  /// Wraps module: broadcasts rank 0's parameters and hooks every parameter's gradient.
  DistributedDataParallel(DistributedDataParallel&&) noexcept;
  /// Moves the wrapper (the hooks follow).
  DistributedDataParallel& operator=(DistributedDataParallel&&) noexcept;

  /// The wrapped module.
  const std::shared_ptr<Module>& module() const { return module_; }
  /// The options it was made with.
  const DistributedDataParallelOptions& options() const { return options_; }

  /// RAII: backward passes while it lives accumulate .grad locally (gradient
  /// accumulation over micro-batches). Guards nest.
  class NoSyncGuard {
   public:
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    friend class DistributedDataParallel;
    explicit NoSyncGuard(Reducer* r);
    Reducer* r_;
    bool prev_;
  };
  ///   { auto guard = ddp.no_sync(); loss(micro_batch_1).backward(); }
  ///   loss(micro_batch_2).backward();   // averages the sum of both micro-batches
  [[nodiscard]] NoSyncGuard no_sync();

  /// The buckets, in the order their all-reduces start: indices into the trainable
  /// parameters (module()->parameters() without those not requiring grad).
  std::vector<std::vector<int64_t>> bucket_indices() const;

  /// Communication counters since construction or reset_comm_stats().
  struct CommStats {
    double wait_seconds = 0;  ///< time spent in Work::wait() at the end of backward
    /// Time spent in dist::all_reduce_async starting the buckets. ag::dist first checks with
    /// a small blocking all-reduce that the ranks agree on the collective, so this includes
    /// waiting for the slowest rank to reach the same bucket.
    double start_seconds = 0;
    int64_t reductions = 0;                ///< backward passes whose gradients were averaged
    int64_t buckets_started_in_hooks = 0;  ///< during backward: overlapping it
    int64_t buckets_started_at_end = 0;    ///< after backward's last node (unused parameters)
  };
  /// Bytes and all-reduce calls so far: how the buckets communicate.
  const CommStats& comm_stats() const;
  /// Cumulative seconds spent waiting for the all-reduces at the end of backward: the
  /// part of communication that computation did not hide (with start_seconds, the time
  /// a step loses to communication).
  double comm_wait_seconds() const { return comm_stats().wait_seconds; }
  /// Restarts the comm_stats counters.
  void reset_comm_stats();

 private:
  std::shared_ptr<Module> module_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<Reducer> reducer_;  ///< hooks point at it, so the wrapper can move
};

}  // namespace ag::nn
