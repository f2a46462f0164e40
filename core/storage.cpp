// Tensor buffers come from a size-class cache: a freed buffer is kept for the next
// tensor of the same class instead of going back to the system. Large buffers are
// mmap'd by malloc, so every fresh one would page-fault its way in and every free
// would unmap it again; training allocates the same sizes every step.
// Classes: multiples of 64 bytes up to 4 KiB, then four classes per power of two
// (at most 25% rounding). At most kCacheLimit bytes are kept. Under AddressSanitizer
// the cache is off, so that use-after-free is still caught.
#include "attograd/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

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

}  // namespace

Storage::Storage(std::size_t nbytes) : nbytes_(nbytes) {
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
  ptr_ = std::aligned_alloc(kAlignment, cls);
  if (!ptr_) throw std::bad_alloc();
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
