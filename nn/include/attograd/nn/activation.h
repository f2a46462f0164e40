#pragma once
/// \file
/// Activation modules (nn::SiLU, nn::Softplus, ...), each a thin holder over its
/// functional form in <attograd/ops/activation.h> and <attograd/ops/softmax.h> (LibTorch's
/// names and options), also under nn::functional.
/// Example: nn::Softplus sp(nn::SoftplusOptions().beta(2).threshold(10));  Tensor y = sp(x);
#include <cstdint>
#include <ostream>

#include "attograd/nn/functional.h"
#include "attograd/nn/module.h"
#include "attograd/ops/activation.h"
#include "attograd/ops/softmax.h"
#include "attograd/ops/unary.h"

namespace ag::nn {

// ---- without options ----
/// x * sigmoid(x), elementwise; any shape -> same shape.
class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  /// Same shape as x: ag::silu.
  Tensor forward(const Tensor& x) { return silu(x); }
};
/// The holder of SiLUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(SiLU);

/// Self-normalizing ELU with the fixed scale and alpha; any shape -> same shape.
class SELUImpl : public Module {
 public:
  SELUImpl() : Module("SELU") {}
  /// Same shape as x: ag::selu.
  Tensor forward(const Tensor& x) { return selu(x); }
};
/// The holder of SELUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(SELU);

/// min(max(x, 0), 6); any shape -> same shape.
class ReLU6Impl : public Module {
 public:
  ReLU6Impl() : Module("ReLU6") {}
  /// Same shape as x: ag::relu6.
  Tensor forward(const Tensor& x) { return relu6(x); }
};
/// The holder of ReLU6Impl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ReLU6);

/// Piecewise-linear sigmoid, relu6(x + 3) / 6; any shape -> same shape.
class HardsigmoidImpl : public Module {
 public:
  HardsigmoidImpl() : Module("Hardsigmoid") {}
  /// Same shape as x: ag::hardsigmoid.
  Tensor forward(const Tensor& x) { return hardsigmoid(x); }
};
/// The holder of HardsigmoidImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Hardsigmoid);

/// x * hardsigmoid(x) (MobileNetV3); any shape -> same shape.
class HardswishImpl : public Module {
 public:
  HardswishImpl() : Module("Hardswish") {}
  /// Same shape as x: ag::hardswish.
  Tensor forward(const Tensor& x) { return hardswish(x); }
};
/// The holder of HardswishImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Hardswish);

/// x * tanh(softplus(x)); any shape -> same shape.
class MishImpl : public Module {
 public:
  MishImpl() : Module("Mish") {}
  /// Same shape as x: ag::mish.
  Tensor forward(const Tensor& x) { return mish(x); }
};
/// The holder of MishImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Mish);

/// log(sigmoid(x)), computed without overflow; any shape -> same shape.
class LogSigmoidImpl : public Module {
 public:
  LogSigmoidImpl() : Module("LogSigmoid") {}
  /// Same shape as x: ag::logsigmoid.
  Tensor forward(const Tensor& x) { return logsigmoid(x); }
};
/// The holder of LogSigmoidImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LogSigmoid);

/// x / (1 + |x|); any shape -> same shape.
class SoftsignImpl : public Module {
 public:
  SoftsignImpl() : Module("Softsign") {}
  /// Same shape as x: ag::softsign.
  Tensor forward(const Tensor& x) { return softsign(x); }
};
/// The holder of SoftsignImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Softsign);

/// Elementwise tanh; any shape -> same shape.
class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  /// Same shape as x: ag::tanh.
  Tensor forward(const Tensor& x) { return tanh(x); }
};
/// The holder of TanhImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Tanh);

/// Elementwise 1 / (1 + exp(-x)); any shape -> same shape.
class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  /// Same shape as x: ag::sigmoid.
  Tensor forward(const Tensor& x) { return sigmoid(x); }
};
/// The holder of SigmoidImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Sigmoid);

// ---- with options ----
/// Options of nn::Softplus: required ones in the constructor, the rest chainable setters.
struct SoftplusOptions {
  /// softplus(x) = log(1 + exp(beta * x)) / beta
  AG_ARG(double, beta) = 1;
  /// Above beta * x > threshold the result is x (linear, no overflow).
  AG_ARG(double, threshold) = 20;
};
/// log(1 + exp(beta x)) / beta, linear above the threshold; any shape -> same shape.
class SoftplusImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : Module("Softplus"), options(options) {}
  /// Same shape as x: ag::softplus with these options.
  Tensor forward(const Tensor& x) { return softplus(x, options.beta(), options.threshold()); }
  void pretty_print(std::ostream& os) const override;  ///< Softplus(beta=1, threshold=20)
  /// The options it was built with (pretty_print shows them).
  SoftplusOptions options;
};
/// The holder of SoftplusImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Softplus);

