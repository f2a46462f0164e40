// The parallel_for pool (core/parallel.cpp, internal): every index runs exactly once in
// contiguous chunks whoever claims them, the caller keeps part 0 (its home), results are
// visible when it returns, errors reach the caller, nested calls run inline, and
// back-to-back jobs never mix.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"  // AG_TEST_SANITIZED

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attograd/detail/parallel.h"

namespace {

// Restores the thread count a test changed.
struct Threads {
  explicit Threads(int n) : before(ag::get_num_threads()) { ag::set_num_threads(n); }
  ~Threads() { ag::set_num_threads(before); }
  int before;
};

}  // namespace

TEST_CASE("parallel_for: every index once, in contiguous chunks, over many back-to-back jobs") {
  for (int threads : {1, 2, 3, 4}) {
    Threads t(threads);
    CAPTURE(threads);
    for (int64_t n : {1, 2, 7, 64, 1000}) {
      CAPTURE(n);
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      std::atomic<int> chunks{0};
      // 300 jobs in a row: a worker that wakes late must not run a part of a newer job.
      for (int rep = 0; rep < 300; ++rep)
        ag::detail::parallel_for(n, 1, [&](int64_t b, int64_t e) {
          CHECK(b < e);
          ++chunks;
          for (int64_t i = b; i < e; ++i) ++hits[static_cast<std::size_t>(i)];
        });
      bool all = true;
      for (auto& h : hits) all = all && h.load() == 300;
      CHECK(all);
      // min(threads, n) parts per job (grain 1): the split does not depend on who runs it.
      CHECK(chunks.load() == 300 * std::min<int64_t>(threads, n));
    }
  }
}

TEST_CASE("parallel_for: a slow part's writes are visible when it returns") {
  Threads t(2);
  std::vector<int> out(2, 0);
  for (int rep = 0; rep < 20; ++rep) {
    out.assign(2, 0);
    ag::detail::parallel_for(2, 1, [&](int64_t b, int64_t) {
      if (b == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      out[static_cast<std::size_t>(b)] = rep + 1;
    });
    CHECK(out[0] == rep + 1);
    CHECK(out[1] == rep + 1);
  }
}

TEST_CASE("parallel_for: an exception in any part reaches the caller; the pool still works") {
  Threads t(3);
  for (int bad = 0; bad < 3; ++bad) {
    CAPTURE(bad);
    CHECK_THROWS_AS(ag::detail::parallel_for(3, 1,
                                             [&](int64_t b, int64_t) {
                                               if (b == bad) throw std::runtime_error("part failed");
                                             }),
                    std::runtime_error);
    std::atomic<int64_t> sum{0};
    ag::detail::parallel_for(100, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    CHECK(sum.load() == 99 * 100 / 2);
  }
}

// Part 0 is the caller's home part: it claims it before any other, so the same thread
// computes the same rows of every job (a decode step's weights stay in that core's
// cache). A worker takes part 0 only if the caller is preempted in the few instructions
// between publishing a job and claiming its part; the old scheme (the next unclaimed part
// to whoever comes first) gave it to a spinning worker whenever the worker won the race.
TEST_CASE("parallel_for: a thread starts at its home part; one without starts past part 0") {
  using ag::detail::first_part;
  CHECK(first_part(0, 2) == 0);  // the caller
  CHECK(first_part(1, 2) == 1);
  CHECK(first_part(3, 5) == 3);
  // Workers past the job's parts spread over parts 1 .. parts - 1, never the caller's part 0.
  CHECK(first_part(2, 2) == 1);
  CHECK(first_part(5, 2) == 1);
  CHECK(first_part(3, 3) == 1);
  CHECK(first_part(4, 3) == 2);
  CHECK(first_part(5, 3) == 1);
  for (int home = 1; home < 40; ++home)
    for (int parts = 2; parts < 9; ++parts) {
      const int p = first_part(home, parts);
      CHECK((p >= 1 && p < parts));
    }
  CHECK(first_part(7, 1) == 0);  // a one-part job has only the caller's part
}

TEST_CASE("parallel_for: the calling thread runs part 0 of every job") {
  // A worker claims its home part (>= 1) first and then any part left, so part 0 could
  // reach a worker only after that worker's own part: part 1 waits here until part 0 has
  // run, which makes "part 0 on the caller" hold however the OS schedules the threads.
  Threads t(2);
  const auto caller = std::this_thread::get_id();
  const int jobs = 1000;
  int on_caller = 0;
  for (int rep = 0; rep < jobs; ++rep) {
    std::thread::id part0;
    std::atomic<bool> part0_done{false};
    ag::detail::parallel_for(2, 1, [&](int64_t b, int64_t) {
      if (b == 0) {
        part0 = std::this_thread::get_id();
        part0_done.store(true, std::memory_order_release);
      } else {
        while (!part0_done.load(std::memory_order_acquire)) std::this_thread::yield();
      }
    });
    on_caller += part0 == caller;
  }
  CHECK(on_caller == jobs);
}

TEST_CASE("parallel_for: below the grain, or nested inside a part, the work runs inline") {
  Threads t(2);
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  ag::detail::parallel_for(10, 100, [&](int64_t b, int64_t e) {
    ++calls;
    CHECK(b == 0);
    CHECK(e == 10);
    CHECK(std::this_thread::get_id() == caller);
  });
  CHECK(calls == 1);
  std::atomic<int> inner_chunks{0};
  ag::detail::parallel_for(2, 1, [&](int64_t, int64_t) {
    const auto me = std::this_thread::get_id();
    ag::detail::parallel_for(50, 1, [&](int64_t b, int64_t e) {
      ++inner_chunks;
      CHECK(b == 0);
      CHECK(e == 50);
      CHECK(std::this_thread::get_id() == me);
    });
  });
  CHECK(inner_chunks.load() == 2);
}

#if !defined(AG_TEST_SANITIZED)
// A child whose address space cannot hold 1023 thread stacks: starting the pool fails
// inside std::thread (std::system_error), which must reach the caller as ag::MemoryError
// with the started workers joined (else std::terminate), and the process keeps working.
// Skipped under ASan/TSan, whose shadow memory does not fit under an address-space limit.
TEST_CASE("parallel_for: a worker thread the OS refuses is a MemoryError, not std::terminate") {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit lim{};
    getrlimit(RLIMIT_AS, &lim);
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || std::fscanf(f, "%lu", &pages) != 1) _exit(3);
    std::fclose(f);
    lim.rlim_cur = pages * static_cast<unsigned long>(sysconf(_SC_PAGESIZE)) + (256ul << 20);
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    int code = 1;
    try {
      ag::set_num_threads(1024);
      ag::detail::parallel_for(1 << 20, 1, [](int64_t, int64_t) {});
      code = 2;  // the limit did not bite: nothing checked
    } catch (const ag::MemoryError& e) {
      code = std::string(e.what()).find("could not start worker thread") != std::string::npos ? 0 : 4;
    } catch (...) { code = 1; }
    if (code == 0) {
      ag::set_num_threads(1);
      int64_t sum = 0;
      ag::detail::parallel_for(100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
      if (sum != 100) code = 5;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif
