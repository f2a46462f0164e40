// Channel dropout modules: p checked at construction, forward through ag::dropout1d /
// ag::dropout2d (ops/random.cpp) with the module's training flag, as nn::Dropout.
#include "attograd/nn/dropout.h"

#include <ostream>

namespace ag::nn {

Dropout1dImpl::Dropout1dImpl(const Dropout1dOptions& o) : Module("Dropout1d"), options(o) {
  AG_CHECK(o.p() >= 0 && o.p() <= 1, ValueError, "Dropout1d: p must be in [0, 1], got ", o.p());
}
Tensor Dropout1dImpl::forward(const Tensor& x) { return dropout1d(x, options.p(), is_training(), generator); }
void Dropout1dImpl::pretty_print(std::ostream& os) const { os << "Dropout1d(p=" << options.p() << ')'; }

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& o) : Module("Dropout2d"), options(o) {
  AG_CHECK(o.p() >= 0 && o.p() <= 1, ValueError, "Dropout2d: p must be in [0, 1], got ", o.p());
}
Tensor Dropout2dImpl::forward(const Tensor& x) { return dropout2d(x, options.p(), is_training(), generator); }
void Dropout2dImpl::pretty_print(std::ostream& os) const { os << "Dropout2d(p=" << options.p() << ')'; }

}  // namespace ag::nn
