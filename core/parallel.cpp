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

// Each part has a home: part 0 the caller, part i worker i. A thread first claims its
// home part, then any part still unclaimed, so a worker that the OS has not scheduled yet
// (a loaded or shared machine) costs no waiting: the caller runs its part as well. With
// every thread on time, the same thread computes the same rows of a product at every
// step, so its core's cache keeps them (where the parts were taken in turn, the caller and
// the worker swapped halves whenever the spinning worker won the race for part 0).
//
// The hand-off is lock-free while the workers spin: the caller publishes the job with one
// store (`current_`: generation in the high 48 bits, parts in the low 16), each part is
// claimed by a compare-and-swap on its own slot, and the last part done is seen through
// `pending_`. The mutex and the condition variables are only for threads that stopped
// spinning (`sleepers_`, `caller_waiting_` say whether anyone needs the notify), where
// the mutex was taken three times per region before.
class Pool {
 public:
  // A thread the OS refuses to start (std::system_error) must not escape untyped, nor
  // leave the started ones joinable (std::terminate): stop them, then raise MemoryError.
  explicit Pool(int workers) : slots_(static_cast<std::size_t>(workers) + 1) {
    AG_CHECK(workers >= 0 && static_cast<uint64_t>(workers) < kPartMask, ValueError, "parallel_for: a pool of at most ",
             kPartMask, " threads, got ", workers + 1);
    try {
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
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
      stop_.store(true, std::memory_order_seq_cst);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // Runs chunk(0..parts-1) (parts <= size()), on the caller and whichever workers come;
  // returns when all are done. One run at a time (parallel_for's lock).
  void run(int parts, const std::function<void(int)>& chunk) {
    job_.store(&chunk, std::memory_order_relaxed);  // published by current_'s store
    pending_.store(parts, std::memory_order_relaxed);
    const uint64_t gen = ++generation_;
    current_.store(gen << kPartBits | static_cast<uint64_t>(parts), std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lk(mu_);
      wake_.notify_all();
    }
    work(gen, parts, 0);
    spin_while([&] { return pending_.load(std::memory_order_acquire) != 0; });
    if (pending_.load(std::memory_order_acquire) != 0) {
      std::unique_lock<std::mutex> lk(mu_);
      caller_waiting_.store(true, std::memory_order_seq_cst);
      done_.wait(lk, [this] { return pending_.load(std::memory_order_seq_cst) == 0; });
      caller_waiting_.store(false, std::memory_order_relaxed);
    }
    if (failed_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lk(mu_);
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
  }

 private:
  // Waits up to kSpin for `busy` to turn false before a thread falls back to its
  // condition variable: a step's parallel regions come microseconds apart, and a futex
  // wake-up costs tens of microseconds on a shared machine (measured: a 262k-element add
  // at 2 threads took 55-78 us against 33 us on one).
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
  static constexpr int kPartBits = 16;  // parts <= threads <= kMaxThreads (runtime.h)
  static constexpr uint64_t kPartMask = (uint64_t{1} << kPartBits) - 1;

  // Claims and runs parts of job `gen`: first_part(home) first, then the others in turn.
  void work(uint64_t gen, int parts, int home) {
    const int first = first_part(home, parts);
    for (int i = 0; i < parts; ++i) {
      const int part = (first + i) % parts;
      if ((current_.load(std::memory_order_acquire) >> kPartBits) != gen) return;
      // A slot holds the job that claimed it last: a worker late from an older job (its
      // gen not past the slot's) must neither take nor release a newer job's part. 48 bits
      // of jobs do not wrap (a billion a second would take 3 days to pass 2^48).
      auto& slot = slots_[static_cast<std::size_t>(part)].gen;
      uint64_t seen = slot.load(std::memory_order_relaxed);
      if (seen >= gen || !slot.compare_exchange_strong(seen, gen, std::memory_order_acq_rel)) continue;
      // A part of job gen is claimed and not done, so the job (and job_) is still gen's.
      try {
        (*job_.load(std::memory_order_relaxed))(part);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
      }
      if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_waiting_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> lk(mu_);
        done_.notify_one();
      }
    }
  }

  void loop(int home) {
    uint64_t seen = 0;
    auto gen_of = [](uint64_t c) { return c >> kPartBits; };
    for (;;) {
      spin_while([&] {
        return gen_of(current_.load(std::memory_order_acquire)) == seen && !stop_.load(std::memory_order_relaxed);
      });
      uint64_t cur = current_.load(std::memory_order_acquire);
      if (gen_of(cur) == seen && !stop_.load(std::memory_order_acquire)) {
        std::unique_lock<std::mutex> lk(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lk, [&] {
          cur = current_.load(std::memory_order_seq_cst);
          return stop_.load(std::memory_order_relaxed) || gen_of(cur) != seen;
        });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = gen_of(cur);
      work(seen, static_cast<int>(cur & kPartMask), home);
    }
  }

  // Cache lines: the job (written by the caller, read by the workers, pending_ counted
  // down by both), the rarely written flags (read in every region), and one slot per
  // part, so that a thread claiming its home part touches no other thread's line.
  struct alignas(64) Slot {
    std::atomic<uint64_t> gen{0};  // the job that claimed this part last
  };
  alignas(64) std::atomic<uint64_t> current_{0};
  std::atomic<const std::function<void(int)>*> job_{nullptr};
  std::atomic<int> pending_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_waiting_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> stop_{false};
  alignas(64) uint64_t generation_ = 0;  // the caller's: run() is one at a time
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::exception_ptr error_;  // guarded by mu_
};

std::mutex g_pool_mu;
std::unique_ptr<Pool> g_pool;
thread_local bool t_inside = false;  // no nested parallelism from inside a chunk

}  // namespace

int first_part(int home, int parts) {
  if (home < parts) return home;
  return parts > 1 ? 1 + (home - parts) % (parts - 1) : 0;
}

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
