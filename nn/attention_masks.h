#pragma once
// Internal to nn/: the mask combination shared by MultiheadAttention (attention.cpp),
// GroupedQueryAttention (gqa.cpp) and the tensor-parallel attention. The modules call
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

}  // namespace ag::nn::detail
