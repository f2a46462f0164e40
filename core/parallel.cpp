#include "parallel.h"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "attograd/runtime.h"

namespace ag::detail {
namespace {

class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  // Runs chunk(0..parts-1) with part 0 on the caller; returns when all are done.
  void run(int parts, const std::function<void(int)>& chunk) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = &chunk;
      parts_ = parts;
      pending_ = parts - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr mine;
    try {
      chunk(0);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop(int id) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (id >= parts_) continue;
        job = job_;
      }
      std::exception_ptr err;
      try {
        (*job)(id);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lk(mu_);
      if (err && !error_) error_ = err;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

std::mutex g_pool_mu;
std::unique_ptr<Pool> g_pool;
thread_local bool t_inside = false;  // no nested parallelism from inside a chunk

}  // namespace

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
