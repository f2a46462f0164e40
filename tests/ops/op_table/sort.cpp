// Op table lines: sorting (ops/sort.cpp). The values are gathered at the sorted indices,
// so their gradient routes back to the picked elements.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(sort) {
  return {
      {"sort values last dim", {{3, 4}}, [](auto& x) { return sort(x[0]).first; }, distinct},
      {"sort descending dim 0", {{3, 4}}, [](auto& x) { return sort(x[0], 0, true).first; }, distinct},
      {"sort non-contiguous stable", {{3, 4}}, [](auto& x) { return sort(x[0], -1, false, true).first; }, transposed},
      {"sort of a 0-d tensor", {Shape{}}, [](auto& x) { return sort(x[0], 0).first * 2.0; }},
      {"gather at argsort (descending dim 1)",
       {{3, 4}},
       [](auto& x) { return gather(x[0], 1, argsort(x[0], 1, true)); },
       distinct},
      {"topk k 2 largest sorted", {{3, 5}}, [](auto& x) { return topk(x[0], 2).first; }, distinct},
      {"topk smallest dim 0", {{4, 3}}, [](auto& x) { return topk(x[0], 3, 0, false).first; }, distinct},
      {"topk unsorted non-contiguous",
       {{3, 5}},
       [](auto& x) { return topk(x[0], 3, -1, true, false).first; },
       transposed},
      {"topk partial sort path (k * 64 <= n)", {{2, 130}}, [](auto& x) { return topk(x[0], 2, 1).first; }, distinct},
  };
}

}  // namespace op_table
