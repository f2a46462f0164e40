// memory_allocated / max_memory_allocated / reset_peak_memory_stats / memory_reserved
// (core/storage.cpp): live storages counted at their size class, the peak since a reset,
// and the buffer cache's idle bytes on top.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cstddef>
#include <vector>

using namespace ag;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;
}

TEST_CASE("memory_allocated follows live storages; the peak stays until reset") {
  empty_buffer_cache();
  const std::size_t base = memory_allocated();
  reset_peak_memory_stats();
  CHECK(max_memory_allocated() == base);
  {
    Tensor a = empty({256, 1024});  // 1 MiB of f32, a size class of its own
    CHECK(memory_allocated() == base + kMiB);
    Tensor b = empty({512, 1024}, DType::bf16);  // another 1 MiB
    CHECK(memory_allocated() == base + 2 * kMiB);
    CHECK(max_memory_allocated() == base + 2 * kMiB);
    Tensor v = a.view({1024, 256});  // a view shares the storage: nothing new
    CHECK(memory_allocated() == base + 2 * kMiB);
  }
  CHECK(memory_allocated() == base);
  CHECK(max_memory_allocated() == base + 2 * kMiB);
  reset_peak_memory_stats();
  CHECK(max_memory_allocated() == base);
}

TEST_CASE("memory_reserved adds the cached buffers; empty_buffer_cache gives them back") {
  empty_buffer_cache();
  const std::size_t base = memory_allocated();
  CHECK(memory_reserved() >= base);
  { Tensor a = ones({3, kMiB / 4}); }  // 3 MiB, freed into the cache when it is on
  CHECK(memory_allocated() == base);
  const std::size_t reserved = memory_reserved();
  // Off under AddressSanitizer (use-after-free must stay visible) or with
  // ATTOGRAD_NO_BUFFER_CACHE=1: then nothing is kept and reserved equals allocated.
  const bool cache_on = reserved >= base + 3 * kMiB;
  if (!cache_on) CHECK(reserved == base);
  if (cache_on) {
    // The next tensor of that class takes the cached buffer: allocated again, nothing new.
    Tensor a = ones({3, kMiB / 4});
    CHECK(memory_allocated() == base + 3 * kMiB);
    CHECK(memory_reserved() == reserved);
  }
  empty_buffer_cache();
  CHECK(memory_reserved() >= memory_allocated());
  if (cache_on) CHECK(memory_reserved() + 3 * kMiB <= reserved);
}

TEST_CASE("a step's peak counts what autograd keeps for backward") {
  empty_buffer_cache();
  Tensor w = randn({512, 512}).requires_grad_();  // 1 MiB
  Tensor x = randn({512, 512});
  reset_peak_memory_stats();
  const std::size_t before = memory_allocated();
  {
    Tensor h = tanh(matmul(x, w));  // keeps h for tanh's backward: 1 MiB more at least
    CHECK(memory_allocated() >= before + kMiB);
    h.sum().backward();
  }
  CHECK(max_memory_allocated() >= before + 2 * kMiB);  // the product and tanh's output
  CHECK(w.grad().defined());
  CHECK(memory_allocated() == before + kMiB);  // w's gradient stays
}
