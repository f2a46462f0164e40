#pragma once
// Activation modules (nn::SiLU, nn::Softplus, ...), each a thin holder over its
// functional form in <attograd/ops/pointwise.h> (LibTorch's names and options).
// Example: nn::Softplus sp(nn::SoftplusOptions().beta(2).threshold(10));  Tensor y = sp(x);
#include <cstdint>
#include <ostream>

#include "attograd/nn/module.h"
#include "attograd/nn_ops.h"
#include "attograd/ops/pointwise.h"

namespace ag::nn {

// ---- without options ----
class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& x) { return silu(x); }
};
AG_MODULE(SiLU);

class SELUImpl : public Module {
 public:
  SELUImpl() : Module("SELU") {}
  Tensor forward(const Tensor& x) { return selu(x); }
};
AG_MODULE(SELU);

class ReLU6Impl : public Module {
 public:
  ReLU6Impl() : Module("ReLU6") {}
  Tensor forward(const Tensor& x) { return relu6(x); }
};
AG_MODULE(ReLU6);

class HardsigmoidImpl : public Module {
 public:
  HardsigmoidImpl() : Module("Hardsigmoid") {}
  Tensor forward(const Tensor& x) { return hardsigmoid(x); }
};
AG_MODULE(Hardsigmoid);

class HardswishImpl : public Module {
 public:
  HardswishImpl() : Module("Hardswish") {}
  Tensor forward(const Tensor& x) { return hardswish(x); }
};
AG_MODULE(Hardswish);

class MishImpl : public Module {
 public:
  MishImpl() : Module("Mish") {}
  Tensor forward(const Tensor& x) { return mish(x); }
};
AG_MODULE(Mish);

class LogSigmoidImpl : public Module {
 public:
  LogSigmoidImpl() : Module("LogSigmoid") {}
  Tensor forward(const Tensor& x) { return logsigmoid(x); }
};
AG_MODULE(LogSigmoid);

class SoftsignImpl : public Module {
 public:
  SoftsignImpl() : Module("Softsign") {}
  Tensor forward(const Tensor& x) { return softsign(x); }
};
AG_MODULE(Softsign);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& x) { return tanh(x); }
};
AG_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) { return sigmoid(x); }
};
AG_MODULE(Sigmoid);

// ---- with options ----
struct SoftplusOptions {
  AG_ARG(double, beta) = 1;
  AG_ARG(double, threshold) = 20;
};
class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : Module("Softplus"), options(options) {}
  Tensor forward(const Tensor& x) { return softplus(x, options.beta(), options.threshold()); }
  void pretty_print(std::ostream& os) const override;  // Softplus(beta=1, threshold=20)
  SoftplusOptions options;
};
AG_MODULE(Softplus);

struct LeakyReLUOptions {
  AG_ARG(double, negative_slope) = 1e-2;
};
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  Tensor forward(const Tensor& x) { return leaky_relu(x, options.negative_slope()); }
  void pretty_print(std::ostream& os) const override;  // LeakyReLU(negative_slope=0.01)
  LeakyReLUOptions options;
};
AG_MODULE(LeakyReLU);

struct ELUOptions {
  AG_ARG(double, alpha) = 1;
};
class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  Tensor forward(const Tensor& x) { return elu(x, options.alpha()); }
  void pretty_print(std::ostream& os) const override;  // ELU(alpha=1)
  ELUOptions options;
};
AG_MODULE(ELU);

struct CELUOptions {
  AG_ARG(double, alpha) = 1;
};
class CELUImpl : public Module {
 public:
  explicit CELUImpl(const CELUOptions& options = {});  // ValueError when alpha is 0
  Tensor forward(const Tensor& x) { return celu(x, options.alpha()); }
  void pretty_print(std::ostream& os) const override;  // CELU(alpha=1)
  CELUOptions options;
};
AG_MODULE(CELU);

struct HardtanhOptions {
  AG_ARG(double, min_val) = -1;
  AG_ARG(double, max_val) = 1;
};
class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});  // ValueError unless max_val > min_val
  Tensor forward(const Tensor& x) { return hardtanh(x, options.min_val(), options.max_val()); }
  void pretty_print(std::ostream& os) const override;  // Hardtanh(min_val=-1, max_val=1)
  HardtanhOptions options;
};
AG_MODULE(Hardtanh);

// ---- along a dim: Softmax(1), Softmin(-1), LogSoftmax(dim) ----
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);
};
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  Tensor forward(const Tensor& x) { return softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  // Softmax(dim=1)
  SoftmaxOptions options;
};
AG_MODULE(Softmax);

struct SoftminOptions {
  SoftminOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);
};
class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(const SoftminOptions& options) : Module("Softmin"), options(options) {}
  explicit SoftminImpl(int64_t dim) : SoftminImpl(SoftminOptions(dim)) {}
  Tensor forward(const Tensor& x) { return softmin(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  // Softmin(dim=1)
  SoftminOptions options;
};
AG_MODULE(Softmin);

struct LogSoftmaxOptions {
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}
  AG_ARG(int64_t, dim);
};
class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  Tensor forward(const Tensor& x) { return log_softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;  // LogSoftmax(dim=1)
  LogSoftmaxOptions options;
};
AG_MODULE(LogSoftmax);

}  // namespace ag::nn

// The functional forms, also under nn::functional (LibTorch's layout).
namespace ag::nn::functional {
using ag::celu;
using ag::elu;
using ag::hardsigmoid;
using ag::hardswish;
using ag::hardtanh;
using ag::leaky_relu;
using ag::logsigmoid;
using ag::mish;
using ag::relu6;
using ag::selu;
using ag::silu;
using ag::softmin;
using ag::softplus;
using ag::softsign;
}  // namespace ag::nn::functional
