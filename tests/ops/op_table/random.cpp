// Op table lines: sampling (ops/random.cpp). multinomial has no gradient (its indices
// are discrete); the line differentiates through it the way a sampler does: the
// probabilities gathered at the drawn classes. The generator is seeded inside the line,
// so every gradcheck evaluation draws the same classes.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(random) {
  return {
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
