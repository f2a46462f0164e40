// Op table lines: Indexing.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(index) {
  return {
      {"index_select repeated ids", {{4, 3}},
       [](auto& x) { return index_select(x[0], 0, i64({2, 0, 2}, {3})); }},
      {"index_select negative dim non-contiguous", {{3, 4}},
       [](auto& x) { return index_select(x[0], -1, i64({3, 1, 1, 0, 3}, {5})); }, transposed},
      {"gather dim 1 repeated", {{3, 4}},
       [](auto& x) { return gather(x[0], 1, i64({0, 0, 3, 2, 1, 2}, {3, 2})); }},
      {"gather dim 0 non-contiguous", {{3, 4}},
       [](auto& x) { return gather(x[0], 0, i64({2, 0, 1, 1, 0, 0, 2, 2}, {2, 4})); }, transposed},
      {"embedding repeated ids", {{5, 3}},
       [](auto& x) { return embedding(i64({1, 4, 1, 0, 1, 2}, {2, 3}), x[0]); }},
      {"embedding i32 ids non-contiguous weight", {{5, 3}},
       [](auto& x) { return embedding(i64({3, 3, 0}, {3}).to(DType::i32), x[0]); }, transposed},
      {"embedding padding_idx (not among the ids)", {{5, 3}},
       [](auto& x) { return embedding(i64({1, 4, 1}, {3}), x[0], 2); }},
  };
}

}  // namespace op_table
