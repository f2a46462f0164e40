#pragma once
/// \file
/// nn::functional: the stateless forms the modules delegate to (LibTorch's layout).
#include "attograd/nn_ops.h"
#include "attograd/ops/loss.h"

namespace ag::nn::functional {

using ag::binary_cross_entropy;
using ag::binary_cross_entropy_with_logits;
using ag::cosine_similarity;
using ag::cross_entropy;
using ag::CrossEntropyOptions;
using ag::dropout;
using ag::embedding;
using ag::gelu;
using ag::huber_loss;
using ag::kl_div;
using ag::KLDivReduction;
using ag::l1_loss;
using ag::layer_norm;
using ag::linear;
using ag::log_softmax;
using ag::mse_loss;
using ag::nll_loss;
using ag::NLLOptions;
using ag::normalize;
using ag::Reduction;
using ag::relu;
using ag::scaled_dot_product_attention;
using ag::smooth_l1_loss;
using ag::softmax;

}  // namespace ag::nn::functional
