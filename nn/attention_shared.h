#pragma once
// Internal to nn/: the head reshapes and the mask combination shared by
// MultiheadAttention (attention.cpp), GroupedQueryAttention (gqa.cpp) and the
// tensor-parallel attention. The modules call
// ag::detail::sdpa_causal_and_mask, which takes the causal flag together with the
// combined mask (the public op refuses both, as PyTorch 2.x), so that the fused kernel
// still skips the key tiles above the diagonal.
#include "attograd/detail/attention.h"  // ag::detail::sdpa_causal_and_mask
#include "attograd/nn/attention.h"

namespace ag::nn::detail {

// AttentionArgs' attn_mask, causal mask (causal_variant) and padding mask (key_keep_mask
// or key_padding_mask) as one mask broadcastable to (B, h, L, S), or undefined when none
// is given. Bool (true = takes part, sdpa's polarity) when all parts are bool, else float (`dtype`) with -inf where not allowed.
// `op` names the module in errors.
Tensor combine_masks(const char* op, const AttentionArgs& args, int64_t B, int64_t h, int64_t L, int64_t S,
                     DType dtype);

// (B, n, heads * d) -> (B, heads, n, d), a view
inline Tensor split_heads(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), n = x.size(1);
  return x.reshape({B, n, heads, x.size(2) / heads}).transpose(1, 2);
}

// (B, heads, n, d) -> (B, n, heads * d)
inline Tensor merge_heads(const Tensor& x) {
  const int64_t B = x.size(0), h = x.size(1), n = x.size(2), d = x.size(3);
  return x.transpose(1, 2).reshape({B, n, h * d});
}

}  // namespace ag::nn::detail
