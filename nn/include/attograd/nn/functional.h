#pragma once
// nn::functional: the stateless forms the modules delegate to (LibTorch's layout).
#include "attograd/nn_ops.h"

namespace ag::nn::functional {

using ag::cross_entropy;
using ag::CrossEntropyOptions;
using ag::dropout;
using ag::embedding;
using ag::gelu;
using ag::layer_norm;
using ag::linear;
using ag::log_softmax;
using ag::mse_loss;
using ag::nll_loss;
using ag::relu;
using ag::scaled_dot_product_attention;
using ag::softmax;

}  // namespace ag::nn::functional
