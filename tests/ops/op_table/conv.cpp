// Op table lines: the convolutions and their columns (ops/conv.cpp). Shapes stay small:
// gradcheck perturbs every input element, and gradgradcheck every element again.
#include "op_table.h"

namespace op_table {

AG_OP_TABLE(conv) {
  return {
      // conv2d: (N, C_in, H, W), weight (C_out, C_in / groups, kH, kW), bias (C_out).
      {"conv2d", {{2, 2, 5, 5}, {3, 2, 3, 3}, {3}}, [](auto& x) { return conv2d(x[0], x[1], x[2]); }},
      {"conv2d stride 2 padding 1 no bias",
       {{1, 2, 5, 6}, {2, 2, 3, 3}},
       [](auto& x) { return conv2d(x[0], x[1], {}, {2}, {1}); }},
      {"conv2d stride (2, 1) padding (1, 2) dilation 2",
       {{1, 1, 6, 5}, {2, 1, 2, 3}},
       [](auto& x) {
         return conv2d(x[0], x[1], {}, {2, 1}, {1, 2}, {2});
       }},
      {"conv2d groups 2",
       {{1, 4, 4, 4}, {4, 2, 2, 2}, {4}},
       [](auto& x) { return conv2d(x[0], x[1], x[2], {1}, {0}, {1}, 2); }},
      {"conv2d depthwise multiplier 2",
       {{1, 2, 4, 4}, {4, 1, 3, 3}},
       [](auto& x) { return conv2d(x[0], x[1], {}, {1}, {1}, {1}, 2); }},
      {"conv2d padding same even kernel dilation 2",
       {{1, 1, 5, 5}, {2, 1, 2, 2}},
       [](auto& x) { return conv2d(x[0], x[1], {}, {1}, "same", {2}); }},
      {"conv2d padding same odd kernel",
       {{1, 2, 4, 4}, {1, 2, 3, 3}},
       [](auto& x) { return conv2d(x[0], x[1], {}, {1}, "same"); }},
      {"conv2d 1x1 kernel", {{2, 3, 3, 3}, {2, 3, 1, 1}, {2}}, [](auto& x) { return conv2d(x[0], x[1], x[2]); }},
      {"conv2d unbatched", {{2, 4, 4}, {2, 2, 3, 3}}, [](auto& x) { return conv2d(x[0], x[1]); }},
      {"conv2d non-contiguous input",
       {{1, 2, 4, 5}, {2, 2, 2, 2}},
       [](auto& x) { return conv2d(x[0], x[1]); },
       transposed},
      // conv1d: (N, C_in, L), weight (C_out, C_in / groups, k).
      {"conv1d", {{2, 2, 7}, {3, 2, 3}, {3}}, [](auto& x) { return conv1d(x[0], x[1], x[2]); }},
      {"conv1d stride 2 padding 1 dilation 2 groups 2",
       {{1, 4, 9}, {2, 2, 3}},
       [](auto& x) { return conv1d(x[0], x[1], {}, {2}, {1}, {2}, 2); }},
      {"conv1d padding same even kernel",
       {{1, 2, 6}, {2, 2, 4}},
       [](auto& x) { return conv1d(x[0], x[1], {}, {1}, "same"); }},
      // conv_transpose: weight (C_in, C_out / groups, *k).
      {"conv_transpose2d",
       {{1, 2, 3, 3}, {2, 3, 3, 3}, {3}},
       [](auto& x) { return conv_transpose2d(x[0], x[1], x[2]); }},
      {"conv_transpose2d stride 2 padding 1 output_padding 1",
       {{1, 2, 3, 3}, {2, 2, 3, 3}},
       [](auto& x) { return conv_transpose2d(x[0], x[1], {}, {2}, {1}, {1}); }},
      {"conv_transpose2d groups 2 dilation 2",
       {{1, 4, 3, 3}, {4, 1, 2, 2}, {2}},
       [](auto& x) { return conv_transpose2d(x[0], x[1], x[2], {1}, {0}, {0}, 2, {2}); }},
      {"conv_transpose1d stride 3",
       {{2, 2, 4}, {2, 3, 2}, {3}},
       [](auto& x) { return conv_transpose1d(x[0], x[1], x[2], {3}); }},
      {"conv_transpose1d output_padding 1 from dilation 2",
       {{1, 2, 4}, {2, 2, 3}},
       [](auto& x) { return conv_transpose1d(x[0], x[1], {}, {1}, {1}, {1}, 1, {2}); }},
      // The columns: F.unfold / F.fold.
      {"im2col",
       {{2, 2, 4, 5}},
       [](auto& x) {
         return im2col(x[0], {2, 3});
       }},
      {"im2col dilation 2 padding 1 stride 2",
       {{1, 2, 5, 5}},
       [](auto& x) { return im2col(x[0], {2}, {2}, {1}, {2}); }},
      {"col2im",
       {{2, 8, 6}},
       [](auto& x) {
         return col2im(x[0], {3, 4}, {2});
       }},
      {"col2im overlapping with padding and stride 2",
       {{1, 9, 9}},
       [](auto& x) {
         return col2im(x[0], {5, 5}, {3}, {1}, {1}, {2});
       }},
  };
}

}  // namespace op_table
