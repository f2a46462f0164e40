// Module table lines: tensor-parallel modules (attograd/nn/tensor_parallel_linear.h,
// tensor_parallel.h) in a world of one (no ag::dist job), where each is its full module:
// the same state-dict keys and shapes as the PyTorch module it shards (the stacks are
// compared with PyTorch's Transformer entries), and eval equal to the full attograd
// module's with dropout 0. PyTorch has no tensor-parallel modules: the printing is
// attograd's own, written here or as the differences from the full module's repr.
#include "module_table.h"

namespace module_table {
namespace {
nn::TransformerLayerOptions tp_layer_options() { return nn::TransformerLayerOptions(4, 2).dim_feedforward(8); }
nn::TransformerOptions tp_transformer_options() {
  return nn::TransformerOptions(4, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(8);
}

// PyTorch's Transformer reprs -> attograd's tensor-parallel ones, after the layers' own
// headers (tp_diffs' first arguments) are replaced.
std::vector<Diff> tp_diffs(std::vector<Diff> headers) {
  const std::vector<Diff> common = {
      {"MultiheadAttention(\n",
       "TensorParallelMultiheadAttention(embed_dim=4, num_heads=2, dropout=0.1, bias=true, world_size=1)(\n"},
      {"NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)",
       "RowParallelLinear(in_features=4, out_features=4, bias=true, input_is_parallel=true, world_size=1)"},
      {"(linear1): Linear(in_features=4, out_features=8, bias=True)",
       "(linear1): ColumnParallelLinear(in_features=4, out_features=8, bias=true, gather_output=false, world_size=1)"},
      {"(linear2): Linear(in_features=8, out_features=4, bias=True)",
       "(linear2): RowParallelLinear(in_features=8, out_features=4, bias=true, input_is_parallel=true, world_size=1)"},
      {"LayerNorm((4,)", "LayerNorm([4]"},
      kInplace,
      kTrue};
  headers.insert(headers.end(), common.begin(), common.end());
  return headers;
}
constexpr Diff kTpEncoderLayer{
    "TransformerEncoderLayer(\n",
    "TensorParallelTransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=8, norm_first=false, world_size=1)(\n"};
constexpr Diff kTpDecoderLayer{
    "TransformerDecoderLayer(\n",
    "TensorParallelTransformerDecoderLayer(d_model=4, nhead=2, dim_feedforward=8, norm_first=false, world_size=1)(\n"};
constexpr Diff kTpEncoder{"TransformerEncoder(\n", "TensorParallelTransformerEncoder(\n"};
constexpr Diff kTpDecoder{"TransformerDecoder(\n", "TensorParallelTransformerDecoder(\n"};
}  // namespace

AG_MODULE_TABLE(tensor_parallel) {
  return {
      {.name = "ColumnParallelLinear",
       .make = [] { return unary(nn::ColumnParallelLinear(3, 4)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 4}},
       .torch = nullptr,
       .repr = "ColumnParallelLinear(in_features=3, out_features=4, bias=true, gather_output=false, world_size=1)",
       .state = {{"weight", {4, 3}}, {"bias", {4}}}},
      {.name = "RowParallelLinear",
       .make = [] { return unary(nn::RowParallelLinear(4, 3)); },
       .inputs = {{2, 4}},
       .outputs = {{2, 3}},
       .torch = nullptr,
       .repr = "RowParallelLinear(in_features=4, out_features=3, bias=true, input_is_parallel=true, world_size=1)",
       .state = {{"weight", {3, 4}}, {"bias", {3}}}},
      {.name = "TensorParallelMultiheadAttention",
       .make = [] { return ternary(nn::TensorParallelMultiheadAttention(4, 2)); },
       .inputs = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .torch = nullptr,
       .repr = "TensorParallelMultiheadAttention(embed_dim=4, num_heads=2, dropout=0, bias=true, world_size=1)(\n"
               "  (out_proj): RowParallelLinear(in_features=4, out_features=4, bias=true, input_is_parallel=true, "
               "world_size=1)\n"
               ")",
       .state =
           {{"in_proj_weight", {12, 4}}, {"in_proj_bias", {12}}, {"out_proj.weight", {4, 4}}, {"out_proj.bias", {4}}}},
      {.name = "TensorParallelFeedForward",
       .make = [] { return unary(nn::TensorParallelFeedForward(nn::TensorParallelFeedForwardOptions(4, 8))); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .torch = nullptr,
       .repr = "TensorParallelFeedForward(d_model=4, dim_feedforward=8, activation=relu, dropout=0, world_size=1)(\n"
               "  (linear1): ColumnParallelLinear(in_features=4, out_features=8, bias=true, gather_output=false, "
               "world_size=1)\n"
               "  (dropout): Dropout(p=0)\n"
               "  (linear2): RowParallelLinear(in_features=8, out_features=4, bias=true, input_is_parallel=true, "
               "world_size=1)\n"
               ")",
       .state = {{"linear1.weight", {8, 4}}, {"linear1.bias", {8}}, {"linear2.weight", {4, 8}}, {"linear2.bias", {4}}}},
      {.name = "TensorParallelTransformerEncoderLayer",
       .make = [] { return unary(nn::TensorParallelTransformerEncoderLayer(tp_layer_options())); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = tp_diffs({kTpEncoderLayer}),
       .eval_ref = without_dropout([] { return unary(nn::TransformerEncoderLayer(tp_layer_options().dropout(0))); }),
       .torch = "TransformerEncoderLayer"},
      {.name = "TensorParallelTransformerDecoderLayer",
       .make = [] { return binary(nn::TensorParallelTransformerDecoderLayer(tp_layer_options())); },
       .inputs = {{2, 3, 4}, {2, 5, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = tp_diffs({kTpDecoderLayer}),
       .eval_ref = without_dropout([] { return binary(nn::TransformerDecoderLayer(tp_layer_options().dropout(0))); }),
       .torch = "TransformerDecoderLayer"},
      // The stacks are built from full ones (two layers and the final norm).
      {.name = "TensorParallelTransformerEncoder",
       .make =
           [] { return unary(nn::TensorParallelTransformerEncoder(*nn::TransformerEncoder(tp_layer_options(), 2))); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = tp_diffs({kTpEncoderLayer, kTpEncoder}),
       .eval_ref = without_dropout([] { return unary(nn::TransformerEncoder(tp_layer_options().dropout(0), 2)); }),
       .torch = "TransformerEncoder"},
      {.name = "TensorParallelTransformerDecoder",
       .make =
           [] { return binary(nn::TensorParallelTransformerDecoder(*nn::TransformerDecoder(tp_layer_options(), 2))); },
       .inputs = {{2, 3, 4}, {2, 5, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = tp_diffs({kTpDecoderLayer, kTpDecoder}),
       .eval_ref = without_dropout([] { return binary(nn::TransformerDecoder(tp_layer_options().dropout(0), 2)); }),
       .torch = "TransformerDecoder"},
      {.name = "TensorParallelTransformer",
       .make = [] { return binary(nn::TensorParallelTransformer(*nn::Transformer(tp_transformer_options()))); },
       .inputs = {{2, 5, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = tp_diffs({kTpEncoderLayer,
                          kTpDecoderLayer,
                          kTpEncoder,
                          kTpDecoder,
                          {"Transformer(\n", "TensorParallelTransformer(\n"}}),
       .eval_ref = without_dropout([] { return binary(nn::Transformer(tp_transformer_options().dropout(0))); }),
       .torch = "Transformer"},
  };
}

}  // namespace module_table
