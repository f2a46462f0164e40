#include "attograd/nn/loss.h"

namespace ag::nn {
namespace {
// A defined weight becomes a buffer (its module handle shares it); undefined stays so.
Tensor buffer_if_defined(Module& m, const char* name, const Tensor& t) {
  return t.defined() ? m.register_buffer(name, t) : Tensor{};
}
}  // namespace

BCELossImpl::BCELossImpl(const BCELossOptions& o) : Module("BCELoss"), options(o) {
  weight = buffer_if_defined(*this, "weight", o.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy(input, target, weight, options.reduction());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& o)
    : Module("BCEWithLogitsLoss"), options(o) {
  weight = buffer_if_defined(*this, "weight", o.weight());
  pos_weight = buffer_if_defined(*this, "pos_weight", o.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy_with_logits(input, target, weight, pos_weight, options.reduction());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& o) : Module("CrossEntropyLoss"), options(o) {
  AG_CHECK(o.label_smoothing() >= 0 && o.label_smoothing() <= 1, ValueError,
           "CrossEntropyLoss: label_smoothing must be in [0, 1], got ", o.label_smoothing());
  weight = buffer_if_defined(*this, "weight", o.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(
      input, target,
      CrossEntropyOptions{options.ignore_index(), options.label_smoothing(), options.reduction(), weight});
}
void CrossEntropyLossImpl::pretty_print(std::ostream& os) const {
  os << "CrossEntropyLoss(ignore_index=" << options.ignore_index() << ", label_smoothing=" << options.label_smoothing()
     << ')';
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& o) : Module("NLLLoss"), options(o) {
  weight = buffer_if_defined(*this, "weight", o.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, NLLOptions{weight, options.ignore_index(), options.reduction()});
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& o) : Module("SmoothL1Loss"), options(o) {
  AG_CHECK(o.beta() >= 0, ValueError, "SmoothL1Loss: beta must not be negative, got ", o.beta());
}
void SmoothL1LossImpl::pretty_print(std::ostream& os) const { os << "SmoothL1Loss(beta=" << options.beta() << ')'; }

HuberLossImpl::HuberLossImpl(const HuberLossOptions& o) : Module("HuberLoss"), options(o) {
  AG_CHECK(o.delta() > 0, ValueError, "HuberLoss: delta must be positive, got ", o.delta());
}
void HuberLossImpl::pretty_print(std::ostream& os) const { os << "HuberLoss(delta=" << options.delta() << ')'; }

void CosineSimilarityImpl::pretty_print(std::ostream& os) const {
  os << "CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ')';
}

}  // namespace ag::nn
