#pragma once
/// \file
/// Loss modules (LibTorch's names and options), each a thin holder over its functional
/// form in <attograd/ops/loss.h> (also under nn::functional):
///   nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1));
///   Tensor loss = ce(logits, targets);
/// Class weights (and BCEWithLogitsLoss's pos_weight) are buffers named as in PyTorch
/// ("weight", "pos_weight"), registered only when given.
#include "attograd/nn/module.h"
#include "attograd/ops/loss.h"

namespace ag::nn {

// ---- options ----
/// Options of nn::BCELoss: required ones in the constructor, the rest chainable setters.
struct BCELossOptions {
  AG_ARG(Tensor, weight);  ///< broadcasts to the input
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of nn::BCEWithLogitsLoss: required ones in the constructor, the rest chainable setters.
struct BCEWithLogitsLossOptions {
  /// per-element rescaling, broadcast to the input
  AG_ARG(Tensor, weight);
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
  AG_ARG(Tensor, pos_weight);  ///< broadcasts to the input: (C) weighs the last dim's classes
};
/// Options of nn::CrossEntropyLoss: required ones in the constructor, the rest chainable setters.
struct CrossEntropyLossOptions {
  AG_ARG(Tensor, weight);  ///< (C)
  /// Targets equal to this class add no loss and are left out of the mean.
  AG_ARG(int64_t, ignore_index) = -100;
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
  /// In [0, 1]: the share of the target mass spread evenly over the classes.
  AG_ARG(double, label_smoothing) = 0.0;
};
/// Options of nn::NLLLoss: required ones in the constructor, the rest chainable setters.
struct NLLLossOptions {
  AG_ARG(Tensor, weight);  ///< (C)
  /// Targets equal to this class add no loss and are left out of the mean.
  AG_ARG(int64_t, ignore_index) = -100;
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of nn::L1Loss: required ones in the constructor, the rest chainable setters.
struct L1LossOptions {
  /// The required options; the others keep their PyTorch defaults.
  L1LossOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction);
};
/// Options of nn::MSELoss: required ones in the constructor, the rest chainable setters.
struct MSELossOptions {
  /// The required options; the others keep their PyTorch defaults.
  MSELossOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction);
};
/// Options of nn::SmoothL1Loss: required ones in the constructor, the rest chainable setters.
struct SmoothL1LossOptions {
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
  /// Where the loss switches from quadratic to linear.
  AG_ARG(double, beta) = 1.0;
};
/// Options of nn::HuberLoss: required ones in the constructor, the rest chainable setters.
struct HuberLossOptions {
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(Reduction, reduction) = Reduction::mean;
  /// Where the loss switches from quadratic to linear.
  AG_ARG(double, delta) = 1.0;
};
/// Options of nn::KLDivLoss: required ones in the constructor, the rest chainable setters.
struct KLDivLossOptions {
  /// The required options; the others keep their PyTorch defaults.
  KLDivLossOptions(KLDivReduction reduction = KLDivReduction::mean) : reduction_(reduction) {}
  /// How the per-element losses combine: none (input's shape), mean or sum.
  AG_ARG(KLDivReduction, reduction);
  /// Target holds log-probabilities rather than probabilities.
  AG_ARG(bool, log_target) = false;
};
/// Options of nn::CosineSimilarity: required ones in the constructor, the rest chainable setters.
struct CosineSimilarityOptions {
  /// The dim the vectors lie along.
  AG_ARG(int64_t, dim) = 1;
  /// Floor of each norm, so that zero vectors give 0, not NaN.
  AG_ARG(double, eps) = 1e-8;
};

// ---- modules: forward(input, target) -> the loss ----
/// Binary cross-entropy on probabilities: input and target the same shape.
class BCELossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit BCELossImpl(const BCELossOptions& options = {});
  /// input, target (any shape, equal) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with (pretty_print shows them).
  BCELossOptions options;
  Tensor weight;  ///< buffer, or undefined
};
/// The holder of BCELossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(BCELoss);

/// Binary cross-entropy on logits (sigmoid folded in, stable): input and target the same shape.
class BCEWithLogitsLossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  /// input logits, target (equal shapes) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with (pretty_print shows them).
  BCEWithLogitsLossOptions options;
  Tensor weight;      ///< per-element rescaling, broadcast to the input, or undefined
  Tensor pos_weight;  ///< weight of the positive class per output, or undefined
};
/// The holder of BCEWithLogitsLossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(BCEWithLogitsLoss);

/// Cross-entropy on logits (N, C) or (N, C, d...) against class ids or probabilities.
class CrossEntropyLossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);  ///< see ag::cross_entropy
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  CrossEntropyLossOptions options;
  Tensor weight;  ///< (C) buffer, or undefined
};
/// The holder of CrossEntropyLossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(CrossEntropyLoss);

/// Negative log-likelihood on log-probabilities (N, C) against class ids (N).
class NLLLossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  /// input (N, C) log-probabilities, target (N) i64 -> the loss; see ag::nll_loss.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with (pretty_print shows them).
  NLLLossOptions options;
  Tensor weight;  ///< (C) buffer, or undefined
};
/// The holder of NLLLossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(NLLLoss);

/// Mean (or sum) absolute error |input - target|; same shapes.
class L1LossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  /// input, target (equal shapes) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target) { return l1_loss(input, target, options.reduction()); }
  /// The options it was built with (pretty_print shows them).
  L1LossOptions options;
};
/// The holder of L1LossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(L1Loss);

/// Mean (or sum) squared error (input - target)^2; same shapes.
class MSELossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  /// input, target (equal shapes) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target) { return mse_loss(input, target, options.reduction()); }
  /// The options it was built with (pretty_print shows them).
  MSELossOptions options;
};
/// The holder of MSELossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(MSELoss);

/// Squared error below beta (divided by 2 beta), absolute error above; same shapes.
class SmoothL1LossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  /// input, target (equal shapes) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
  }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  SmoothL1LossOptions options;
};
/// The holder of SmoothL1LossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(SmoothL1Loss);

/// Squared error below delta, delta-scaled absolute error above; same shapes.
class HuberLossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  /// input, target (equal shapes) -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return huber_loss(input, target, options.reduction(), options.delta());
  }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  HuberLossOptions options;
};
/// The holder of HuberLossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(HuberLoss);

/// KL divergence with input as log-probabilities (PyTorch's argument order).
class KLDivLossImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit KLDivLossImpl(const KLDivLossOptions& options = {}) : Module("KLDivLoss"), options(options) {}
  /// input log-probabilities, target -> the loss (shape [] unless reduction none).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return kl_div(input, target, options.reduction(), options.log_target());
  }
  /// The options it was built with (pretty_print shows them).
  KLDivLossOptions options;
};
/// The holder of KLDivLossImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(KLDivLoss);

/// forward(x1, x2) -> cosine_similarity along options.dim().
class CosineSimilarityImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {})
      : Module("CosineSimilarity"), options(options) {}
  /// x1, x2 (broadcastable) -> cosine similarity with options.dim removed.
  Tensor forward(const Tensor& x1, const Tensor& x2) { return cosine_similarity(x1, x2, options.dim(), options.eps()); }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  CosineSimilarityOptions options;
};
/// The holder of CosineSimilarityImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(CosineSimilarity);

}  // namespace ag::nn
