// Op table lines: scans and sorting (ops/scan_sort.cpp). Sorted values are gathered at
// the sorted indices, so their gradient routes back to the picked elements.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(scan_sort) {
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
      // cummax / cummin: values gathered at the running index, gradient scattered back.
      {"cummax dim 1", {{3, 5}}, [](auto& x) { return cummax(x[0], 1).first; }, distinct},
      {"cummax negative dim 3-D", {{2, 3, 4}}, [](auto& x) { return cummax(x[0], -2).first; }, distinct},
      {"cummax of a 0-d tensor", {Shape{}}, [](auto& x) { return cummax(x[0], 0).first * 2.0; }},
      {"cummin dim 0", {{4, 3}}, [](auto& x) { return cummin(x[0], 0).first; }, distinct},
      {"cummin dim 0 non-contiguous", {{4, 3}}, [](auto& x) { return cummin(x[0], 0).first; }, transposed},
      {"cummin negative dim", {{3, 5}}, [](auto& x) { return cummin(x[0], -1).first; }, distinct},
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
