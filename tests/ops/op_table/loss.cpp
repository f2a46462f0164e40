// Op table lines: losses and distances (ops/loss.cpp). Probabilities come from sigmoid /
// softmax of normal inputs, so the gradient also flows into the targets.
#include "op_table.h"

namespace op_table {
namespace {
const Reduction kNoneR = Reduction::none, kSumR = Reduction::sum;
}  // namespace

AG_OP_TABLE(loss) {
  return {
      {"cross_entropy mean",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}));
       }},
      {"cross_entropy sum",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::sum});
       }},
      {"cross_entropy none",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::none});
       }},
      {"cross_entropy ignore_index default -100",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({2, -100, 1}, {3}));
       }},
      {"cross_entropy ignore_index 1 sum",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({1, 3, 1}, {3}), {.ignore_index = 1, .reduction = Reduction::sum});
       }},
      {"cross_entropy label_smoothing",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.label_smoothing = 0.2});
       }},
      {"cross_entropy label_smoothing ignore_index none",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 1}, {3}), {.label_smoothing = 0.1, .reduction = Reduction::none});
       }},
      {"cross_entropy label_smoothing ignore_index mean",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 1}, {3}), {.label_smoothing = 0.3});
       }},
      {"cross_entropy 3-D (N,C,d)",
       {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 2, 1, 1}, {2, 2}));
       }},
      {"cross_entropy 3-D (N,C,d) label_smoothing ignore_index sum",
       {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 2, 1}, {2, 2}),
                              {.label_smoothing = 0.25, .reduction = Reduction::sum});
       }},
      {"cross_entropy 3-D (N,C,d) none non-contiguous",
       {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({2, 0, 1, 1}, {2, 2}), {.reduction = Reduction::none});
       },
       transposed},
      {"cross_entropy unbatched (C)", {{4}}, [](auto& x) { return cross_entropy(x[0], i64({2}, {})); }},
      {"cross_entropy unbatched (C) label_smoothing",
       {{4}},
       [](auto& x) { return cross_entropy(x[0], i64({0}, {}), {.label_smoothing = 0.2}); }},
      {"nll_loss mean",
       {{3, 4}},
       [](auto& x) {
         return nll_loss(log_softmax(x[0], 1), i64({0, 3, 1}, {3}));
       }},
      {"nll_loss raw input ignore_index none",
       {{3, 4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, 2}, {3}), 2, Reduction::none);
       }},
      {"nll_loss 3-D sum",
       {{2, 3, 2}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, 1, -100}, {2, 2}), -100, Reduction::sum);
       }},
      {"mse_loss mean", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1]); }},
      {"mse_loss sum", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1], Reduction::sum); }},
      {"mse_loss none non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) { return mse_loss(x[0], x[1], Reduction::none); },
       transposed},
      {"mse_loss broadcast target", {{3, 4}, {4}}, [](auto& x) { return mse_loss(x[0], x[1]); }},
      // ---- class weights (C) and probability targets ----
      {"cross_entropy weight mean",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy weight as input sum",
       {{3, 4}, {4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::sum, .weight = x[1]});
       },
       positive},
      {"cross_entropy weight ignore_index mean",
       {{4, 3}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 2, 1, 2}, {4}), {.ignore_index = 1, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy weight label_smoothing mean",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.label_smoothing = 0.2, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy weight label_smoothing ignore_index none",
       {{3, 4}},
       [](auto& x) {
         return cross_entropy(
             x[0], i64({0, -100, 1}, {3}),
             {.label_smoothing = 0.3, .reduction = Reduction::none, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy weight label_smoothing ignore_index mean 3-D (N,C,d)",
       {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 2, 1}, {2, 2}),
                              {.label_smoothing = 0.25, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy weight label_smoothing ignore_index sum unbatched (C)",
       {{4}},
       [](auto& x) {
         return cross_entropy(
             x[0], i64({3}, {}),
             {.label_smoothing = 0.1, .reduction = Reduction::sum, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy probability targets mean softmax",
       {{3, 4}, {3, 4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 1)); }},
      {"cross_entropy probability targets sum",
       {{3, 4}, {3, 4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 1), {.reduction = Reduction::sum}); }},
      {"cross_entropy probability targets none label_smoothing",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1), {.label_smoothing = 0.2, .reduction = Reduction::none});
       }},
      {"cross_entropy probability targets weight label_smoothing mean 3-D (N,C,d)",
       {{2, 3, 2}, {2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1), {.label_smoothing = 0.1, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy probability targets weight none non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1),
                              {.reduction = Reduction::none, .weight = f64({0.5, 2, 1, 3}, {4})});
       },
       transposed},
      {"cross_entropy probability targets unbatched (C)",
       {{4}, {4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 0)); }},
      {"nll_loss weight mean",
       {{3, 4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 3, 1}, {3}), {.weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"nll_loss weight ignore_index none",
       {{3, 4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, 3}, {3}),
                         {.weight = f64({0.5, 2, 1, 3}, {4}), .ignore_index = 2, .reduction = Reduction::none});
       }},
      {"nll_loss weight ignore_index mean 3-D (N,C,d)",
       {{2, 3, 2}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, -100, 1}, {2, 2}), {.weight = f64({0.5, 2, 3}, {3})});
       }},
      {"nll_loss weight as input sum",
       {{3, 4}, {4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 3, 1}, {3}), {.weight = x[1], .reduction = Reduction::sum});
       }},
      // ---- binary_cross_entropy ----
      {"binary_cross_entropy mean sigmoid",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1])); }},
      {"binary_cross_entropy sum",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), {}, kSumR); }},
      {"binary_cross_entropy none non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), {}, kNoneR); },
       transposed},
      {"binary_cross_entropy weight broadcast (4) mean",
       {{3, 4}, {3, 4}, {4}},
       [](auto& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), exp(x[2])); }},
      {"binary_cross_entropy weight none",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), f64({1, 2, 0.5, 3, 0.25, 1}, {2, 3}), kNoneR);
       }},
      // ---- binary_cross_entropy_with_logits ----
      {"binary_cross_entropy_with_logits mean",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1])); }},
      {"binary_cross_entropy_with_logits sum",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), {}, {}, kSumR); }},
      {"binary_cross_entropy_with_logits none non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), {}, {}, kNoneR); },
       transposed},
      {"binary_cross_entropy_with_logits weight mean",
       {{3, 4}, {3, 4}, {3, 1}},
       [](auto& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), exp(x[2])); }},
      {"binary_cross_entropy_with_logits pos_weight (4) along the last dim mean",
       {{3, 4}, {3, 4}, {4}},
       [](auto& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), {}, exp(x[2])); }},
      {"binary_cross_entropy_with_logits pos_weight weight none",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), f64({2, 0.5, 1}, {3}), f64({3, 1, 0.25}, {3}),
                                                 kNoneR);
       }},
      {"binary_cross_entropy_with_logits pos_weight sum 3-D",
       {{2, 2, 3}, {2, 2, 3}},
       [](auto& x) {
         return binary_cross_entropy_with_logits(x[0] * 5.0, sigmoid(x[1]), {}, f64({3, 1, 0.25}, {3}), kSumR);
       }},
      // ---- l1 / smooth_l1 / huber (distinct: |input - target| >= 0.1, never 0.4, 0.6 or 1) ----
      {"l1_loss mean", {{3, 4}, {3, 4}}, [](auto& x) { return l1_loss(x[0], x[1]); }, distinct},
      {"l1_loss sum broadcast", {{3, 4}, {4}}, [](auto& x) { return l1_loss(x[0], x[1], kSumR); }, distinct},
      {"l1_loss none", {{3, 4}, {3, 4}}, [](auto& x) { return l1_loss(x[0], x[1], kNoneR); }, distinct},
      {"smooth_l1_loss mean", {{4, 5}, {4, 5}}, [](auto& x) { return smooth_l1_loss(x[0], x[1]); }, distinct},
      {"smooth_l1_loss beta 0.4 sum",
       {{4, 5}, {4, 5}},
       [](auto& x) { return smooth_l1_loss(x[0], x[1], kSumR, 0.4); },
       distinct},
      {"smooth_l1_loss beta 0 is l1 none broadcast",
       {{4, 5}, {5}},
       [](auto& x) { return smooth_l1_loss(x[0], x[1], kNoneR, 0.0); },
       distinct},
      {"huber_loss mean", {{4, 5}, {4, 5}}, [](auto& x) { return huber_loss(x[0], x[1]); }, distinct},
      {"huber_loss delta 0.6 sum broadcast",
       {{4, 5}, {5}},
       [](auto& x) { return huber_loss(x[0], x[1], kSumR, 0.6); },
       distinct},
      {"huber_loss delta 2.4 none",
       {{4, 5}, {4, 5}},
       [](auto& x) { return huber_loss(x[0], x[1], kNoneR, 2.4); },
       distinct},
      // ---- kl_div: input log_softmax, target softmax (or log_softmax with log_target) ----
      {"kl_div mean log_softmax",
       {{3, 4}, {3, 4}},
       [](auto& x) { return kl_div(log_softmax(x[0], 1), softmax(x[1], 1)); }},
      {"kl_div batchmean",
       {{3, 4}, {3, 4}},
       [](auto& x) { return kl_div(log_softmax(x[0], 1), softmax(x[1], 1), KLDivReduction::batchmean); }},
      {"kl_div sum",
       {{3, 4}, {3, 4}},
       [](auto& x) { return kl_div(log_softmax(x[0], 1), softmax(x[1], 1), KLDivReduction::sum); }},
      {"kl_div none broadcast",
       {{3, 4}, {4}},
       [](auto& x) { return kl_div(log_softmax(x[0], 1), softmax(x[1], 0), KLDivReduction::none); }},
      {"kl_div log_target batchmean",
       {{3, 4}, {3, 4}},
       [](auto& x) { return kl_div(log_softmax(x[0], 1), log_softmax(x[1], 1), KLDivReduction::batchmean, true); }},
      {"kl_div log_target Reduction none non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) { return kl_div(x[0], x[1], Reduction::none, true); },
       transposed},
      {"kl_div Reduction sum", {{3, 4}, {3, 4}}, [](auto& x) { return kl_div(x[0], x[1], Reduction::sum); }, positive},
      // ---- cosine_similarity / normalize (norms kept above eps: a clamped norm's
      // gradient is PyTorch's pass-through, not the forward's derivative) ----
      {"cosine_similarity dim 1", {{3, 4}, {3, 4}}, [](auto& x) { return cosine_similarity(x[0], x[1]); }},
      {"cosine_similarity dim 0", {{3, 4}, {3, 4}}, [](auto& x) { return cosine_similarity(x[0], x[1], 0); }},
      {"cosine_similarity broadcast (2,3,4) (4) dim -1",
       {{2, 3, 4}, {4}},
       [](auto& x) { return cosine_similarity(x[0], x[1], -1); }},
      {"cosine_similarity non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) { return cosine_similarity(x[0], x[1]); },
       transposed},
  };
}

}  // namespace op_table
