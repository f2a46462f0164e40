// nn::DistributedDataParallel: see attograd/nn/distributed.h. The Reducer (PyTorch's
// name for the part of DDP that owns the buckets) lives behind a pointer that the
// parameters' hooks capture, so the wrapper itself can move.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "attograd/autograd.h"
#include "attograd/dist.h"
#include "attograd/factory.h"
#include "attograd/nn/distributed.h"

namespace ag::nn {

namespace {

bool collective_dtype(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::i64; }

// In place from rank 0. Dtypes the collectives do not take (b8, i32 buffers such as
// masks) go through an i64 copy.
void broadcast_from_rank0(Tensor& t) {
  NoGradGuard no_grad;
  if (collective_dtype(t.dtype())) {
    dist::broadcast(t, 0);
    return;
  }
  Tensor staged = t.to(DType::i64);
  dist::broadcast(staged, 0);
  if (dist::rank() != 0) t.copy_(staged);
}

// The ranks must wrap the same model: one fingerprint of every parameter's and
// buffer's dtype, shape and trainability, and of the bucket cap, compared with one tiny
// all-reduce (max of h and of -h), so every rank throws together instead of some of them
// waiting in a collective that others never start.
void check_same_model(const std::vector<Tensor>& params, const std::vector<Tensor>& buffers, int64_t cap_bytes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  auto mix_tensor = [&](const Tensor& t) {
    mix(static_cast<uint64_t>(t.dtype()));
    mix(static_cast<uint64_t>(t.requires_grad()));
    mix(static_cast<uint64_t>(t.dim()));
    for (int64_t d : t.shape()) mix(static_cast<uint64_t>(d));
  };
  mix(params.size());
  for (const Tensor& p : params) mix_tensor(p);
  mix(buffers.size());
  for (const Tensor& b : buffers) mix_tensor(b);
  mix(static_cast<uint64_t>(cap_bytes));
  Tensor v = Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(h >> 1), -static_cast<int64_t>(h >> 1)});
  dist::all_reduce(v, dist::ReduceOp::MAX);
  auto m = v.to_vector<int64_t>();
  AG_CHECK(m[0] == -m[1], DistError, "DistributedDataParallel: the ranks wrap different models (rank ", dist::rank(),
           " has ", params.size(), " parameters, ", buffers.size(),
           " buffers); every rank must build the same model and pass the same bucket_cap_mb");
}

// Intentionally leaked: all-reduces of an abandoned backward that may still write into
// their buffers (each Work keeps its buffer alive) when the wrapper is destroyed.
std::vector<dist::Work>& abandoned_works() {
  static auto* works = new std::vector<dist::Work>;
  return *works;
}

}  // namespace

struct DistributedDataParallel::Reducer {
  struct Bucket {
    DType dtype = DType::f32;
    std::vector<int64_t> params;   // indices into Reducer::params, in reverse registration order
    std::vector<int64_t> offsets;  // where each parameter's gradient starts in flat
    int64_t numel = 0;             // gradient elements; one flag per parameter follows
    Tensor flat;                   // (numel + params.size(),), only when world_size() > 1
    int64_t pending = 0;           // parameters not final yet in this pass
    std::optional<dist::Work> work;
  };

  std::vector<Tensor> params;  // trainable, in parameters() order
  std::vector<Tensor> buffers;
  std::vector<int64_t> bucket_of;  // per parameter
  std::vector<char> is_final;      // per parameter, in this pass
  std::vector<Bucket> buckets;     // in start order
  std::vector<RemovableHandle> handles;
  bool broadcast_buffers = true;
  bool require_sync = true;  // false inside no_sync()
  CommStats stats;

  // The backward pass now running (from its first hook to the queued callback).
  bool in_pass = false;
  bool pass_syncs = false;  // gradients are averaged in this pass (not under no_sync)
  std::size_t next_start = 0;
  bool broken = false;  // a pass was abandoned by an exception

  ~Reducer() {
    for (auto& h : handles) h.remove();
    for (auto& b : buckets)
      if (b.work && !b.work->is_completed()) abandoned_works().push_back(*b.work);
  }

