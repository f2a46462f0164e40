// Op table lines: Linear algebra.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(linalg) {
  return {
      {"matmul 1-D . 1-D", {{4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 2-D", {{3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D @ 1-D", {{3, 4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul transposed operands", {{3, 2}, {4, 3}}, [](auto& x) { return matmul(x[0].t(), x[1].t()); }},
      {"matmul non-contiguous leaves", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); },
       transposed},
      {"matmul batched [2,3,4] @ [4,5]", {{2, 3, 4}, {4, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,1,3,4] @ [3,4,5]", {{2, 1, 3, 4}, {3, 4, 5}},
       [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,3,2] @ [2,2,3] non-contiguous", {{2, 3, 2}, {2, 2, 3}},
       [](auto& x) { return matmul(x[0], x[1]); }, transposed},
      {"matmul 2-D @ 3-D", {{3, 2}, {2, 2, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 3-D", {{3}, {2, 3, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 3-D @ 1-D", {{2, 3, 2}, {2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"linear with bias", {{2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear without bias", {{2, 3}, {4, 3}}, [](auto& x) { return linear(x[0], x[1]); }},
      {"linear 1-D input", {{3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D input", {{2, 2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D non-contiguous input", {{2, 2, 3}, {4, 3}},
       [](auto& x) { return linear(x[0].transpose(0, 1), x[1]); }},
  };
}

}  // namespace op_table
