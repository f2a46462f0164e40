// Tensor buffers come from a size-class cache: a freed buffer is kept for the next
// tensor of the same class instead of going back to the system. Large buffers are
// mmap'd by malloc, so every fresh one would page-fault its way in and every free
// would unmap it again; training allocates the same sizes every step.
// Classes: multiples of 64 bytes up to 4 KiB, then four classes per power of two
// (at most 25% rounding). At most kCacheLimit bytes are kept. Under AddressSanitizer
// the cache is off, so that use-after-free is still caught.
// A request larger than RAM + swap throws MemoryError before reaching the allocator:
// under overcommit malloc could "succeed" and the first write would be OOM-killed, and
// AddressSanitizer aborts on huge requests unless allocator_may_return_null=1.
#include "attograd/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "attograd/error.h"

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define AG_NO_BUFFER_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_NO_BUFFER_CACHE 1
#endif
#endif

namespace ag {
namespace {

constexpr std::size_t kCacheLimit = std::size_t{1} << 30;

std::size_t size_class(std::size_t n) {
  if (n <= 4096) return n == 0 ? Storage::kAlignment : (n + 63) / 64 * 64;
  std::size_t p = std::size_t{1} << (63 - __builtin_clzll(n));  // highest power of two <= n
  std::size_t step = p / 4;
  return (n + step - 1) / step * step;
}

struct BufferCache {
  std::mutex mu;
  std::unordered_map<std::size_t, std::vector<void*>> free;
  std::size_t bytes = 0;
};

BufferCache& cache() {
  static BufferCache* c = new BufferCache;  // never destroyed: tensors may outlive statics
  return *c;
}

bool cache_enabled() {
#ifdef AG_NO_BUFFER_CACHE
  return false;
#else
  static const bool on = [] {
    const char* env = std::getenv("ATTOGRAD_NO_BUFFER_CACHE");
    return !(env && *env && *env != '0');
  }();
  return on;
#endif
}

// Bytes the machine could ever back: RAM + swap (Linux), else the 47-bit address space.
std::size_t max_allocation() {
  static const std::size_t limit = [] {
    std::size_t cap = std::size_t{1} << 47;
#if defined(__linux__)
    struct sysinfo si {};
    if (sysinfo(&si) == 0) {
      const std::size_t total = (std::size_t(si.totalram) + std::size_t(si.totalswap)) * si.mem_unit;
      if (total > 0 && total < cap) cap = total;
    }
#endif
    return cap;
  }();
  return limit;
}

// nbytes <= max_allocation() here, so cls (at most 25% more) cannot overflow.
void* allocate(std::size_t cls, std::size_t nbytes) {
  void* p = std::aligned_alloc(Storage::kAlignment, cls);
  if (!p) {  // give cached buffers back to the system and try once more
    empty_buffer_cache();
    p = std::aligned_alloc(Storage::kAlignment, cls);
  }
  AG_CHECK(p, MemoryError, "storage: cannot allocate ", nbytes, " bytes: not enough memory");
  return p;
}

}  // namespace

Storage::Storage(std::size_t nbytes) : nbytes_(nbytes) {
  AG_CHECK(nbytes <= max_allocation(), MemoryError, "storage: cannot allocate ", nbytes,
           " bytes (more than the machine's ", max_allocation(), " bytes of RAM + swap)");
  const std::size_t cls = size_class(nbytes);
  if (cache_enabled()) {
    BufferCache& c = cache();
    std::lock_guard<std::mutex> lk(c.mu);
    auto it = c.free.find(cls);
    if (it != c.free.end() && !it->second.empty()) {
      ptr_ = it->second.back();
      it->second.pop_back();
      c.bytes -= cls;
      return;
    }
  }
  ptr_ = allocate(cls, nbytes);
}

Storage::~Storage() {
  const std::size_t cls = size_class(nbytes_);
  if (cache_enabled()) {
    BufferCache& c = cache();
    std::lock_guard<std::mutex> lk(c.mu);
    if (c.bytes + cls <= kCacheLimit) {
      c.free[cls].push_back(ptr_);
      c.bytes += cls;
      return;
    }
  }
  std::free(ptr_);
}

void empty_buffer_cache() {
  BufferCache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  for (auto& [cls, v] : c.free)
    for (void* p : v) std::free(p);
  c.free.clear();
  c.bytes = 0;
}

}  // namespace ag
