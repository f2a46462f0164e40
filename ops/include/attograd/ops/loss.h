#pragma once
// Losses beyond nn_ops.h's cross_entropy / nll_loss / mse_loss, and distance functions
// (ops/losses_more.cpp).
#include "attograd/nn_ops.h"

namespace ag {}  // namespace ag
