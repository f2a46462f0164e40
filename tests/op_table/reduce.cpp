// Op table lines: Reductions.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(reduce) {
  return {
      {"sum all", {{3, 4}}, [](auto& x) { return sum(x[0]); }},
      {"sum dim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], {1}); }},
      {"sum dims keepdim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], {0, 2}, true); }},
      {"sum negative dims", {{2, 3, 2}}, [](auto& x) { return sum(x[0], {-1, -3}); }},
      {"sum method non-contiguous", {{2, 3, 4}}, [](auto& x) { return x[0].sum({-1}, true); }, transposed},
      {"mean all", {{3, 4}}, [](auto& x) { return mean(x[0]); }},
      {"mean dims", {{2, 3, 4}}, [](auto& x) { return mean(x[0], {0, 2}); }},
      {"mean keepdim negative dim", {{2, 3, 4}}, [](auto& x) { return x[0].mean({-2}, true); }},
      {"var all correction 1", {{3, 4}}, [](auto& x) { return var(x[0]); }},
      {"var all correction 0", {{3, 4}}, [](auto& x) { return var(x[0], {}, 0); }},
      {"var dims correction 0 keepdim", {{2, 3, 4}}, [](auto& x) { return var(x[0], {1, 2}, 0, true); }},
      {"var negative dim correction 1", {{2, 3, 4}}, [](auto& x) { return var(x[0], {-1}, 1); }},
      {"max dim values", {{3, 4}}, [](auto& x) { return max(x[0], 1).first; }, distinct},
      {"max dim 0 keepdim", {{3, 4}}, [](auto& x) { return max(x[0], 0, true).first; }, distinct},
      {"max negative dim 3-D", {{2, 3, 4}}, [](auto& x) { return max(x[0], -2).first; }, distinct},
      {"min dim values", {{3, 4}}, [](auto& x) { return min(x[0], -1).first; }, distinct},
      {"max all", {{3, 4}}, [](auto& x) { return max(x[0]); }, distinct},
      {"max dim of a 0-d tensor", {Shape{}}, [](auto& x) { return max(x[0], 0).first * 2.0; }},
      {"min all", {{3, 4}}, [](auto& x) { return min(x[0]); }, distinct},
      {"gather of argmax argmin (the picked values)", {{3, 4}},
       [](auto& x) {
         Tensor hi = gather(x[0], 1, argmax(x[0], 1, true)), lo = gather(x[0], 0, argmin(x[0], 0, true));
         return hi.sum() + lo.sum();
       }, distinct},
      {"logsumexp dim", {{3, 4}}, [](auto& x) { return logsumexp(x[0], {1}); }},
      {"logsumexp dims keepdim", {{2, 3, 4}}, [](auto& x) { return logsumexp(x[0], {0, -1}, true); }},
      {"logsumexp large values", {{3, 4}}, [](auto& x) { return logsumexp(x[0] * 300.0, {1}); }},
      {"sum_to [2,3,4] -> [3,1]", {{2, 3, 4}}, [](auto& x) { return sum_to(x[0], {3, 1}); }},
  };
}

}  // namespace op_table
