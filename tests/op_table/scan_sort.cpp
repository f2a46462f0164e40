// Op table lines: scans along a dim (ops/scan.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(scan) {
  return {
      {"cumsum dim 1", {{3, 4}}, [](auto& x) { return cumsum(x[0], 1); }},
      {"cumsum dim 0 non-contiguous", {{3, 4}}, [](auto& x) { return cumsum(x[0], 0); }, transposed},
      {"cumsum negative dim 3-D strided", {{2, 3, 4}}, [](auto& x) { return cumsum(x[0], -2); }, strided},
      {"cumsum of a 0-d tensor", {Shape{}}, [](auto& x) { return cumsum(x[0], 0) * 2.0; }},
      {"cumprod dim 1", {{3, 4}}, [](auto& x) { return cumprod(x[0], 1); }},
      {"cumprod dim 0 non-contiguous", {{4, 3}}, [](auto& x) { return cumprod(x[0], 0); }, transposed},
      {"cumprod negative dim 3-D", {{2, 3, 2}}, [](auto& x) { return cumprod(x[0], -1); }},
      // Exact zeros from a constant mask: none, one and two zeros per row.
      {"cumprod with zeros",
       {{3, 5}},
       [](auto& x) {
         Tensor m = f64({1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1}, {3, 5});
         return cumprod(x[0] * m, 1);
       }},
      {"logcumsumexp dim 1", {{3, 4}}, [](auto& x) { return logcumsumexp(x[0], 1); }},
      {"logcumsumexp dim 0 non-contiguous", {{3, 4}}, [](auto& x) { return logcumsumexp(x[0], 0); }, transposed},
      {"logcumsumexp large values", {{2, 5}}, [](auto& x) { return logcumsumexp(x[0] * 300.0, -1); }},
      // -inf after a finite entry (a leading -inf has a NaN gradient in PyTorch too).
      {"logcumsumexp with -inf entries",
       {{2, 4}},
       [](auto& x) {
         return logcumsumexp(x[0] + f64({0, -kInf, 0, -kInf, 0, 0, -kInf, 0}, {2, 4}), 1);
       }},
  };
}

}  // namespace op_table
