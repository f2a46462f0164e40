#pragma once
// Activation modules (nn::SiLU, nn::Softplus, ...), each a thin holder over its
// functional form in <attograd/ops/pointwise.h>.
#include "attograd/nn/module.h"
#include "attograd/ops/pointwise.h"

namespace ag::nn {}  // namespace ag::nn
