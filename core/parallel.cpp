#include "attograd/detail/parallel.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "attograd/error.h"
#include "attograd/runtime.h"

namespace ag::detail {
namespace {

// Parts are claimed, not assigned: the caller and the workers take the next unclaimed
// part until none is left, so a worker that the OS has not scheduled yet (a loaded or
// shared machine) costs no waiting: the caller runs its part as well. `claim_` packs the
// job's generation (high 32 bits) with the next part (low 32 bits), so a worker that
// wakes late can never take a part of a newer job with an older job's function.
class Pool {
 public:
  // A thread the OS refuses to start (std::system_error) must not escape untyped, nor
  // leave the started ones joinable (std::terminate): stop them, then raise MemoryError.
  explicit Pool(int workers) {
    try {
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
    } catch (const std::exception& e) {
      const auto started = threads_.size();
      stop_all();
      AG_CHECK(false, MemoryError, "set_num_threads: could not start worker thread ", started + 1, " of ", workers,
               ": ", e.what());
    }
  }
  ~Pool() { stop_all(); }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void stop_all() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // Runs chunk(0..parts-1), on the caller and whichever workers come; returns when all are done.
  void run(int parts, const std::function<void(int)>& chunk) {
    uint32_t gen;
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = &chunk;
      parts_ = parts;
      pending_.store(parts, std::memory_order_relaxed);
      error_ = nullptr;
      gen = ++generation_;
      claim_.store(uint64_t{gen} << 32, std::memory_order_release);
    }
    wake_.notify_all();
    work(gen, parts, chunk);
    spin_while([&] { return pending_.load(std::memory_order_acquire) != 0; });
    if (pending_.load(std::memory_order_acquire) != 0) {
      std::unique_lock<std::mutex> lk(mu_);
      done_.wait(lk, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    std::lock_guard<std::mutex> lk(mu_);
    job_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  // Waits up to kSpin for `busy` to turn false before a caller falls back to its
  // condition variable: a training step's parallel regions come microseconds apart, and
  // a futex wake-up costs tens of microseconds on a shared machine (measured: a 262k-
  // element add at 2 threads took 55-78 us against 33 us on one).
  template <class Busy>
  static void spin_while(Busy busy) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0; busy(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return;
    }
  }
  static constexpr std::chrono::microseconds kSpin{50};

  // Claims and runs parts of job `gen` until none is left.
  void work(uint32_t gen, int parts, const std::function<void(int)>& chunk) {
    for (;;) {
      uint64_t c = claim_.load(std::memory_order_acquire);
      int part;
      do {
        part = static_cast<int>(c & 0xffffffffu);
        if (static_cast<uint32_t>(c >> 32) != gen || part >= parts) return;
      } while (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel));
      try {
        chunk(part);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lk(mu_);  // the caller may be about to wait
        done_.notify_one();
      }
    }
  }

  void loop() {
    uint32_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job;
      int parts;
      spin_while([&] { return static_cast<uint32_t>(claim_.load(std::memory_order_acquire) >> 32) == seen; });
      {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
        parts = parts_;
      }
      // job stays alive while a part of generation `seen` is unclaimed or running.
      if (job) work(seen, parts, *job);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;  // guarded by mu_
  int parts_ = 0;                                  // guarded by mu_
  uint32_t generation_ = 0;                        // guarded by mu_
  bool stop_ = false;
  std::exception_ptr error_;  // guarded by mu_
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> pending_{0};
};

std::mutex g_pool_mu;
std::unique_ptr<Pool> g_pool;
thread_local bool t_inside = false;  // no nested parallelism from inside a chunk

}  // namespace

bool in_parallel_region() { return t_inside; }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int threads = get_num_threads();
  int64_t parts = std::min<int64_t>(threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
  if (parts <= 1 || t_inside) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> one_job(g_pool_mu);  // one parallel region at a time
  if (!g_pool || g_pool->size() != threads) g_pool = std::make_unique<Pool>(threads - 1);
  auto chunk = [&](int p) {
    t_inside = true;
    int64_t b = n * p / parts, e = n * (p + 1) / parts;
    try {
      if (b < e) fn(b, e);
    } catch (...) {
      t_inside = false;
      throw;
    }
    t_inside = false;
  };
  g_pool->run(static_cast<int>(parts), chunk);
}

}  // namespace ag::detail
