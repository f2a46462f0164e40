#pragma once
/// \file
/// ag::dist: processes working together on MPI (Open MPI from Debian, started with
/// mpirun), with the names of torch.distributed. One process group, MPI_COMM_WORLD.
///
///   int main(int argc, char** argv) {
///     ag::dist::InitGuard dist(&argc, &argv);   // MPI_Init ... MPI_Finalize
///     Tensor g = ...;
///     ag::dist::all_reduce(g, ag::dist::ReduceOp::AVG);
///   }
///
///   mpirun -np 2 build/examples/copy_task --ddp
///
/// Without mpirun (or in a build without MPI) the world is one process: world_size() is
/// 1, rank() is 0 and every collective leaves its tensors as they are, so the same
/// binary runs both ways. Collectives take f32, f64, bf16, f16 and i64 tensors,
/// contiguous or strided (strided ones go through a contiguous copy and are written back
/// in place, bumping the storage version as any in-place write does); bf16 / f16
/// reductions run on an f32 copy and round once. Every rank must call the
/// same collectives in the same order with the same shapes; shapes are checked across
/// ranks only where the collective needs them to agree (ShapeError names both).
///
/// Failures: an exception that leaves main on one rank (std::terminate) or a rank that
/// dies ends the whole job: the terminate handler installed by init() logs
/// "rank R of N: ..." and calls MPI_Abort, and mpirun kills every other rank.
/// Differentiable collectives for model parallelism are in <attograd/ops/distributed.h>.
#include <cstdint>
#include <memory>
#include <vector>

#include "attograd/tensor.h"

namespace ag::dist {

/// torch.distributed.ReduceOp. AVG is SUM then division by world_size (integers:
/// truncating division, as PyTorch's).
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

/// True when attograd was built with MPI (CMake found it); false means one process.
bool is_available();
/// Starts MPI once per process (MPI_THREAD_FUNNELED: only the thread that called init
/// talks to MPI) and installs the terminate handler. Later calls do nothing. Without
/// mpirun MPI still starts, as a world of one.
void init(int* argc = nullptr, char*** argv = nullptr);
/// True between InitGuard's constructor and destructor.
bool is_initialized();
/// Waits for outstanding work and finalizes MPI. The InitGuard calls it.
void finalize();
/// Ends every rank of the job at once (MPI_Abort), after logging `message` with this
/// rank's number; for an error one rank cannot recover from.
[[noreturn]] void abort(const std::string& message, int code = 1);

/// RAII for MPI: initializes on construction, finalizes on destruction (aborts the job when unwinding).
class InitGuard {  // RAII: init() now, finalize() at scope exit
 public:
  /// Initializes MPI (argc/argv may be null) unless already initialized.
  explicit InitGuard(int* argc = nullptr, char*** argv = nullptr) { init(argc, argv); }
  ~InitGuard();  ///< during stack unwinding from an exception: abort() the job, not finalize
  InitGuard(const InitGuard&) = delete;
  InitGuard& operator=(const InitGuard&) = delete;
};

/// Before init() these answer for a world of one.
int world_size();
/// This process's rank in [0, world_size()); 0 without MPI.
int rank();
/// Rank among the processes on this machine (OMPI_COMM_WORLD_LOCAL_RANK; 0 without mpirun).
int local_rank();

/// A collective started by an *_async call. wait() blocks until it is done and the
/// results are in the caller's tensors; it rethrows the collective's error. Tensors
/// given to an async call must not be read or written until wait() returns.
class Work {
 public:
  struct State;
  /// Wraps a started request (made by the *_async collectives).
  explicit Work(std::shared_ptr<State> s) : s_(std::move(s)) {}
  /// Blocks until the collective has finished; the tensors are then valid.
  void wait();
  bool is_completed();  ///< tests for completion without blocking (and makes MPI progress)

 private:
  std::shared_ptr<State> s_;
};

/// In place on every rank: tensor = op over all ranks' tensors.
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM);
/// Before it starts, a collective compares (collective, dtype, shape) across ranks with
/// one small blocking all-reduce, which also waits for the slowest rank to get there.
/// A caller that has checked once for a fixed sequence of collectives (DDP compares its
/// buckets at construction) passes check_agreement = false and starts at once.
Work all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool check_agreement = true);
/// In place: every rank receives src's tensor (same shape and dtype everywhere).
void broadcast(Tensor& tensor, int src = 0);
/// Copies rank src's tensor into every rank's `tensor` (same shape and dtype).
Work broadcast_async(Tensor& tensor, int src = 0);
/// tensor_list[r] = rank r's tensor; the list is resized to world_size() and its entries
/// are made fresh (shape and dtype of `tensor`, which must agree across ranks).
void all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor);
/// output (world_size * n, ...) = rank tensors of shape (n, ...) concatenated along dim 0
/// (torch.distributed.all_gather_into_tensor).
void all_gather_into_tensor(Tensor& output, const Tensor& input);
/// input (n, ...) from every rank -> output (p * n, ...), rank order.
Work all_gather_into_tensor_async(Tensor& output, const Tensor& input);
/// output = op over ranks of input_list[rank()] (every list has world_size() tensors of
/// output's shape).
void reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op = ReduceOp::SUM);
/// output (n, ...) = op over ranks of this rank's block of input (world_size * n, ...)
/// along dim 0 (torch.distributed.reduce_scatter_tensor).
void reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM);
/// Reduces input (p * n, ...) over ranks; rank r gets block r in output (n, ...).
Work reduce_scatter_tensor_async(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM);
/// Returns when every rank has called it.
void barrier();

}  // namespace ag::dist
