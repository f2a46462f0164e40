// Op table lines: dropout and sampling (ops/random.cpp). The generators are seeded inside
// the lines, so every gradcheck evaluation draws the same mask and classes. multinomial
// has no gradient (its indices are discrete); its line differentiates through it the way
// a sampler does: the probabilities gathered at the drawn classes.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(random) {
  return {
      {"dropout p=0.3",
       {{3, 4}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(7);  // the same mask on every evaluation
         return dropout(x[0], 0.3, true, &gen);
       }},
      {"dropout eval (identity)", {{3, 4}}, [](auto& x) { return dropout(x[0], 0.3, false); }},
      {"dropout p=1", {{3, 4}}, [](auto& x) { return dropout(x[0], 1.0, true); }},
      {"dropout1d p=0.4 whole channels",
       {{2, 3, 4}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(5);  // the same channel mask on every evaluation
         return dropout1d(x[0], 0.4, true, &gen);
       }},
      {"dropout1d unbatched eval (identity)", {{3, 4}}, [](auto& x) { return dropout1d(x[0], 0.4, false); }},
      {"dropout2d p=0.5 whole channels",
       {{2, 3, 2, 2}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(9);
         return dropout2d(x[0], 0.5, true, &gen);
       }},
      {"dropout2d unbatched p=0.3 non-contiguous",
       {{3, 2, 2}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(2);
         return dropout2d(x[0], 0.3, true, &gen);
       },
       transposed},
      {"dropout2d p=1", {{2, 3, 2, 2}}, [](auto& x) { return dropout2d(x[0], 1.0, true); }},
      {"multinomial (gather of softmax probs at 2 classes drawn without replacement)",
       {{3, 5}},
       [](auto& x) {
         Tensor p = softmax(x[0], -1);
         Generator g(11);
         return gather(p, 1, multinomial(p, 2, false, &g));
       }},
  };
}

}  // namespace op_table
