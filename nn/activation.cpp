// Activation modules: option checks and printing (PyTorch's repr, numbers as C++ prints them).
#include "attograd/nn/activation.h"

namespace ag::nn {

CELUImpl::CELUImpl(const CELUOptions& o) : Module("CELU"), options(o) {
  AG_CHECK(o.alpha() != 0, ValueError, "CELU: alpha cannot be 0");
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& o) : Module("Hardtanh"), options(o) {
  AG_CHECK(o.max_val() > o.min_val(), ValueError,
           "Hardtanh: max_val must be greater than min_val, got min_val=", o.min_val(), ", max_val=", o.max_val());
}

void SoftplusImpl::pretty_print(std::ostream& os) const {
  os << "Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ')';
}
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << ')';
}
void ELUImpl::pretty_print(std::ostream& os) const { os << "ELU(alpha=" << options.alpha() << ')'; }
void CELUImpl::pretty_print(std::ostream& os) const { os << "CELU(alpha=" << options.alpha() << ')'; }
void HardtanhImpl::pretty_print(std::ostream& os) const {
  os << "Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val() << ')';
}
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << options.dim() << ')'; }
void SoftminImpl::pretty_print(std::ostream& os) const { os << "Softmin(dim=" << options.dim() << ')'; }
void LogSoftmaxImpl::pretty_print(std::ostream& os) const { os << "LogSoftmax(dim=" << options.dim() << ')'; }

}  // namespace ag::nn