  void assign_buckets(int64_t cap_bytes) {
    std::map<DType, std::size_t> open;  // the bucket still filling, per dtype
    bucket_of.assign(params.size(), 0);
    for (int64_t i = static_cast<int64_t>(params.size()) - 1; i >= 0; --i) {
      const Tensor& p = params[static_cast<std::size_t>(i)];
      const int64_t bytes = p.numel() * static_cast<int64_t>(itemsize(p.dtype()));
      auto it = open.find(p.dtype());
      if (it != open.end() &&
          buckets[it->second].numel * static_cast<int64_t>(itemsize(p.dtype())) + bytes > cap_bytes) {
        open.erase(it);  // full: the next parameter of this dtype opens a new bucket
        it = open.end();
      }
      if (it == open.end()) {
        buckets.emplace_back();
        buckets.back().dtype = p.dtype();
        it = open.emplace(p.dtype(), buckets.size() - 1).first;
      }
      Bucket& b = buckets[it->second];
      b.params.push_back(i);
      b.offsets.push_back(b.numel);
      b.numel += p.numel();
      bucket_of[static_cast<std::size_t>(i)] = static_cast<int64_t>(it->second);
    }
    is_final.assign(params.size(), 0);
  }

  Tensor slot(const Bucket& b, std::size_t k) const {  // parameter k's place in flat, its shape
    const Tensor& p = params[static_cast<std::size_t>(b.params[k])];
    return b.flat.narrow(0, b.offsets[k], p.numel()).view(p.shape());
  }

  // Broadcasts the trainable parameters from rank 0 through the bucket buffers (one
  // collective per bucket).
  void broadcast_params() {
    NoGradGuard no_grad;
    for (Bucket& b : buckets) {
      for (std::size_t k = 0; k < b.params.size(); ++k) slot(b, k).copy_(params[static_cast<std::size_t>(b.params[k])]);
      dist::broadcast(b.flat, 0);
      if (dist::rank() != 0)
        for (std::size_t k = 0; k < b.params.size(); ++k)
          params[static_cast<std::size_t>(b.params[k])].copy_(slot(b, k));
    }
  }

  // ---- one backward pass ----
  // The hook of parameter i: its .grad is final for this pass.
  void on_final(int64_t i) {
    AG_CHECK(!broken, DistError,
             "DistributedDataParallel: an earlier backward was ended by an exception after "
             "it had started averaging gradients; the ranks may disagree on which all-reduces ran, so this "
             "wrapper cannot average again (restart from a checkpoint)");
    if (!in_pass) {
      const bool buffers_only = !require_sync;  // under no_sync(): only buffers to broadcast
      if (buffers_only && !(broadcast_buffers && !buffers.empty())) return;
      begin_pass();
    }
    if (!pass_syncs) return;
    auto& done = is_final[static_cast<std::size_t>(i)];
    if (done) return;
    done = 1;
    if (--buckets[static_cast<std::size_t>(bucket_of[static_cast<std::size_t>(i)])].pending == 0) {
      for (; next_start < buckets.size() && buckets[next_start].pending == 0; ++next_start) {
        start(buckets[next_start]);
        ++stats.buckets_started_in_hooks;
      }
    }
    for (std::size_t b = 0; b < next_start; ++b) buckets[b].work->is_completed();  // MPI progress
  }

  // Destroyed with the queued callback: if that never ran to its end, backward threw.
  struct PassWatch {
    explicit PassWatch(Reducer* r) : r(r) {}
    ~PassWatch() {
      if (!finished) r->abandon();
    }
    Reducer* r;
    bool finished = false;
  };

  void begin_pass() {
    in_pass = true;
    pass_syncs = require_sync;
    next_start = 0;
    std::fill(is_final.begin(), is_final.end(), 0);
    for (Bucket& b : buckets) b.pending = static_cast<int64_t>(b.params.size());
    auto watch = std::make_shared<PassWatch>(this);
    queue_callback([this, watch] {
      finish_pass();
      watch->finished = true;
    });
  }

  void abandon() {
    in_pass = false;
    if (next_start > 0) broken = true;  // some all-reduces started: ranks may now differ
    for (Bucket& b : buckets)
      if (b.work && !b.work->is_completed()) abandoned_works().push_back(*b.work);
    for (Bucket& b : buckets) b.work.reset();
  }

