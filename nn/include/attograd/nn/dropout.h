#pragma once
/// \file
/// Channel dropout modules, torch.nn.Dropout1d and Dropout2d: in training each whole
/// channel is zeroed with probability p and the others scaled by 1/(1-p) (ag::dropout1d,
/// ag::dropout2d); the identity in eval. Element-wise nn::Dropout is in attograd/nn/layers.h.
#include "attograd/nn/layers.h"
#include "attograd/nn/module.h"
#include "attograd/ops.h"

namespace ag::nn {

using Dropout1dOptions = DropoutOptions;  ///< nn::Dropout1d's options (LibTorch's alias): p
using Dropout2dOptions = DropoutOptions;  ///< nn::Dropout2d's options (LibTorch's alias): p

/// torch.nn.Dropout1d: (N, C, L) or (C, L) -> same shape, whole channels dropped in training.
class Dropout1dImpl : public Module {
 public:
  /// Builds the module; ValueError for p outside [0, 1].
  explicit Dropout1dImpl(const Dropout1dOptions& options = {});
  Tensor forward(const Tensor& x);  ///< dropout1d(x, p, is_training(), generator)
  void pretty_print(std::ostream& os) const override;
  Dropout1dOptions options;        ///< the options it was built with
  Generator* generator = nullptr;  ///< the default generator when null
};
/// The holder of Dropout1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Dropout1d);

/// torch.nn.Dropout2d: (N, C, H, W) or (C, H, W) -> same shape, whole channels dropped in training.
class Dropout2dImpl : public Module {
 public:
  /// Builds the module; ValueError for p outside [0, 1].
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  Tensor forward(const Tensor& x);  ///< dropout2d(x, p, is_training(), generator)
  void pretty_print(std::ostream& os) const override;
  Dropout2dOptions options;        ///< the options it was built with
  Generator* generator = nullptr;  ///< the default generator when null
};
/// The holder of Dropout2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Dropout2d);

}  // namespace ag::nn
