// Module table lines: the Transformer family (attograd/nn/transformer.h), d_model 4, 2
// heads, feed-forward 8, PyTorch's dropout 0.1, on batch-first (B 2, T 3, E 4) targets and
// (B 2, S 5, E 4) sources / memories. Eval is the same stack with dropout 0. PyTorch's
// batch_first defaults to false, attograd's to true (marked).
#include "module_table.h"

namespace module_table {
namespace {
nn::TransformerLayerOptions layer_options() { return nn::TransformerLayerOptions(4, 2).dim_feedforward(8); }
nn::TransformerOptions transformer_options() {
  return nn::TransformerOptions(4, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(8);
}
const char* activation_name(nn::Activation a) { return a == nn::Activation::ReLU ? "relu" : "gelu"; }
Json layer_defaults() {
  nn::TransformerLayerOptions o(4, 2);
  return Json{{"dim_feedforward", o.dim_feedforward()},
              {"dropout", o.dropout()},
              {"activation", activation_name(o.activation())},
              {"layer_norm_eps", o.layer_norm_eps()},
              {"batch_first", o.batch_first()},
              {"norm_first", o.norm_first()}};
}
}  // namespace

// PyTorch's repr of the layers, and attograd's: the attention's options printed, its
// out_proj a Linear, LayerNorm's shape as [4], Dropout without inplace, C++'s true.
const std::vector<Diff> kTransformerDiffs = {
    {"MultiheadAttention(\n", "MultiheadAttention(embed_dim=4, num_heads=2, dropout=0.1, bias=true)(\n"},
    {"NonDynamicallyQuantizableLinear", "Linear"},
    {"LayerNorm((4,)", "LayerNorm([4]"},
    kInplace,
    kTrue};

AG_MODULE_TABLE(transformer) {
  return {
      {.name = "TransformerEncoderLayer",
       .make = [] { return unary(nn::TransformerEncoderLayer(layer_options())); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults = layer_defaults,
       .diffs = kTransformerDiffs,
       .default_diffs = {"batch_first"},
       .eval_ref = without_dropout([] { return unary(nn::TransformerEncoderLayer(layer_options().dropout(0))); })},
      {.name = "TransformerDecoderLayer",
       .make = [] { return binary(nn::TransformerDecoderLayer(layer_options())); },
       .inputs = {{2, 3, 4}, {2, 5, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults = layer_defaults,
       .diffs = kTransformerDiffs,
       .default_diffs = {"batch_first"},
       .eval_ref = without_dropout([] { return binary(nn::TransformerDecoderLayer(layer_options().dropout(0))); })},
      // Two layers and the final LayerNorm (torch: norm=nn.LayerNorm(4)).
      {.name = "TransformerEncoder",
       .make = [] { return unary(nn::TransformerEncoder(layer_options(), 2)); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = kTransformerDiffs,
       .eval_ref = without_dropout([] { return unary(nn::TransformerEncoder(layer_options().dropout(0), 2)); })},
      {.name = "TransformerDecoder",
       .make = [] { return binary(nn::TransformerDecoder(layer_options(), 2)); },
       .inputs = {{2, 3, 4}, {2, 5, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .diffs = kTransformerDiffs,
       .eval_ref = without_dropout([] { return binary(nn::TransformerDecoder(layer_options().dropout(0), 2)); })},
      // src (2, 5, 4), tgt (2, 3, 4); PyTorch prints no options.
      {.name = "Transformer",
       .make = [] { return binary(nn::Transformer(transformer_options())); },
       .inputs = {{2, 5, 4}, {2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults =
           [] {
             nn::TransformerOptions o;
             return Json{{"d_model", o.d_model()},
                         {"nhead", o.nhead()},
                         {"num_encoder_layers", o.num_encoder_layers()},
                         {"num_decoder_layers", o.num_decoder_layers()},
                         {"dim_feedforward", o.dim_feedforward()},
                         {"dropout", o.dropout()},
                         {"activation", activation_name(o.activation())},
                         {"layer_norm_eps", o.layer_norm_eps()},
                         {"batch_first", o.batch_first()},
                         {"norm_first", o.norm_first()}};
           },
       .diffs =
           [] {
             std::vector<Diff> d{{"Transformer(\n",
                                  "Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, "
                                  "dim_feedforward=8, dropout=0.1, norm_first=false)(\n"}};
             d.insert(d.end(), kTransformerDiffs.begin(), kTransformerDiffs.end());
             return d;
           }(),
       .default_diffs = {"batch_first"},
       .eval_ref = without_dropout([] { return binary(nn::Transformer(transformer_options().dropout(0))); })},
  };
}

}  // namespace module_table
