// ag::dist on MPI: see attograd/dist.h. Built without MPI (ATTOGRAD_HAVE_MPI unset),
// or run without mpirun, the world is one process and every collective is the identity.
//
// Collectives are MPI's nonblocking ones (MPI_Iallreduce, ...) started on the calling
// thread, so an async collective overlaps whatever the caller computes next; the
// blocking forms are start + wait. A strided tensor is staged through a contiguous
// copy that wait() writes back.
#include "attograd/dist.h"

#include <attograd/log.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "kernels/kernels.h"
#include "kernels/views.h"

#if ATTOGRAD_HAVE_MPI
#include <mpi.h>
#endif

namespace ag::dist {

namespace {

struct World {
  bool mpi = false;  // MPI_Init was called by us and MPI_Finalize not yet
  int size = 1, rank = 0;
};
World g_world;
bool g_initialized = false;
std::terminate_handler g_prev_terminate = nullptr;

// mpirun (Open MPI) or another PMI launcher sets these for every rank it starts.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

std::string who() { return detail::cat("rank ", g_world.rank, " of ", g_world.size); }

[[noreturn]] void terminate_handler() {
  std::string what = "terminate called without an active exception";
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) { what = detail::cat("uncaught exception: ", ex.what()); } catch (...) {
      what = "uncaught exception of unknown type";
    }
  }
  abort(what, 134);
}

void check_dtype(const Tensor& t, const char* op) {
  AG_CHECK(t.defined(), ValueError, "dist::", op, ": the tensor is undefined");
  AG_CHECK(t.dtype() == DType::f32 || t.dtype() == DType::f64 || t.dtype() == DType::i64 || is_reduced_float(t.dtype()),
           DTypeError, "dist::", op, ": tensor of shape ", t.shape(), " has dtype ", t.dtype(),
           "; collectives take f32, f64, bf16, f16 or i64");
}

// The buffer a reduction runs on: bf16 / f16 are reduced in an f32 copy and rounded once
// into the tensor when it completes (the ops' rule: compute in f32, round once; MIN and
// MAX are exact either way). Gathers and broadcasts move 16-bit words as they are.
[[maybe_unused]] Tensor reduction_buffer(const Tensor& t) {
  return is_reduced_float(t.dtype()) ? kernels::convert(t, DType::f32) : kernels::contiguous(t);
}

// Divides a contiguous tensor in place by the world size (ReduceOp::AVG).
[[maybe_unused]] void divide_by_world(const Tensor& buf) {
  const int64_t n = buf.numel();
  const auto w = g_world.size;
  switch (buf.dtype()) {
    case DType::f32: {
      float* p = buf.data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<float>(w);
      break;
    }
    case DType::f64: {
      double* p = buf.data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] /= w;
      break;
    }
    default: {
      int64_t* p = buf.data<int64_t>();
      for (int64_t i = 0; i < n; ++i) p[i] /= w;
    }
  }
}

// Writes a staged result back into the caller's tensor (when it was strided) and marks
// the in-place write.
[[maybe_unused]] void write_back(const Tensor& staged, const Tensor& target) {
  if (staged.impl() != target.impl()) kernels::copy(staged, target);
  target.storage()->bump_version();
}

}  // namespace

struct Work::State {
#if ATTOGRAD_HAVE_MPI
  MPI_Request request = MPI_REQUEST_NULL;
#endif
  bool done = false;
  std::function<void()> finish;  // after completion: AVG division, write-back
};

namespace {

Work finished_work(std::function<void()> finish = {}) {
  auto s = std::make_shared<Work::State>();
  if (finish) finish();
  s->done = true;
  return Work(std::move(s));
}

#if ATTOGRAD_HAVE_MPI
void mpi_check(int rc, const char* op) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw DistError(detail::cat("dist::", op, " on ", who(), ": MPI error: ", std::string(msg, len)));
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::bf16:
    case DType::f16: return MPI_UINT16_T;  // moved, never reduced (reduction_buffer)
    default: return MPI_INT64_T;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG: return MPI_SUM;
    case ReduceOp::PRODUCT: return MPI_PROD;
    case ReduceOp::MIN: return MPI_MIN;
    default: return MPI_MAX;
  }
}

int count_of(const Tensor& t, const char* op) {
  AG_CHECK(t.numel() <= INT32_MAX, ValueError, "dist::", op, ": tensor of shape ", t.shape(), " has ", t.numel(),
           " elements; one MPI call moves at most ", INT32_MAX);
  return static_cast<int>(t.numel());
}

// Every rank must call the same collective with agreeing shapes: a mismatch would make
// MPI read or write past a buffer. One tiny all-reduce compares a fingerprint of
// (collective, dtype, shape) and throws on every rank, naming this rank's shape.
void check_agreement(const char* op, const Tensor& t, int64_t extra = 0) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const char* c = op; *c; ++c) mix(static_cast<unsigned char>(*c));
  mix(static_cast<uint64_t>(t.dtype()));
  for (int64_t d : t.shape()) mix(static_cast<uint64_t>(d));
  mix(static_cast<uint64_t>(extra));
  int64_t v[2] = {static_cast<int64_t>(h >> 1), -static_cast<int64_t>(h >> 1)};
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), op);
  AG_CHECK(v[0] == -v[1], DistError, "dist::", op, " on ", who(),
           ": the ranks disagree on the "
           "collective, its dtype or its shape (this rank: ",
           t.dtype(), " ", t.shape(), "); every rank must call the same collectives in the same order");
}

