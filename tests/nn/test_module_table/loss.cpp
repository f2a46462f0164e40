// Module table lines: losses (attograd/nn/loss.h), forward(input, target) -> the mean
// loss; gradcheck through the input (targets are constants). Printing differences from
// PyTorch: modules without options print no "()", and some print options torch does not.
#include "module_table.h"

namespace module_table {
namespace {
// input (2, 3) and a target of the same shape -> the scalar loss.
Line pointwise_loss(const char* name, std::function<Made()> make, std::vector<Diff> diffs,
                    std::function<Json()> defaults, Init target = normal) {
  return {.name = name,
          .make = std::move(make),
          .inputs = {{2, 3}, {2, 3}},
          .outputs = {{}},
          .init = {normal, target},
          .grad_inputs = 1,
          .defaults = std::move(defaults),
          .diffs = std::move(diffs)};
}
Json reduction_default(Reduction r) { return Json{{"reduction", reduction(r)}}; }
}  // namespace

AG_MODULE_TABLE(loss) {
  return {
      {.name = "BCELoss",
       .make = [] { return binary(nn::BCELoss()); },
       .inputs = {{2, 3}, {2, 3}},
       .outputs = {{}},
       .init = {probs, probs},
       .grad_inputs = 1,
       .defaults =
           [] {
             nn::BCELossOptions o;
             return Json{{"weight", opt(o.weight())}, {"reduction", reduction(o.reduction())}};
           },
       .diffs = {{"BCELoss()", "BCELoss"}}},
      pointwise_loss(
          "BCEWithLogitsLoss", [] { return binary(nn::BCEWithLogitsLoss()); },
          {{"BCEWithLogitsLoss()", "BCEWithLogitsLoss"}},
          [] {
            nn::BCEWithLogitsLossOptions o;
            return Json{{"weight", opt(o.weight())},
                        {"reduction", reduction(o.reduction())},
                        {"pos_weight", opt(o.pos_weight())}};
          },
          probs),
      {.name = "CrossEntropyLoss",
       .make = [] { return binary(nn::CrossEntropyLoss()); },
       .inputs = {{2, 3}, {2}},
       .outputs = {{}},
       .init = {normal, ids<3>},
       .defaults =
           [] {
             nn::CrossEntropyLossOptions o;
             return Json{{"weight", opt(o.weight())},
                         {"ignore_index", o.ignore_index()},
                         {"reduction", reduction(o.reduction())},
                         {"label_smoothing", o.label_smoothing()}};
           },
       .diffs = {{"CrossEntropyLoss()", "CrossEntropyLoss(ignore_index=-100, label_smoothing=0)"}}},
      {.name = "NLLLoss",
       .make = [] { return binary(nn::NLLLoss()); },
       .inputs = {{2, 3}, {2}},
       .outputs = {{}},
       .init = {normal, ids<3>},
       .defaults =
           [] {
             nn::NLLLossOptions o;
             return Json{{"weight", opt(o.weight())},
                         {"ignore_index", o.ignore_index()},
                         {"reduction", reduction(o.reduction())}};
           },
       .diffs = {{"NLLLoss()", "NLLLoss"}}},
      pointwise_loss(
          "L1Loss", [] { return binary(nn::L1Loss()); }, {{"L1Loss()", "L1Loss"}},
          [] { return reduction_default(nn::L1LossOptions().reduction()); }),
      pointwise_loss(
          "MSELoss", [] { return binary(nn::MSELoss()); }, {{"MSELoss()", "MSELoss"}},
          [] { return reduction_default(nn::MSELossOptions().reduction()); }),
      pointwise_loss(
          "SmoothL1Loss", [] { return binary(nn::SmoothL1Loss()); }, {{"SmoothL1Loss()", "SmoothL1Loss(beta=1)"}},
          [] {
            nn::SmoothL1LossOptions o;
            return Json{{"reduction", reduction(o.reduction())}, {"beta", o.beta()}};
          }),
      pointwise_loss(
          "HuberLoss", [] { return binary(nn::HuberLoss()); }, {{"HuberLoss()", "HuberLoss(delta=1)"}},
          [] {
            nn::HuberLossOptions o;
            return Json{{"reduction", reduction(o.reduction())}, {"delta", o.delta()}};
          }),
      // input log-probabilities, target probabilities.
      pointwise_loss(
          "KLDivLoss", [] { return binary(nn::KLDivLoss()); }, {{"KLDivLoss()", "KLDivLoss"}},
          [] {
            nn::KLDivLossOptions o;
            return Json{{"reduction", o.reduction() == KLDivReduction::mean ? "mean" : "other"},
                        {"log_target", o.log_target()}};
          },
          probs),
      // (2, 3) and (2, 3) -> (2): similarity along dim 1, both inputs differentiable.
      {.name = "CosineSimilarity",
       .make = [] { return binary(nn::CosineSimilarity()); },
       .inputs = {{2, 3}, {2, 3}},
       .outputs = {{2}},
       .defaults =
           [] {
             nn::CosineSimilarityOptions o;
             return Json{{"dim", o.dim()}, {"eps", o.eps()}};
           },
       .diffs = {{"CosineSimilarity()", "CosineSimilarity(dim=1, eps=1e-08)"}}},
  };
}

}  // namespace module_table
