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
//
// In front of the shared cache, each thread keeps short lists of buffers of up to 4 KiB:
// a decode step makes ~70 small outputs, and the shared cache's mutex and hash lookup
// were 4-5% of a B1 bf16 decode step (perf). A thread's lists go back to the shared
// cache when it exits; a buffer freed on another thread than its own is fine either way.
#include "attograd/storage.h"

#include <array>
#include <atomic>
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

// memory_allocated / max_memory_allocated / memory_reserved: bytes of live storages (at
// their class), their peak, and bytes idle in the caches (shared and per-thread).
std::atomic<std::size_t> g_allocated{0}, g_peak{0}, g_cached{0};

void count_allocated(std::size_t cls) {
  const std::size_t now = g_allocated.fetch_add(cls, std::memory_order_relaxed) + cls;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
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

// Puts a buffer of class cls into the shared cache, or frees it past kCacheLimit.
void give_back(void* p, std::size_t cls) {
  BufferCache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  if (c.bytes + cls <= kCacheLimit) {
    c.free[cls].push_back(p);
    c.bytes += cls;
    g_cached.fetch_add(cls, std::memory_order_relaxed);
    return;
  }
  std::free(p);
}

// The per-thread lists: classes 64, 128, ..., 4096 bytes, kLocalPerClass buffers each
// (at most 2 MiB a thread). Fixed arrays, so that adding to a list never allocates (it
// runs in ~Storage).
constexpr std::size_t kLocalMax = 4096, kLocalPerClass = 8;

struct LocalCache {
  struct List {
    std::array<void*, kLocalPerClass> p{};
    std::size_t n = 0;
  };
  std::array<List, kLocalMax / 64> lists;
  ~LocalCache();
};

// 0: this thread's LocalCache not made yet, 1: alive, 2: destroyed (the thread is exiting:
// storages freed from now on, by later thread_local destructors or, on the main thread,
// static ones, use the shared cache). Trivially destructible, so readable to the end.
thread_local int t_local_state = 0;

LocalCache::~LocalCache() {
  t_local_state = 2;
  for (std::size_t i = 0; i < lists.size(); ++i)
    for (std::size_t k = 0; k < lists[i].n; ++k) {
      g_cached.fetch_sub((i + 1) * 64, std::memory_order_relaxed);  // give_back counts it again if kept
      give_back(lists[i].p[k], (i + 1) * 64);
    }
}

// The calling thread's list for class cls, or null: too big, or the thread is exiting,
// or (`make` false, as in ~Storage) its lists are not made yet, so that no destructor
// ever makes them, for instance a static tensor's after the main thread's lists are gone.
LocalCache::List* local_list(std::size_t cls, bool make) {
  if (cls > kLocalMax || t_local_state == 2 || (t_local_state == 0 && !make)) return nullptr;
  thread_local LocalCache c;
  t_local_state = 1;
  return &c.lists[cls / 64 - 1];
}

// A cached buffer of class cls (this thread's list, then the shared cache), or null.
void* take_cached(std::size_t cls) {
  if (!cache_enabled()) return nullptr;
  if (LocalCache::List* l = local_list(cls, true); l && l->n > 0) {
    g_cached.fetch_sub(cls, std::memory_order_relaxed);
    return l->p[--l->n];
  }
  BufferCache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  auto it = c.free.find(cls);
  if (it == c.free.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  c.bytes -= cls;
  g_cached.fetch_sub(cls, std::memory_order_relaxed);
  return p;
}

}  // namespace

Storage::Storage(std::size_t nbytes) : nbytes_(nbytes) {
  AG_CHECK(nbytes <= max_allocation(), MemoryError, "storage: cannot allocate ", nbytes,
           " bytes (more than the machine's ", max_allocation(), " bytes of RAM + swap)");
  const std::size_t cls = size_class(nbytes);
  ptr_ = take_cached(cls);
  if (!ptr_) ptr_ = allocate(cls, nbytes);
  count_allocated(cls);
}

Storage::~Storage() {
  const std::size_t cls = size_class(nbytes_);
  g_allocated.fetch_sub(cls, std::memory_order_relaxed);
  if (!cache_enabled()) {
    std::free(ptr_);
    return;
  }
  if (LocalCache::List* l = local_list(cls, false); l && l->n < kLocalPerClass) {
    l->p[l->n++] = ptr_;
    g_cached.fetch_add(cls, std::memory_order_relaxed);
    return;
  }
  give_back(ptr_, cls);
}

std::size_t memory_allocated() { return g_allocated.load(std::memory_order_relaxed); }

std::size_t max_memory_allocated() { return g_peak.load(std::memory_order_relaxed); }

void reset_peak_memory_stats() { g_peak.store(g_allocated.load(std::memory_order_relaxed), std::memory_order_relaxed); }

std::size_t memory_reserved() { return memory_allocated() + g_cached.load(std::memory_order_relaxed); }

void empty_buffer_cache() {
  for (std::size_t cls = 64; cls <= kLocalMax; cls += 64)  // the calling thread's lists
    if (LocalCache::List* l = local_list(cls, false))
      while (l->n > 0) {
        std::free(l->p[--l->n]);
        g_cached.fetch_sub(cls, std::memory_order_relaxed);
      }
  BufferCache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  for (auto& [cls, v] : c.free)
    for (void* p : v) std::free(p);
  c.free.clear();
  g_cached.fetch_sub(c.bytes, std::memory_order_relaxed);
  c.bytes = 0;
}

}  // namespace ag
