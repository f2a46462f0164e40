// Op table lines: reductions (ops/reduction.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(reduction) {
  return {
      {"sum all", {{3, 4}}, [](auto& x) { return sum(x[0]); }},
      {"sum dim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], {1}); }},
      {"sum dims keepdim",
       {{2, 3, 4}},
       [](auto& x) {
         return sum(x[0], {0, 2}, true);
       }},
      {"sum negative dims",
       {{2, 3, 2}},
       [](auto& x) {
         return sum(x[0], {-1, -3});
       }},
      {"sum method non-contiguous", {{2, 3, 4}}, [](auto& x) { return x[0].sum({-1}, true); }, transposed},
      {"mean all", {{3, 4}}, [](auto& x) { return mean(x[0]); }},
      {"mean dims",
       {{2, 3, 4}},
       [](auto& x) {
         return mean(x[0], {0, 2});
       }},
      {"mean keepdim negative dim", {{2, 3, 4}}, [](auto& x) { return x[0].mean({-2}, true); }},
      {"var all correction 1", {{3, 4}}, [](auto& x) { return var(x[0]); }},
      {"var all correction 0", {{3, 4}}, [](auto& x) { return var(x[0], {}, 0); }},
      {"var dims correction 0 keepdim",
       {{2, 3, 4}},
       [](auto& x) {
         return var(x[0], {1, 2}, 0, true);
       }},
      {"var negative dim correction 1", {{2, 3, 4}}, [](auto& x) { return var(x[0], {-1}, 1); }},
      {"max dim values", {{3, 4}}, [](auto& x) { return max(x[0], 1).first; }, distinct},
      {"max dim 0 keepdim", {{3, 4}}, [](auto& x) { return max(x[0], 0, true).first; }, distinct},
      {"max negative dim 3-D", {{2, 3, 4}}, [](auto& x) { return max(x[0], -2).first; }, distinct},
      {"min dim values", {{3, 4}}, [](auto& x) { return min(x[0], -1).first; }, distinct},
      {"max all", {{3, 4}}, [](auto& x) { return max(x[0]); }, distinct},
      {"max dim of a 0-d tensor", {Shape{}}, [](auto& x) { return max(x[0], 0).first * 2.0; }},
      {"min all", {{3, 4}}, [](auto& x) { return min(x[0]); }, distinct},
      {"gather of argmax argmin (the picked values)",
       {{3, 4}},
       [](auto& x) {
         Tensor hi = gather(x[0], 1, argmax(x[0], 1, true)), lo = gather(x[0], 0, argmin(x[0], 0, true));
         return hi.sum() + lo.sum();
       },
       distinct},
      {"logsumexp dim", {{3, 4}}, [](auto& x) { return logsumexp(x[0], {1}); }},
      {"logsumexp dims keepdim",
       {{2, 3, 4}},
       [](auto& x) {
         return logsumexp(x[0], {0, -1}, true);
       }},
      {"logsumexp large values", {{3, 4}}, [](auto& x) { return logsumexp(x[0] * 300.0, {1}); }},
      // ---- amax / amin, std, var_mean / std_mean, prod, any / all ----
      {"amax dims",
       {{2, 3, 4}},
       [](auto& x) {
         return amax(x[0], {0, 2});
       },
       distinct},
      {"amax all", {{3, 4}}, [](auto& x) { return amax(x[0]); }, distinct},
      {"amax keepdim negative dim non-contiguous",
       {{3, 4}},
       [](auto& x) { return amax(x[0], {-1}, true); },
       transposed},
      {"amin dim", {{3, 4}}, [](auto& x) { return amin(x[0], {0}); }, distinct},
      {"amin all keepdim", {{2, 3}}, [](auto& x) { return amin(x[0], {}, true); }, distinct},
      {"std all correction 1", {{3, 4}}, [](auto& x) { return ag::std(x[0]); }},
      {"std dims correction 0 keepdim",
       {{2, 3, 4}},
       [](auto& x) {
         return ag::std(x[0], {0, 2}, 0, true);
       }},
      {"std negative dim correction 2", {{3, 5}}, [](auto& x) { return ag::std(x[0], {-1}, 2); }},
      {"std dim non-contiguous", {{3, 4}}, [](auto& x) { return ag::std(x[0], {0}); }, transposed},
      {"var_mean dims (var + 2 mean)",
       {{2, 3, 4}},
       [](auto& x) {
         auto [v, m] = var_mean(x[0], {1}, 1);
         return v + m * 2.0;
       }},
      {"std_mean all correction 0 keepdim",
       {{3, 4}},
       [](auto& x) {
         auto [s, m] = std_mean(x[0], {}, 0, true);
         return s * m;
       }},
      {"prod all", {{3, 4}}, [](auto& x) { return prod(x[0]); }},
      {"prod dim", {{3, 4}}, [](auto& x) { return prod(x[0], 1); }},
      {"prod dim 0 keepdim non-contiguous", {{3, 4}}, [](auto& x) { return prod(x[0], 0, true); }, transposed},
      {"prod negative dim 3-D", {{2, 3, 4}}, [](auto& x) { return prod(x[0], -2); }},
      {"prod dim of a 0-d tensor", {Shape{}}, [](auto& x) { return prod(x[0], 0) * 3.0; }},
      // Exact zeros from a constant mask (they stay 0 under the gradcheck's nudges).
      {"prod all with one zero",
       {{2, 3}},
       [](auto& x) {
         return prod(x[0] * f64({1, 1, 0, 1, 1, 1}, {2, 3}));
       }},
      {"prod all with two zeros",
       {{2, 3}},
       [](auto& x) {
         return prod(x[0] * f64({1, 0, 1, 1, 0, 1}, {2, 3}));
       }},
      {"prod dim with zeros (one in row 0, two in row 1)",
       {{2, 4}},
       [](auto& x) {
         return prod(x[0] * f64({1, 0, 1, 1, 0, 1, 0, 1}, {2, 4}), 1);
       }},
      {"any dim picks rows for where (also all)",
       {{3, 4}},
       [](auto& x) {
         Tensor some = any(gt(x[0], 0.5), 1, true), every = all(gt(x[0], -0.5), 1, true);
         return where(some, x[0], x[0] * 2.0) + where(every, x[0] * 3.0, 0.0) +
                where(logical_and(any(x[0]), all(x[0])), x[0], 0.0);
       },
       distinct},
      {"sum_to [2,3,4] -> [3,1]",
       {{2, 3, 4}},
       [](auto& x) {
         return sum_to(x[0], {3, 1});
       }},
  };
}

}  // namespace op_table
