#pragma once
/// \file
/// Storage: a refcounted, 64-byte aligned flat buffer shared by a tensor and its views.
/// It also carries the version counter that autograd uses to detect in-place writes to
/// tensors saved for backward (views share it because they share the storage).
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ag {

/// A refcounted, aligned flat buffer; the version counter catches in-place changes to saved tensors.
class Storage {
 public:
  /// Bytes: buffers are aligned for SIMD loads.
  static constexpr std::size_t kAlignment = 64;

  explicit Storage(std::size_t nbytes);  ///< uninitialized
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// The first byte.
  void* data() const { return ptr_; }
  /// Size in bytes.
  std::size_t nbytes() const { return nbytes_; }
  /// Bumped by every in-place write; Saved compares it.
  uint64_t version() const { return version_; }
  /// Called by every in-place op.
  void bump_version() { ++version_; }

 private:
  void* ptr_ = nullptr;
  std::size_t nbytes_ = 0;
  uint64_t version_ = 0;
};

/// Storage is shared between a tensor and its views.
using StoragePtr = std::shared_ptr<Storage>;

/// Buffers of freed tensors are cached by size class for reuse (see core/storage.cpp;
/// ATTOGRAD_NO_BUFFER_CACHE=1 turns the cache off). This returns them to the system.
void empty_buffer_cache();

/// Bytes held by live tensor storages (each counted at its size class: what it holds),
/// as torch.cuda.memory_allocated for the CPU: a step's activations, parameters,
/// gradients and optimizer state, without the allocator's or the cache's slack.
std::size_t memory_allocated();
/// The most memory_allocated() has been since the start or reset_peak_memory_stats()
/// (torch.cuda.max_memory_allocated).
std::size_t max_memory_allocated();
/// Starts max_memory_allocated() again from the current memory_allocated().
void reset_peak_memory_stats();
/// memory_allocated() plus the freed buffers the cache keeps for reuse
/// (torch.cuda.memory_reserved); empty_buffer_cache() brings it back to memory_allocated().
std::size_t memory_reserved();

}  // namespace ag