/// Options of nn::LeakyReLU: required ones in the constructor, the rest chainable setters.
struct LeakyReLUOptions {
  /// The slope below 0.
  AG_ARG(double, negative_slope) = 1e-2;
};
/// x above 0, negative_slope * x below; any shape -> same shape.
class LeakyReLUImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  /// Same shape as x: ag::leaky_relu with these options.
  Tensor forward(const Tensor& x) { return leaky_relu(x, options.negative_slope()); }
  void pretty_print(std::ostream& os) const override;  ///< LeakyReLU(negative_slope=0.01)
  /// The options it was built with (pretty_print shows them).
  LeakyReLUOptions options;
};
/// The holder of LeakyReLUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LeakyReLU);

/// Options of nn::ELU: required ones in the constructor, the rest chainable setters.
struct ELUOptions {
  /// The scale of the negative part: alpha * (exp(x) - 1) below 0.
  AG_ARG(double, alpha) = 1;
};
/// x above 0, alpha * (exp(x) - 1) below; any shape -> same shape.
class ELUImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  /// Same shape as x: ag::elu with these options.
  Tensor forward(const Tensor& x) { return elu(x, options.alpha()); }
  void pretty_print(std::ostream& os) const override;  ///< ELU(alpha=1)
  /// The options it was built with (pretty_print shows them).
  ELUOptions options;
};
/// The holder of ELUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ELU);

/// Options of nn::CELU: required ones in the constructor, the rest chainable setters.
struct CELUOptions {
  /// The scale of the negative part: alpha * (exp(x) - 1) below 0.
  AG_ARG(double, alpha) = 1;
};
/// Continuously differentiable ELU: alpha * (exp(x / alpha) - 1) below 0; same shape.
class CELUImpl : public Module {
 public:
  explicit CELUImpl(const CELUOptions& options = {});  ///< ValueError when alpha is 0
  /// Same shape as x: ag::celu with these options.
  Tensor forward(const Tensor& x) { return celu(x, options.alpha()); }
  void pretty_print(std::ostream& os) const override;  ///< CELU(alpha=1)
  /// The options it was built with (pretty_print shows them).
  CELUOptions options;
};
/// The holder of CELUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(CELU);

/// Options of nn::Hardtanh: required ones in the constructor, the rest chainable setters.
struct HardtanhOptions {
  /// Lower bound of the linear region.
  AG_ARG(double, min_val) = -1;
  /// Upper bound of the linear region.
  AG_ARG(double, max_val) = 1;
};
/// Clamps x to [min_val, max_val]; any shape -> same shape.
class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});  ///< ValueError unless max_val > min_val
  /// Same shape as x: ag::hardtanh with these options.
  Tensor forward(const Tensor& x) { return hardtanh(x, options.min_val(), options.max_val()); }
  void pretty_print(std::ostream& os) const override;  ///< Hardtanh(min_val=-1, max_val=1)
  /// The options it was built with (pretty_print shows them).
  HardtanhOptions options;
};
/// The holder of HardtanhImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Hardtanh);

// ---- along a dim: Softmax(1), Softmin(-1), LogSoftmax(dim) ----
/// Options of nn::Softmax: required ones in the constructor, the rest chainable setters.
struct SoftmaxOptions {
  /// The required options; the others keep their PyTorch defaults.
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);  ///< the dim the normalization runs along (may be negative)
};
/// Softmax along options.dim (rows sum to 1); any shape -> same shape.
class SoftmaxImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  /// Shorthand for the options constructor.
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  /// Same shape as x: ag::softmax with these options.
  Tensor forward(const Tensor& x) { return softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  ///< Softmax(dim=1)
  /// The options it was built with (pretty_print shows them).
  SoftmaxOptions options;
};
/// The holder of SoftmaxImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Softmax);

/// Options of nn::Softmin: required ones in the constructor, the rest chainable setters.
struct SoftminOptions {
  /// The required options; the others keep their PyTorch defaults.
  SoftminOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);  ///< the dim the normalization runs along (may be negative)
};
/// softmax(-x) along options.dim; any shape -> same shape.
class SoftminImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit SoftminImpl(const SoftminOptions& options) : Module("Softmin"), options(options) {}
  /// Shorthand for the options constructor.
  explicit SoftminImpl(int64_t dim) : SoftminImpl(SoftminOptions(dim)) {}
  /// Same shape as x: ag::softmin with these options.
  Tensor forward(const Tensor& x) { return softmin(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  ///< Softmin(dim=1)
  /// The options it was built with (pretty_print shows them).
  SoftminOptions options;
};
/// The holder of SoftminImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Softmin);

/// Options of nn::LogSoftmax: required ones in the constructor, the rest chainable setters.
struct LogSoftmaxOptions {
  /// The required options; the others keep their PyTorch defaults.
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);  ///< the dim the normalization runs along (may be negative)
};
/// log(softmax(x)) along options.dim, computed stably; same shape.
class LogSoftmaxImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  /// Shorthand for the options constructor.
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  /// Same shape as x: ag::log_softmax with these options.
  Tensor forward(const Tensor& x) { return log_softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  ///< LogSoftmax(dim=1)
  /// The options it was built with (pretty_print shows them).
  LogSoftmaxOptions options;
};
/// The holder of LogSoftmaxImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LogSoftmax);

}  // namespace ag::nn
