// Op table lines: the softmax family (ops/softmax.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(softmax) {
  return {
      {"softmax dim -1", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], -1); }},
      {"softmax dim 0", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], 0); }},
      {"softmax dim 1 non-contiguous", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], 1); }, transposed},
      {"log_softmax dim -1", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], -1); }},
      {"log_softmax dim 0", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], 0); }},
      {"log_softmax dim 1 non-contiguous", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], 1); }, transposed},
      {"softmin dim", {{3, 4}}, [](auto& x) { return softmin(x[0], 1); }},
      {"softmin negative dim", {{2, 3, 4}}, [](auto& x) { return softmin(x[0], -2); }},
  };
}

}  // namespace op_table
