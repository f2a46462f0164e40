#pragma once
// Loss modules (LibTorch's names and options), each a thin holder over its functional
// form in <attograd/ops/loss.h> / <attograd/nn_ops.h>:
//   nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1));
//   Tensor loss = ce(logits, targets);
// Class weights (and BCEWithLogitsLoss's pos_weight) are buffers named as in PyTorch
// ("weight", "pos_weight"), registered only when given.
#include "attograd/nn/module.h"
#include "attograd/ops/loss.h"

namespace ag::nn {

// ---- options ----
struct BCELossOptions {
  AG_ARG(Tensor, weight);  // broadcasts to the input
  AG_ARG(Reduction, reduction) = Reduction::mean;
};
struct BCEWithLogitsLossOptions {
  AG_ARG(Tensor, weight);
  AG_ARG(Reduction, reduction) = Reduction::mean;
  AG_ARG(Tensor, pos_weight);  // broadcasts to the input: (C) weighs the last dim's classes
};
struct CrossEntropyLossOptions {
  AG_ARG(Tensor, weight);  // (C)
  AG_ARG(int64_t, ignore_index) = -100;
  AG_ARG(Reduction, reduction) = Reduction::mean;
  AG_ARG(double, label_smoothing) = 0.0;
};
struct NLLLossOptions {
  AG_ARG(Tensor, weight);  // (C)
  AG_ARG(int64_t, ignore_index) = -100;
  AG_ARG(Reduction, reduction) = Reduction::mean;
};
struct L1LossOptions {
  L1LossOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}
  AG_ARG(Reduction, reduction);
};
struct MSELossOptions {
  MSELossOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}
  AG_ARG(Reduction, reduction);
};
struct SmoothL1LossOptions {
  AG_ARG(Reduction, reduction) = Reduction::mean;
  AG_ARG(double, beta) = 1.0;
};
struct HuberLossOptions {
  AG_ARG(Reduction, reduction) = Reduction::mean;
  AG_ARG(double, delta) = 1.0;
};
struct KLDivLossOptions {
  KLDivLossOptions(KLDivReduction reduction = KLDivReduction::mean) : reduction_(reduction) {}
  AG_ARG(KLDivReduction, reduction);
  AG_ARG(bool, log_target) = false;
};
struct CosineSimilarityOptions {
  AG_ARG(int64_t, dim) = 1;
  AG_ARG(double, eps) = 1e-8;
};

// ---- modules: forward(input, target) -> the loss ----
class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  BCELossOptions options;
  Tensor weight;  // buffer, or undefined
};
AG_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  BCEWithLogitsLossOptions options;
  Tensor weight, pos_weight;  // buffers, or undefined
};
AG_MODULE(BCEWithLogitsLoss);

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);  // see ag::cross_entropy
  void pretty_print(std::ostream& os) const override;
  CrossEntropyLossOptions options;
  Tensor weight;  // (C) buffer, or undefined
};
AG_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  NLLLossOptions options;
  Tensor weight;  // (C) buffer, or undefined
};
AG_MODULE(NLLLoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return l1_loss(input, target, options.reduction()); }
  L1LossOptions options;
};
AG_MODULE(L1Loss);

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return mse_loss(input, target, options.reduction()); }
  MSELossOptions options;
};
AG_MODULE(MSELoss);

class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
  }
  void pretty_print(std::ostream& os) const override;
  SmoothL1LossOptions options;
};
AG_MODULE(SmoothL1Loss);

class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) {
    return huber_loss(input, target, options.reduction(), options.delta());
  }
  void pretty_print(std::ostream& os) const override;
  HuberLossOptions options;
};
AG_MODULE(HuberLoss);

class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {}) : Module("KLDivLoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) {
    return kl_div(input, target, options.reduction(), options.log_target());
  }
  KLDivLossOptions options;
};
AG_MODULE(KLDivLoss);

// forward(x1, x2) -> cosine_similarity along options.dim().
class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {})
      : Module("CosineSimilarity"), options(options) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) {
    return cosine_similarity(x1, x2, options.dim(), options.eps());
  }
  void pretty_print(std::ostream& os) const override;
  CosineSimilarityOptions options;
};
AG_MODULE(CosineSimilarity);

}  // namespace ag::nn
