// Module table lines: Linear, Embedding, LayerNorm, the dropouts and the shape modules
// (attograd/nn/layers.h, dropout.h), and the normalizations (attograd/nn/batchnorm.h).
// Printing differences from PyTorch: C++'s true/false, LayerNorm's shape as [4] (torch's
// tuple (4,)), and Dropout without `inplace`.
#include "module_table.h"

namespace module_table {
namespace {
Json batchnorm_defaults() {
  nn::BatchNormOptions o(3);
  return Json{{"eps", o.eps()},
              {"momentum", opt(o.momentum())},
              {"affine", o.affine()},
              {"track_running_stats", o.track_running_stats()}};
}
Json instancenorm_defaults() {
  nn::InstanceNormOptions o(3);
  return Json{{"eps", o.eps()},
              {"momentum", o.momentum()},
              {"affine", o.affine()},
              {"track_running_stats", o.track_running_stats()}};
}
Json dropout_defaults() { return Json{{"p", nn::DropoutOptions().p()}}; }
}  // namespace

AG_MODULE_TABLE(layers) {
  return {
      {.name = "Linear",
       .make = [] { return unary(nn::Linear(3, 4)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 4}},
       .defaults =
           [] {
             return Json{{"bias", nn::LinearOptions(3, 4).bias()}};
           },
       .diffs = {kTrue}},
      {.name = "Embedding",
       .make = [] { return unary(nn::Embedding(5, 3)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 3, 3}},
       .init = {ids<5>},
       .grad = Grad::none,  // its input is ids
       .defaults =
           [] {
             return Json{{"padding_idx", opt(nn::EmbeddingOptions(5, 3).padding_idx())}};
           }},
      {.name = "LayerNorm",
       .make = [] { return unary(nn::LayerNorm(nn::LayerNormOptions({4}))); },
       .inputs = {{2, 4}},
       .outputs = {{2, 4}},
       .defaults =
           [] {
             nn::LayerNormOptions o({4});
             return Json{{"eps", o.eps()}, {"elementwise_affine", o.elementwise_affine()}};
           },
       .diffs = {{"(4,)", "[4]"}, kTrue}},
      {.name = "Dropout",
       .make = [] { return unary(nn::Dropout()); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults = dropout_defaults,
       .diffs = {kInplace},
       .eval_ref = identity},
      {.name = "Dropout1d",
       .make = [] { return unary(nn::Dropout1d()); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .grad = Grad::eval,
       .defaults = dropout_defaults,
       .diffs = {kInplace},
       .eval_ref = identity},
      {.name = "Dropout2d",
       .make = [] { return unary(nn::Dropout2d()); },
       .inputs = {{2, 3, 2, 2}},
       .outputs = {{2, 3, 2, 2}},
       .grad = Grad::eval,
       .defaults = dropout_defaults,
       .diffs = {kInplace},
       .eval_ref = identity},
      {.name = "Identity",
       .make = [] { return unary(nn::Identity()); },
       .inputs = {{2, 3}},
       .outputs = {{2, 3}},
       .diffs = {{"Identity()", "Identity"}}},
      {.name = "Flatten",
       .make = [] { return unary(nn::Flatten()); },
       .inputs = {{2, 3, 2}},
       .outputs = {{2, 6}},
       .defaults =
           [] {
             nn::FlattenOptions o;
             return Json{{"start_dim", o.start_dim()}, {"end_dim", o.end_dim()}};
           }},
      {.name = "Unflatten",
       .make =
           [] {
             return unary(nn::Unflatten(nn::UnflattenOptions(1, {2, 3})));
           },
       .inputs = {{2, 6}},
       .outputs = {{2, 2, 3}}},

      // ---- normalization: eval normalizes with the running statistics ----
      {.name = "BatchNorm1d",
       .make = [] { return unary(nn::BatchNorm1d(3)); },
       .inputs = {{4, 3}},
       .outputs = {{4, 3}},
       .defaults = batchnorm_defaults,
       .diffs = {kTrue},
       .eval_ref = running_stats_formula<nn::BatchNormImplBase>},
      {.name = "BatchNorm2d",
       .make = [] { return unary(nn::BatchNorm2d(3)); },
       .inputs = {{2, 3, 2, 2}},
       .outputs = {{2, 3, 2, 2}},
       .defaults = batchnorm_defaults,
       .diffs = {kTrue},
       .eval_ref = running_stats_formula<nn::BatchNormImplBase>},
      // In a world of one (no ag::dist job): BatchNorm.
      {.name = "SyncBatchNorm",
       .make = [] { return unary(nn::SyncBatchNorm(3)); },
       .inputs = {{4, 3, 2}},
       .outputs = {{4, 3, 2}},
       .defaults = batchnorm_defaults,
       .diffs = {kTrue},
       .eval_ref = running_stats_formula<nn::BatchNormImplBase>},
      {.name = "InstanceNorm1d",
       .make = [] { return unary(nn::InstanceNorm1d(3)); },
       .inputs = {{2, 3, 4}},
       .outputs = {{2, 3, 4}},
       .defaults = instancenorm_defaults,
       .diffs = {kFalse}},
      {.name = "InstanceNorm2d affine track_running_stats",
       .make =
           [] { return unary(nn::InstanceNorm2d(nn::InstanceNormOptions(3).affine(true).track_running_stats(true))); },
       .inputs = {{2, 3, 2, 2}},
       .outputs = {{2, 3, 2, 2}},
       .defaults = instancenorm_defaults,
       .diffs = {kTrue},
       .eval_ref = running_stats_formula<nn::InstanceNormImplBase>,
       .torch = "InstanceNorm2d"},
      {.name = "GroupNorm",
       .make = [] { return unary(nn::GroupNorm(2, 4)); },
       .inputs = {{2, 4, 3}},
       .outputs = {{2, 4, 3}},
       .defaults =
           [] {
             nn::GroupNormOptions o(2, 4);
             return Json{{"eps", o.eps()}, {"affine", o.affine()}};
           },
       .diffs = {kTrue}},
  };
}

}  // namespace module_table
