#pragma once
// Fused batch norm kernels (batch_norm.cpp), PyTorch's native_batch_norm on the CPU:
// per-channel statistics of x (N, C, *) over N and *, threaded over channels, and a
// closed-form backward from the saved mean and 1/std. Internal header.
//
// Legend: N batch, C channels, S = prod(*) the spatial size, M = N * S the values per
// channel. bf16 / f16 x: computed in f32 (weight, bias, running stats read as f32), y
// rounded once; mean, invstd and unbiased_var are then f32.
#include "kernels/kernels.h"

namespace ag::kernels {

struct BatchNormForward {
  Tensor y;             // x's shape, contiguous
  Tensor mean;          // (C): the batch mean (training) or running_mean (eval)
  Tensor invstd;        // (C): 1 / sqrt(var + eps), var the biased batch variance or running_var
  Tensor unbiased_var;  // (C), training only: sum (x - mean)^2 / (M - 1), for the running stats
};
// training: the batch statistics; otherwise running_mean and running_var (both (C)).
// weight and bias ((C)) optional. y = x * a + b' with a = invstd * weight and
// b' = bias - mean * a per channel, as PyTorch's CPU kernel.
BatchNormForward batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                    const Tensor& running_mean, const Tensor& running_var, bool training, double eps);

struct BatchNormGrads {
  Tensor dx, dw, db;  // x's shape, (C), (C); undefined when not asked for
};
// g has x's shape; mean and invstd are the forward's. With xhat = (x - mean) * invstd:
//   db = sum g;  dw = sum g * xhat  (sums over N and *)
//   dx = invstd * w * (g - db / M - xhat * dw / M)   training (the statistics depend on x)
//   dx = invstd * w * g                              eval (they are constants)
BatchNormGrads batch_norm_backward(const Tensor& x, const Tensor& g, const Tensor& mean, const Tensor& invstd,
                                   const Tensor& weight, bool training, bool need_x, bool need_w, bool need_b);

}  // namespace ag::kernels
