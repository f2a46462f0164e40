// safetensors reader and writer.
//
// File layout:  [u64 little-endian N][N bytes of JSON header][data buffer]
//   header: {"__metadata__": {str: str},
//            "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// Offsets are relative to the start of the data buffer. As the spec asks, the tensors
// must cover the buffer exactly: no overlaps, no holes, no trailing bytes.
//
// The reader trusts nothing in the header: every size it claims is checked against the
// real file size before anything is allocated, so a corrupt file costs at most one
// allocation of the header (<= 100 MB, and <= the file size) plus the file's own size.
#include "attograd/safetensors.h"

#include <string>

namespace ag {

// ---- TensorMap ---------------------------------------------------------------

bool TensorMap::contains(const std::string& name) const { return index_.count(name) > 0; }

const Tensor& TensorMap::at(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw IndexError(detail::cat("TensorMap: no tensor named '", name, "'"));
  return items_[it->second].second;
}

void TensorMap::insert(const std::string& name, const Tensor& t) {
  auto [it, fresh] = index_.try_emplace(name, items_.size());
  if (fresh)
    items_.emplace_back(name, t);
  else
    items_[it->second].second = t;  // replacing keeps the position, so file order stays stable
}

}  // namespace ag
