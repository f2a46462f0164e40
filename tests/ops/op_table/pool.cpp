// Op table lines: pooling (ops/pool.cpp). Max pooling lines use `distinct` inputs, so no
// window has a tie (a kink); the tie and NaN rules are checked in tests/ops/test_pool.cpp.
#include "op_table.h"

namespace op_table {

AG_OP_TABLE(pool) {
  return {
      {"max_pool2d", {{2, 2, 4, 4}}, [](auto& x) { return max_pool2d(x[0], {2}); }, distinct},
      {"max_pool2d stride 1 padding 1 dilation 2 ceil_mode",
       {{1, 2, 5, 6}},
       [](auto& x) {
         return max_pool2d(x[0], {3, 2}, {1, 2}, {1}, {2}, true);
       },
       distinct},
      {"max_pool2d_with_indices ceil_mode",
       {{1, 1, 5, 5}},
       [](auto& x) { return max_pool2d_with_indices(x[0], {2}, {2}, {0}, {1}, true).first; },
       distinct},
      {"max_pool1d", {{2, 2, 7}}, [](auto& x) { return max_pool1d(x[0], {3}, {2}, {1}); }, distinct},
      {"max_pool1d_with_indices unbatched",
       {{2, 6}},
       [](auto& x) { return max_pool1d_with_indices(x[0], {2}).first; },
       distinct},
      {"avg_pool2d", {{2, 2, 4, 4}}, [](auto& x) { return avg_pool2d(x[0], {2}); }},
      {"avg_pool2d padding 1 stride 2 ceil_mode exclude pad",
       {{1, 2, 5, 6}},
       [](auto& x) { return avg_pool2d(x[0], {3}, {2}, {1}, true, false); }},
      {"avg_pool2d divisor_override 3",
       {{1, 1, 4, 5}},
       [](auto& x) {
         return avg_pool2d(x[0], {2, 3}, {1}, {1}, false, true, 3);
       }},
      {"avg_pool1d ceil_mode", {{2, 2, 7}}, [](auto& x) { return avg_pool1d(x[0], {2}, {2}, {0}, true); }},
      {"avg_pool1d padding 1 count_include_pad", {{1, 2, 5}}, [](auto& x) { return avg_pool1d(x[0], {3}, {1}, {1}); }},
      {"adaptive_avg_pool2d 5x7 to 3x4",
       {{2, 2, 5, 7}},
       [](auto& x) {
         return adaptive_avg_pool2d(x[0], {3, 4});
       }},
      {"adaptive_avg_pool2d global", {{2, 3, 3, 4}}, [](auto& x) { return adaptive_avg_pool2d(x[0], {1}); }},
      {"adaptive_avg_pool2d larger than input",
       {{1, 1, 2, 3}},
       [](auto& x) {
         return adaptive_avg_pool2d(x[0], {3, 5});
       }},
      {"adaptive_avg_pool1d 7 to 3", {{2, 2, 7}}, [](auto& x) { return adaptive_avg_pool1d(x[0], {3}); }},
      {"adaptive_max_pool2d 5x5 to 3x2",
       {{1, 2, 5, 5}},
       [](auto& x) {
         return adaptive_max_pool2d(x[0], {3, 2});
       },
       distinct},
      {"adaptive_max_pool2d_with_indices",
       {{1, 1, 4, 6}},
       [](auto& x) { return adaptive_max_pool2d_with_indices(x[0], {3}).first; },
       distinct},
      {"adaptive_max_pool1d 7 to 4", {{2, 2, 7}}, [](auto& x) { return adaptive_max_pool1d(x[0], {4}); }, distinct},
      {"adaptive_max_pool1d_with_indices",
       {{1, 2, 5}},
       [](auto& x) { return adaptive_max_pool1d_with_indices(x[0], {2}).first; },
       distinct},
  };
}

}  // namespace op_table
