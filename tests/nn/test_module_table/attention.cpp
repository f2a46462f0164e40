// Module table lines: attention (attograd/nn/attention.h, gqa.h) on query, key and value
// of (B 2, L 3, E 4), batch-first, and the LLaMA blocks (llama.h). Attention,
// GroupedQueryAttention, RMSNorm, RotaryEmbedding and SwiGLU are not in PyTorch 1.13:
// their expectations are attograd's own, written here.
#include "module_table.h"

namespace module_table {

AG_MODULE_TABLE(attention) {
  return {
      // Dropout on the attention weights in training: eval is the module without it.
      // PyTorch prints no options and its out_proj as NonDynamicallyQuantizableLinear;
      // its batch_first defaults to false, attograd's to true.
      {.name = "MultiheadAttention dropout",
       .make = [] { return ternary(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).dropout(0.5))); },
       .inputs = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults =
           [] {
             nn::MultiheadAttentionOptions o(4, 2);
             return Json{{"dropout", o.dropout()},         {"bias", o.bias()},
                         {"add_bias_kv", o.add_bias_kv()}, {"add_zero_attn", o.add_zero_attn()},
                         {"kdim", opt(o.kdim())},          {"vdim", opt(o.vdim())},
                         {"batch_first", o.batch_first()}};
           },
       .diffs = {{"MultiheadAttention(\n", "MultiheadAttention(embed_dim=4, num_heads=2, dropout=0.5, bias=true)(\n"},
                 {"NonDynamicallyQuantizableLinear", "Linear"},
                 kTrue},
       .default_diffs = {"batch_first"},
       .eval_ref = without_dropout([] { return ternary(nn::MultiheadAttention(4, 2)); }),
       .torch = "MultiheadAttention"},
      {.name = "Attention",
       .make = [] { return ternary(nn::Attention(nn::AttentionOptions(4))); },
       .inputs = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .torch = nullptr,
       .repr = "Attention(embed_dim=4)(\n"
               "  (q_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               "  (k_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               "  (v_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               "  (out_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               ")",
       .state = {{"q_proj.weight", {4, 4}},
                 {"q_proj.bias", {4}},
                 {"k_proj.weight", {4, 4}},
                 {"k_proj.bias", {4}},
                 {"v_proj.weight", {4, 4}},
                 {"v_proj.bias", {4}},
                 {"out_proj.weight", {4, 4}},
                 {"out_proj.bias", {4}}}},
      // One key/value head for two query heads, dropout in training.
      {.name = "GroupedQueryAttention num_kv_heads 1 dropout",
       .make =
           [] {
             return ternary(
                 nn::GroupedQueryAttention(nn::GroupedQueryAttentionOptions(4, 2).num_kv_heads(1).dropout(0.5)));
           },
       .inputs = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .eval_ref = without_dropout(
           [] { return ternary(nn::GroupedQueryAttention(nn::GroupedQueryAttentionOptions(4, 2).num_kv_heads(1))); }),
       .torch = nullptr,
       .repr = "GroupedQueryAttention(embed_dim=4, num_heads=2, num_kv_heads=1, dropout=0.5, bias=true)(\n"
               "  (q_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               "  (k_proj): Linear(in_features=4, out_features=2, bias=true)\n"
               "  (v_proj): Linear(in_features=4, out_features=2, bias=true)\n"
               "  (out_proj): Linear(in_features=4, out_features=4, bias=true)\n"
               ")",
       .state = {{"q_proj.weight", {4, 4}},
                 {"q_proj.bias", {4}},
                 {"k_proj.weight", {2, 4}},
                 {"k_proj.bias", {2}},
                 {"v_proj.weight", {2, 4}},
                 {"v_proj.bias", {2}},
                 {"out_proj.weight", {4, 4}},
                 {"out_proj.bias", {4}}}},

      // ---- LLaMA's blocks ----
      // PyTorch 2.4's nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True).
      {.name = "RMSNorm",
       .make = [] { return unary(nn::RMSNorm(nn::RMSNormOptions({4}))); },
       .inputs = {{2, 4}},
       .outputs = {{2, 4}},
       .defaults =
           [] {
             nn::RMSNormOptions o({4});
             return Json{{"eps", opt(o.eps())}, {"elementwise_affine", o.elementwise_affine()}};
           },
       .torch = nullptr,
       .repr = "RMSNorm([4], eps=None, elementwise_affine=true)",
       .state = {{"weight", {4}}},
       .torch_defaults =
           [] {
             return Json{{"eps", nullptr}, {"elementwise_affine", true}};
           }},
      // (B 1, heads 2, L 3, d 4) -> the same; no state (the tables are recomputed).
      {.name = "RotaryEmbedding",
       .make = [] { return unary(nn::RotaryEmbedding(nn::RotaryEmbeddingOptions(4).max_position(8))); },
       .inputs = {{1, 2, 3, 4}},
       .outputs = {{1, 2, 3, 4}},
       .torch = nullptr,
       .repr = "RotaryEmbedding(head_dim=4, base=10000, max_position=8)"},
      {.name = "SwiGLU",
       .make = [] { return unary(nn::SwiGLU(4, 8)); },
       .inputs = {{2, 4}},
       .outputs = {{2, 4}},
       .torch = nullptr,
       .repr = "SwiGLU(dim=4, hidden_dim=8, bias=false)(\n"
               "  (w1): Linear(in_features=4, out_features=8, bias=false)\n"
               "  (w2): Linear(in_features=8, out_features=4, bias=false)\n"
               "  (w3): Linear(in_features=4, out_features=8, bias=false)\n"
               ")",
       .state = {{"w1.weight", {8, 4}}, {"w2.weight", {4, 8}}, {"w3.weight", {8, 4}}}},
  };
}

}  // namespace module_table
