#include "attograd/storage.h"

#include <cstdlib>
#include <new>

namespace ag {

Storage::Storage(std::size_t nbytes) : nbytes_(nbytes) {
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes.
  std::size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  ptr_ = std::aligned_alloc(kAlignment, rounded);
  if (!ptr_) throw std::bad_alloc();
}

Storage::~Storage() { std::free(ptr_); }

}  // namespace ag