  // Copies the bucket's .grad (zeros where undefined) and one flag per parameter (1: this
  // rank has a .grad) into flat, and starts averaging it.
  void start(Bucket& b) {
    NoGradGuard no_grad;
    for (std::size_t k = 0; k < b.params.size(); ++k) {
      Tensor g = params[static_cast<std::size_t>(b.params[k])].grad();
      Tensor s = slot(b, k);
      if (g.defined())
        s.copy_(g);
      else
        s.zero_();
      b.flat.narrow(0, b.numel + static_cast<int64_t>(k), 1).fill_(g.defined() ? 1.0 : 0.0);
    }
    const auto t0 = std::chrono::steady_clock::now();
    // The buckets were compared across ranks at construction: no per-bucket check.
    b.work = dist::all_reduce_async(b.flat, dist::ReduceOp::AVG, /*check_agreement=*/false);
    stats.start_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void finish_pass() {
    if (pass_syncs) {
      for (; next_start < buckets.size(); ++next_start) {
        start(buckets[next_start]);
        ++stats.buckets_started_at_end;
      }
      const auto t0 = std::chrono::steady_clock::now();
      for (Bucket& b : buckets) b.work->wait();
      stats.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      NoGradGuard no_grad;
      for (Bucket& b : buckets) {
        b.work.reset();
        for (std::size_t k = 0; k < b.params.size(); ++k) {
          Tensor& p = params[static_cast<std::size_t>(b.params[k])];
          Tensor g = p.grad();
          if (g.defined()) {
            g.copy_(slot(b, k));
          } else if (b.flat.narrow(0, b.numel + static_cast<int64_t>(k), 1).item<double>() > 0) {
            p.set_grad(slot(b, k).clone());  // some rank had a gradient, this one none
          }
        }
      }
      ++stats.reductions;
    }
    if (broadcast_buffers)
      for (Tensor& t : buffers) broadcast_from_rank0(t);
    in_pass = false;
  }
};

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 const DistributedDataParallelOptions& options)
    : module_(std::move(module)), options_(options), reducer_(std::make_unique<Reducer>()) {
  AG_CHECK(module_ != nullptr, ValueError, "DistributedDataParallel: the module is null");
  AG_CHECK(options.bucket_cap_mb() > 0, ValueError, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
           options.bucket_cap_mb());
  Reducer& r = *reducer_;
  r.broadcast_buffers = options.broadcast_buffers();
  std::vector<Tensor> all = module_->parameters(), frozen;
  for (Tensor& p : all) (p.requires_grad() ? r.params : frozen).push_back(p);
  for (auto& [name, b] : module_->named_buffers()) r.buffers.push_back(b);
  const auto cap_bytes = static_cast<int64_t>(options.bucket_cap_mb() * 1024 * 1024);
  r.assign_buckets(cap_bytes);
  if (dist::world_size() == 1) return;  // a world of one: nothing to average or broadcast

  check_same_model(all, r.buffers, cap_bytes);
  for (auto& b : r.buckets) {
    AG_CHECK(b.dtype == DType::f32 || b.dtype == DType::f64, DTypeError,
             "DistributedDataParallel: parameters of dtype ", b.dtype, " cannot be averaged (f32 or f64)");
    b.flat = zeros({b.numel + static_cast<int64_t>(b.params.size())}, b.dtype);
  }
  r.broadcast_params();
  for (Tensor& p : frozen) broadcast_from_rank0(p);
  for (Tensor& b : r.buffers) broadcast_from_rank0(b);
  for (std::size_t i = 0; i < r.params.size(); ++i)
    r.handles.push_back(r.params[i].register_post_accumulate_grad_hook(
        [rp = &r, i = static_cast<int64_t>(i)](Tensor&) { rp->on_final(i); }));
}

DistributedDataParallel::~DistributedDataParallel() = default;
DistributedDataParallel::DistributedDataParallel(DistributedDataParallel&&) noexcept = default;
DistributedDataParallel& DistributedDataParallel::operator=(DistributedDataParallel&&) noexcept = default;

DistributedDataParallel::NoSyncGuard::NoSyncGuard(Reducer* r) : r_(r), prev_(r->require_sync) {
  r->require_sync = false;
}
DistributedDataParallel::NoSyncGuard::~NoSyncGuard() { r_->require_sync = prev_; }

DistributedDataParallel::NoSyncGuard DistributedDataParallel::no_sync() { return NoSyncGuard(reducer_.get()); }

std::vector<std::vector<int64_t>> DistributedDataParallel::bucket_indices() const {
  std::vector<std::vector<int64_t>> out;
  for (auto& b : reducer_->buckets) out.push_back(b.params);
  return out;
}

const DistributedDataParallel::CommStats& DistributedDataParallel::comm_stats() const { return reducer_->stats; }

void DistributedDataParallel::reset_comm_stats() { reducer_->stats = {}; }

}  // namespace ag::nn
