// Op table lines: Losses.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(loss) {
  return {
      {"cross_entropy mean", {{3, 4}}, [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3})); }},
      {"cross_entropy sum", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::sum}); }},
      {"cross_entropy none", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::none}); }},
      {"cross_entropy ignore_index default -100", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({2, -100, 1}, {3})); }},
      {"cross_entropy ignore_index 1 sum", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({1, 3, 1}, {3}), {.ignore_index = 1, .reduction = Reduction::sum});
       }},
      {"cross_entropy label_smoothing", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.label_smoothing = 0.2}); }},
      {"cross_entropy label_smoothing ignore_index none", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 1}, {3}),
                              {.label_smoothing = 0.1, .reduction = Reduction::none});
       }},
      {"cross_entropy label_smoothing ignore_index mean", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, -100, 1}, {3}), {.label_smoothing = 0.3}); }},
      {"cross_entropy 3-D (N,C,d)", {{2, 3, 2}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 2, 1, 1}, {2, 2})); }},
      {"cross_entropy 3-D (N,C,d) label_smoothing ignore_index sum", {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 2, 1}, {2, 2}),
                              {.label_smoothing = 0.25, .reduction = Reduction::sum});
       }},
      {"cross_entropy 3-D (N,C,d) none non-contiguous", {{2, 3, 2}},
       [](auto& x) { return cross_entropy(x[0], i64({2, 0, 1, 1}, {2, 2}), {.reduction = Reduction::none}); },
       transposed},
      {"cross_entropy unbatched (C)", {{4}}, [](auto& x) { return cross_entropy(x[0], i64({2}, {})); }},
      {"cross_entropy unbatched (C) label_smoothing", {{4}},
       [](auto& x) { return cross_entropy(x[0], i64({0}, {}), {.label_smoothing = 0.2}); }},
      {"nll_loss mean", {{3, 4}},
       [](auto& x) { return nll_loss(log_softmax(x[0], 1), i64({0, 3, 1}, {3})); }},
      {"nll_loss raw input ignore_index none", {{3, 4}},
       [](auto& x) { return nll_loss(x[0], i64({0, 2, 2}, {3}), 2, Reduction::none); }},
      {"nll_loss 3-D sum", {{2, 3, 2}},
       [](auto& x) { return nll_loss(x[0], i64({0, 2, 1, -100}, {2, 2}), -100, Reduction::sum); }},
      {"mse_loss mean", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1]); }},
      {"mse_loss sum", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1], Reduction::sum); }},
      {"mse_loss none non-contiguous", {{3, 4}, {3, 4}},
       [](auto& x) { return mse_loss(x[0], x[1], Reduction::none); }, transposed},
      {"mse_loss broadcast target", {{3, 4}, {4}}, [](auto& x) { return mse_loss(x[0], x[1]); }},
      // ---- class weights (C) and probability targets ----
      {"cross_entropy weight mean", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.weight = f64({0.5, 2, 1, 3}, {4})}); }},
      {"cross_entropy weight as input sum", {{3, 4}, {4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::sum, .weight = x[1]}); },
       positive},
      {"cross_entropy weight ignore_index mean", {{4, 3}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 2, 1, 2}, {4}), {.ignore_index = 1, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy weight label_smoothing mean", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.label_smoothing = 0.2, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy weight label_smoothing ignore_index none", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 1}, {3}),
                              {.label_smoothing = 0.3, .reduction = Reduction::none, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy weight label_smoothing ignore_index mean 3-D (N,C,d)", {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 2, 1}, {2, 2}),
                              {.label_smoothing = 0.25, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy weight label_smoothing ignore_index sum unbatched (C)", {{4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({3}, {}),
                              {.label_smoothing = 0.1, .reduction = Reduction::sum, .weight = f64({0.5, 2, 1, 3}, {4})});
       }},
      {"cross_entropy probability targets mean softmax", {{3, 4}, {3, 4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 1)); }},
      {"cross_entropy probability targets sum", {{3, 4}, {3, 4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 1), {.reduction = Reduction::sum}); }},
      {"cross_entropy probability targets none label_smoothing", {{3, 4}, {3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1), {.label_smoothing = 0.2, .reduction = Reduction::none});
       }},
      {"cross_entropy probability targets weight label_smoothing mean 3-D (N,C,d)", {{2, 3, 2}, {2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1), {.label_smoothing = 0.1, .weight = f64({0.5, 2, 3}, {3})});
       }},
      {"cross_entropy probability targets weight none non-contiguous", {{3, 4}, {3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], softmax(x[1], 1), {.reduction = Reduction::none, .weight = f64({0.5, 2, 1, 3}, {4})});
       },
       transposed},
      {"cross_entropy probability targets unbatched (C)", {{4}, {4}},
       [](auto& x) { return cross_entropy(x[0], softmax(x[1], 0)); }},
      {"nll_loss weight mean", {{3, 4}},
       [](auto& x) { return nll_loss(x[0], i64({0, 3, 1}, {3}), {.weight = f64({0.5, 2, 1, 3}, {4})}); }},
      {"nll_loss weight ignore_index none", {{3, 4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, 3}, {3}),
                         {.weight = f64({0.5, 2, 1, 3}, {4}), .ignore_index = 2, .reduction = Reduction::none});
       }},
      {"nll_loss weight ignore_index mean 3-D (N,C,d)", {{2, 3, 2}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 2, -100, 1}, {2, 2}), {.weight = f64({0.5, 2, 3}, {3})});
       }},
      {"nll_loss weight as input sum", {{3, 4}, {4}},
       [](auto& x) {
         return nll_loss(x[0], i64({0, 3, 1}, {3}), {.weight = x[1], .reduction = Reduction::sum});
       }},
  };
}

}  // namespace op_table
