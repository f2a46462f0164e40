#pragma once
/// \file
/// safetensors files: 8-byte little-endian header length, a JSON header naming each
/// tensor's dtype, shape and byte range, then the raw little-endian data.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// Keeps the file's order of tensors (by data offset) so iteration is stable. Lookups and
/// inserts go through a hash index: loading n tensors costs O(n), not O(n^2).
class TensorMap {
 public:
  /// A (name, tensor) entry.
  using value_type = std::pair<std::string, Tensor>;
  /// Whether the key exists.
  bool contains(const std::string& name) const;
  const Tensor& at(const std::string& name) const;        ///< IndexError naming the key
  void insert(const std::string& name, const Tensor& t);  ///< replaces an existing key
  /// Number of entries.
  std::size_t size() const { return items_.size(); }
  /// Entries in insertion order (the order save writes them).
  auto begin() const { return items_.begin(); }
  /// End of the entries.
  auto end() const { return items_.end(); }

 private:
  std::vector<value_type> items_;
  std::unordered_map<std::string, std::size_t> index_;  ///< name -> position in items_
};

/// String key -> string value: safetensors __metadata__.
using Metadata = std::map<std::string, std::string>;

/// A whole safetensors file: tensors by name and the header metadata.
struct SafetensorsFile {
  /// The tensors by name.
  TensorMap tensors;
  /// the string metadata of the header (__metadata__)
  Metadata metadata;
};

/// Reads F32, F64, I32, I64 and BOOL tensors. A truncated, oversized or malformed file
/// throws IOError saying what is wrong (and never allocates what a bad header claims).
SafetensorsFile read_safetensors(const std::string& path);
/// Every tensor of the file; IOError naming the path for a missing, truncated or malformed file.
TensorMap load_safetensors(const std::string& path);
/// Only the header's __metadata__ (reads no tensor data).
Metadata load_safetensors_metadata(const std::string& path);

/// Writes atomically: a temporary file in the same folder, fsync, then rename. A process
/// killed mid-save leaves its `<path>.tmp.<pid>.<n>`; the next save to `path` removes
/// those of processes that no longer exist on this host. A `path` that is a symbolic
/// link is written through: the temporary goes beside the link's final target and is
/// renamed onto it, so the link stays a link (optim/CHECKPOINTS.md).
void save_safetensors(const std::string& path, const TensorMap& tensors, const Metadata& metadata = {});

}  // namespace ag

namespace ag::testing {
/// Fault injection for crash-safety tests: while n >= 0, save_safetensors writes only
/// the first n bytes of its temporary file and then throws IOError, as if the process
/// died mid-write. -1 (the default) turns it off.
void set_save_fault_after_bytes(int64_t n);
}  // namespace ag::testing
