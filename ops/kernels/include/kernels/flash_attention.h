#pragma once
// Fused attention kernels (flash_attention.cpp). q (..., L, d), k (..., S, d),
// v (..., S, dv) share their batch dims, except with group > 1 (grouped-query
// attention): q (..., h, L, d), k (..., g, S, d), v (..., g, S, dv), h = g * group.
// mask (bool or float, not requiring grad) broadcasts to q's (..., L, S). Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

struct FlashConfig {
  double scale = 1.0;
  bool causal = false;
  // With causal, query i sees keys j <= i + causal_offset: 0 for CausalVariant::upper_left,
  // S - L for lower_right.
  int64_t causal_offset = 0;
  // Query heads per key/value head (grouped-query attention); 1 = one K/V head per query head.
  int64_t group = 1;
  bool bool_mask = false;
  // Dropout on the attention weights: weight (i, j) of batch slice b is kept when
  // hash(seed, b, i, j) < (1 - p) * 2^32, so the backward regenerates the same mask.
  double dropout_p = 0.0;
  uint64_t seed = 0;
  // Per query batch slice b (q's batch dims flattened; (B, h) for heads), keys
  // j >= key_len[b] are masked for every query of the slice, so the kernels never read
  // their K/V rows: a padded key's tile is skipped, the boundary tile cut short.
  // (n slices) i64 from flash_key_lengths, or undefined (every key may be visible).
  Tensor key_len;
};

// What a mask (broadcastable to q's (..., L, S)) says about trailing keys: len as
// FlashConfig::key_len wants it (undefined when no slice ends early), and `exact` when
// the mask is nothing more than that (bool true / float 0 on keys j < len[b], false /
// -inf past it, the same for every query), so the kernels need not read it at all.
struct FlashKeyLengths {
  Tensor len;
  bool exact = false;
};
FlashKeyLengths flash_key_lengths(const Tensor& q, const Tensor& k, const Tensor& mask);

struct FlashForward {
  Tensor out;  // (..., L, dv)
  Tensor lse;  // (..., L): logsumexp of each score row (-inf for a row with no visible key, NaN with a NaN score)
};
struct FlashGrads {
  Tensor dq, dk, dv;
};

FlashForward flash_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     const FlashConfig& cfg);
FlashGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    const FlashConfig& cfg, const Tensor& out, const Tensor& lse, const Tensor& dout);

}  // namespace ag::kernels
