#pragma once
// Fused attention kernels (flash_attention.cpp). q (..., L, d), k (..., S, d),
// v (..., S, dv) share their batch dims; mask (bool or float, not requiring grad)
// broadcasts to (..., L, S). Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

struct FlashConfig {
  double scale = 1.0;
  bool causal = false;
  bool bool_mask = false;
  // Dropout on the attention weights: weight (i, j) of batch slice b is kept when
  // hash(seed, b, i, j) < (1 - p) * 2^32, so the backward regenerates the same mask.
  double dropout_p = 0.0;
  uint64_t seed = 0;
};

struct FlashForward {
  Tensor out;  // (..., L, dv)
  Tensor lse;  // (..., L): logsumexp of each score row (-inf for a row with no visible key)
};
struct FlashGrads {
  Tensor dq, dk, dv;
};

FlashForward flash_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     const FlashConfig& cfg);
FlashGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    const FlashConfig& cfg, const Tensor& out, const Tensor& lse, const Tensor& dout);

}  // namespace ag::kernels
