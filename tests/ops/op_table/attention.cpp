// Op table lines: scaled dot-product attention with its mask builders
// (ops/attention.cpp).
#include "attograd/detail/attention.h"
#include "op_table.h"

namespace op_table {
namespace {
// Attention options set member by member: designated initializers that leave out
// attn_mask or scale trip GCC's -Wmissing-field-initializers.
SdpaOptions with_mask(const Tensor& m) {
  SdpaOptions o;
  o.attn_mask = m;
  return o;
}
SdpaOptions causal() {
  SdpaOptions o;
  o.causal = true;
  return o;
}
// Grouped-query attention (k, v with fewer heads than q), optionally causal lower_right.
SdpaOptions gqa(bool fused, bool lower_right_causal = false, const Tensor& m = {}) {
  SdpaOptions o;
  o.enable_gqa = true;
  o.fused = fused;
  o.attn_mask = m;
  o.causal = lower_right_causal;
  o.causal_variant = CausalVariant::lower_right;
  return o;
}
}  // namespace

AG_OP_TABLE(attention) {
  return {
      {"scaled_dot_product_attention",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2]).first; }},
      {"scaled_dot_product_attention bool mask",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {3, 4});  // (L, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention float mask (an input too)",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}, {3, 4}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(x[3])).first; }},
      {"scaled_dot_product_attention additive_mask",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = additive_mask(bools({1, 1, 0, 0, 1, 0, 1, 0}, {2, 1, 4}), DType::f64);  // (B, 1, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention causal",
       {{2, 3, 2}, {2, 3, 2}, {2, 3, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], causal()).first; }},
      {"scaled_dot_product_attention fully masked row",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4});  // query 1 sees no key
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention keep_mask_from_lengths and causal_mask",
       {{2, 3, 2}, {2, 3, 2}, {2, 3, 3}},
       [](auto& x) {
         // (B, 1, S) & (L, S) -> (B, L, S); batch 1 has one real token.
         Tensor pad = keep_mask_from_lengths(i64({3, 1}, {2}), 3).unsqueeze(1);
         Tensor m = logical_and(pad, causal_mask(3, 3));
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention keep_mask_from_lengths length 0 (all rows masked)",
       {{2, 2, 2}, {2, 3, 2}, {2, 3, 2}},
       [](auto& x) {
         Tensor m = keep_mask_from_lengths(i64({2, 0}, {2}), 3).unsqueeze(1);  // (B, 1, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention weights and scale",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         SdpaOptions o;
         o.scale = 0.7;
         o.need_weights = true;
         return scaled_dot_product_attention(x[0], x[1], x[2], o).second;
       }},
      {"scaled_dot_product_attention heads non-contiguous",
       {{1, 2, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], causal()).first; },
       transposed},
      {"scaled_dot_product_attention dropout",
       {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(11);  // the same mask on every evaluation
         SdpaOptions o;
         o.dropout_p = 0.3;
         o.generator = &gen;
         return scaled_dot_product_attention(x[0], x[1], x[2], o).first;
       }},
      {"scaled_dot_product_attention enable_gqa g = h/2 (fused)",
       {{1, 4, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], gqa(true)).first; }},
      {"scaled_dot_product_attention enable_gqa g = h/2 (composite)",
       {{1, 4, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], gqa(false)).first; }},
      {"scaled_dot_product_attention enable_gqa g = 1 bool mask",
       {{2, 3, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 2}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4});  // query 1 sees no key
         return scaled_dot_product_attention(x[0], x[1], x[2], gqa(true, false, m)).first;
       }},
      {"scaled_dot_product_attention enable_gqa causal lower_right, L < S",
       {{1, 4, 2, 2}, {1, 2, 4, 2}, {1, 2, 4, 2}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], gqa(true, true)).first; }},
      {"scaled_dot_product_attention causal lower_right composite, float mask",
       {{2, 2, 2}, {2, 3, 2}, {2, 3, 2}, {2, 3}},
       [](auto& x) {
         // Causal with a mask: the modules' internal entry point (the public op refuses it).
         return ag::detail::sdpa_causal_and_mask(x[0], x[1], x[2], gqa(false, true, x[3])).first;
       }},
  };
}

}  // namespace op_table