Work started(MPI_Request req, std::function<void()> finish) {
  auto s = std::make_shared<Work::State>();
  s->request = req;
  s->finish = std::move(finish);
  return Work(std::move(s));
}
#endif

bool one_process() { return g_world.size == 1; }

}  // namespace

// ---- setup ----
bool is_available() { return ATTOGRAD_HAVE_MPI != 0; }

void init(int* argc, char*** argv) {
  if (is_initialized()) return;
#if ATTOGRAD_HAVE_MPI
  int already = 0;
  MPI_Initialized(&already);
  if (already || launched_by_mpirun()) {
    if (!already) {
      int provided = 0;
      mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "init");
      g_world.mpi = true;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
    // Errors come back as codes (mpi_check throws) rather than aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
#else
  (void)argc;
  (void)argv;
  if (launched_by_mpirun() && std::getenv("OMPI_COMM_WORLD_RANK") &&
      std::string(std::getenv("OMPI_COMM_WORLD_RANK")) == "0")
    log().warn(
        "dist: started by mpirun, but attograd was built without MPI: every process "
        "runs alone as a world of one");
#endif
  g_prev_terminate = std::set_terminate(terminate_handler);
  g_initialized = true;
}

bool is_initialized() { return g_initialized; }

void finalize() {
  if (!is_initialized()) return;
#if ATTOGRAD_HAVE_MPI
  if (g_world.mpi) MPI_Finalize();
#endif
  std::set_terminate(g_prev_terminate);
  g_initialized = false;
  g_world = World{};
}

void abort(const std::string& message, int code) {
  // spdlog may be mid-teardown when terminate runs; stderr always works.
  std::fprintf(stderr, "attograd: %s: %s; ending the job\n", who().c_str(), message.c_str());
  std::fflush(stderr);
#if ATTOGRAD_HAVE_MPI
  if (g_world.mpi) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

InitGuard::~InitGuard() {
  if (std::uncaught_exceptions() > 0 && world_size() > 1) abort("an exception is leaving the scope of dist::InitGuard");
  finalize();
}

int world_size() { return g_world.size; }
int rank() { return g_world.rank; }
int local_rank() {
  const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return s && g_world.size > 1 ? std::atoi(s) : 0;
}

// ---- Work ----
void Work::wait() {
  if (!s_ || s_->done) return;
#if ATTOGRAD_HAVE_MPI
  mpi_check(MPI_Wait(&s_->request, MPI_STATUS_IGNORE), "wait");
#endif
  s_->done = true;
  if (s_->finish) s_->finish();
}

bool Work::is_completed() {
  if (!s_ || s_->done) return true;
#if ATTOGRAD_HAVE_MPI
  int flag = 0;
  mpi_check(MPI_Test(&s_->request, &flag, MPI_STATUS_IGNORE), "is_completed");
  if (!flag) return false;
#endif
  s_->done = true;
  if (s_->finish) s_->finish();
  return true;
}

// ---- collectives ----
Work all_reduce_async(Tensor& tensor, ReduceOp op, bool check) {
  check_dtype(tensor, "all_reduce");
  if (one_process()) return finished_work();
#if ATTOGRAD_HAVE_MPI
  if (check) check_agreement("all_reduce", tensor, static_cast<int64_t>(op));
  Tensor buf = reduction_buffer(tensor);
  Tensor target = tensor;
  MPI_Request req;
  mpi_check(MPI_Iallreduce(MPI_IN_PLACE, buf.raw_data(), count_of(buf, "all_reduce"), mpi_type(buf.dtype()), mpi_op(op),
                           MPI_COMM_WORLD, &req),
            "all_reduce");
  return started(req, [buf, target, op] {
    if (op == ReduceOp::AVG) divide_by_world(buf);
    write_back(buf, target);
  });
#else
  (void)op, (void)check;
  return finished_work();
#endif
}

void all_reduce(Tensor& tensor, ReduceOp op) { all_reduce_async(tensor, op).wait(); }

Work broadcast_async(Tensor& tensor, int src) {
  check_dtype(tensor, "broadcast");
  AG_CHECK(src >= 0 && src < world_size(), ValueError, "dist::broadcast: src ", src, " is not a rank of a world of ",
           world_size());
  if (one_process()) return finished_work();
#if ATTOGRAD_HAVE_MPI
  check_agreement("broadcast", tensor, src);
  Tensor buf = kernels::contiguous(tensor);
  Tensor target = tensor;
  MPI_Request req;
  mpi_check(MPI_Ibcast(buf.raw_data(), count_of(buf, "broadcast"), mpi_type(buf.dtype()), src, MPI_COMM_WORLD, &req),
            "broadcast");
  return started(req, [buf, target] { write_back(buf, target); });
#else
  return finished_work();
#endif
}

void broadcast(Tensor& tensor, int src) { broadcast_async(tensor, src).wait(); }

namespace {

// output (world * n, ...) against input (n, ...): ShapeError naming both.
void check_gathered(const char* op, const Tensor& big, const Tensor& small) {
  bool ok = big.dtype() == small.dtype() && big.dim() == small.dim() && big.dim() >= 1;
  for (int64_t d = 1; ok && d < big.dim(); ++d) ok = big.size(d) == small.size(d);
  ok = ok && big.size(0) == small.size(0) * world_size();
  AG_CHECK(ok, ShapeError, "dist::", op, ": the larger tensor ", big.dtype(), " ", big.shape(), " must be the smaller ",
           small.dtype(), " ", small.shape(), " with dim 0 times the world size ", world_size());
}

}  // namespace

Work all_gather_into_tensor_async(Tensor& output, const Tensor& input) {
  check_dtype(input, "all_gather_into_tensor");
  check_dtype(output, "all_gather_into_tensor");
  check_gathered("all_gather_into_tensor", output, input);
  if (one_process()) return finished_work([&] { write_back(kernels::contiguous(input), output); });
#if ATTOGRAD_HAVE_MPI
  check_agreement("all_gather_into_tensor", input);
  Tensor in = kernels::contiguous(input);
  Tensor out = output.is_contiguous() ? output : kernels::empty(output.shape(), output.dtype());
  Tensor target = output;
  const int n = count_of(in, "all_gather_into_tensor");
  count_of(out, "all_gather_into_tensor");
  MPI_Request req;
  mpi_check(MPI_Iallgather(in.raw_data(), n, mpi_type(in.dtype()), out.raw_data(), n, mpi_type(in.dtype()),
                           MPI_COMM_WORLD, &req),
            "all_gather_into_tensor");
  return started(req, [in, out, target] { write_back(out, target); });
#else
  return finished_work();
#endif
}

void all_gather_into_tensor(Tensor& output, const Tensor& input) { all_gather_into_tensor_async(output, input).wait(); }

void all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor) {
  check_dtype(tensor, "all_gather");
  Shape big = tensor.shape();
  big.insert(0, world_size());
  Tensor out = kernels::empty(big, tensor.dtype(), "dist::all_gather");
  Tensor in = kernels::unsqueeze_view(tensor, 0);
  all_gather_into_tensor(out, in);
  tensor_list.assign(static_cast<std::size_t>(world_size()), Tensor());
  for (int r = 0; r < world_size(); ++r) tensor_list[static_cast<std::size_t>(r)] = kernels::select_view(out, 0, r);
}

Work reduce_scatter_tensor_async(Tensor& output, const Tensor& input, ReduceOp op) {
  check_dtype(input, "reduce_scatter_tensor");
  check_dtype(output, "reduce_scatter_tensor");
  check_gathered("reduce_scatter_tensor", input, output);
  if (one_process()) return finished_work([&] { write_back(kernels::contiguous(input), output); });
#if ATTOGRAD_HAVE_MPI
  check_agreement("reduce_scatter_tensor", input, static_cast<int64_t>(op));
  Tensor in = reduction_buffer(input);
  Tensor out =
      output.is_contiguous() && in.dtype() == output.dtype() ? output : kernels::empty(output.shape(), in.dtype());
  Tensor target = output;
  MPI_Request req;
  mpi_check(MPI_Ireduce_scatter_block(in.raw_data(), out.raw_data(), count_of(out, "reduce_scatter_tensor"),
                                      mpi_type(in.dtype()), mpi_op(op), MPI_COMM_WORLD, &req),
            "reduce_scatter_tensor");
  return started(req, [in, out, target, op] {
    if (op == ReduceOp::AVG) divide_by_world(out);
    write_back(out, target);
  });
#else
  (void)op;
  return finished_work();
#endif
}

void reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) {
  reduce_scatter_tensor_async(output, input, op).wait();
}

void reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op) {
  check_dtype(output, "reduce_scatter");
  AG_CHECK(static_cast<int64_t>(input_list.size()) == world_size(), ValueError,
           "dist::reduce_scatter: ", input_list.size(), " input tensors for a world of ", world_size());
  Shape big = output.shape();
  big.insert(0, world_size());
  Tensor in = kernels::empty(big, output.dtype(), "dist::reduce_scatter");
  for (int r = 0; r < world_size(); ++r) {
    const Tensor& t = input_list[static_cast<std::size_t>(r)];
    check_dtype(t, "reduce_scatter");
    AG_CHECK(t.shape() == output.shape() && t.dtype() == output.dtype(), ShapeError, "dist::reduce_scatter: input ", r,
             " is ", t.dtype(), " ", t.shape(), ", output is ", output.dtype(), " ", output.shape());
    kernels::copy(t, kernels::select_view(in, 0, r));
  }
  Tensor out = kernels::unsqueeze_view(output, 0);
  reduce_scatter_tensor(out, in, op);
  output.storage()->bump_version();
}

void barrier() {
  if (one_process()) return;
#if ATTOGRAD_HAVE_MPI
  mpi_check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
#endif
}

}  // namespace ag::dist
