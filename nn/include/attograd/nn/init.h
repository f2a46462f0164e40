#pragma once
/// \file
/// In-place initializers (no graph), as torch.nn.init. Each draws from `gen` or the
/// default generator, in row-major order.
#include "attograd/generator.h"
#include "attograd/tensor.h"

namespace ag::nn::init {

/// In place: U[low, high).
void uniform_(Tensor& t, double low, double high, Generator* gen = nullptr);
/// In place: N(mean, std^2).
void normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// In place: every element value.
void constant_(Tensor& t, double value);
/// In place: 0.
void zeros_(Tensor& t);
/// In place: 1.
void ones_(Tensor& t);
/// fan_in, fan_out of a weight (out, in, ...) as PyTorch computes them.
std::pair<int64_t, int64_t> fans(const Tensor& t);
/// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// N(0, s) with s = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// PyTorch's default for Linear weights (a = sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void kaiming_uniform_(Tensor& t, double a = 0.0, Generator* gen = nullptr);

}  // namespace ag::nn::init
