#include "attograd/nn/container.h"

namespace ag::nn {

const std::shared_ptr<Module>& ModuleListImpl::operator[](std::size_t i) const {
  AG_CHECK(i < items_.size(), IndexError, "ModuleList: index ", i, " is out of range for ", items_.size(), " modules");
  return items_[i];
}

}  // namespace ag::nn
