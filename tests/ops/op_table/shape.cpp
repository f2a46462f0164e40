// Op table lines: copies, joins, flip, roll, pad, repetition, triangles and diag
// (ops/shape.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(shape) {
  return {
      {"contiguous of a transposed view", {{3, 4}}, [](auto& x) { return contiguous(x[0].t()); }},
      {"contiguous already contiguous", {{3, 4}}, [](auto& x) { return x[0].contiguous(); }},
      {"clone", {{3, 4}}, [](auto& x) { return clone(x[0]); }},
      {"clone of a view", {{3, 4}}, [](auto& x) { return x[0].t().clone(); }},
      {"to f64 (identity)", {{3, 4}}, [](auto& x) { return to(x[0], DType::f64); }},
      {"cat",
       {{2, 1}, {2, 3}, {2, 2}},
       [](auto& x) {
         return cat({x[0], x[1], x[2]}, 1);
       }},
      {"cat negative dim non-contiguous",
       {{2, 3}, {1, 3}},
       [](auto& x) {
         return cat({x[0], x[1]}, -2);
       },
       transposed},
      {"stack",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return stack({x[0], x[1]});
       }},
      {"stack last dim",
       {{2, 3}, {2, 3}, {2, 3}},
       [](auto& x) {
         return stack({x[0], x[1], x[2]}, -1);
       }},
      {"flip",
       {{2, 3, 4}},
       [](auto& x) {
         return flip(x[0], {0, 2});
       }},
      {"flip negative dim non-contiguous", {{3, 4}}, [](auto& x) { return flip(x[0], {-1}); }, transposed},
      {"flip 0-d", {Shape{}}, [](auto& x) { return flip(x[0], {0}) * 2.0; }},
      {"roll one dim", {{3, 4}}, [](auto& x) { return roll(x[0], 1, 1); }},
      {"roll negative shifts two dims",
       {{3, 4}},
       [](auto& x) {
         return roll(x[0], {-1, 5}, {0, -1});
       }},
      {"roll flattened non-contiguous", {{3, 4}}, [](auto& x) { return roll(x[0], -5); }, transposed},
      {"pad constant value",
       {{2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {1, 2, 0, 1}, PadMode::constant, 0.5);
       }},
      {"pad constant negative crops",
       {{2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {-1, 2, 1, -2});
       }},
      {"pad constant 3 dims non-contiguous",
       {{2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {0, 1, 2, 0, 1, 1});
       },
       transposed},
      {"pad reflect 1 dim of 3-D",
       {{2, 3, 5}},
       [](auto& x) {
         return pad(x[0], {3, 1}, PadMode::reflect);
       }},
      {"pad reflect 2 dims of 4-D with crop non-contiguous",
       {{1, 2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {2, -1, 1, 2}, PadMode::reflect);
       },
       transposed},
      {"pad reflect 3 dims of 5-D",
       {{1, 1, 2, 3, 3}},
       [](auto& x) {
         return pad(x[0], {1, 2, 0, 2, 1, 0}, PadMode::reflect);
       }},
      {"pad replicate 2 dims of 3-D",
       {{2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {2, 1, 0, 3}, PadMode::replicate);
       }},
      {"pad replicate 1 dim of 2-D with crop",
       {{3, 4}},
       [](auto& x) {
         return pad(x[0], {-2, 3}, PadMode::replicate);
       },
       strided},
      {"pad circular 2 dims of 4-D",
       {{1, 2, 3, 4}},
       [](auto& x) {
         return pad(x[0], {1, 3, 2, 0}, PadMode::circular);
       }},
      {"pad circular with crop",
       {{2, 2, 5}},
       [](auto& x) {
         return pad(x[0], {-1, 3}, PadMode::circular);
       }},
      {"pad with PadFuncOptions reflect",
       {{2, 3, 4}},
       [](auto& x) {
         return pad(x[0], PadFuncOptions({1, 1}).mode(PadMode::reflect));
       }},
      {"repeat",
       {{2, 3}},
       [](auto& x) {
         return repeat(x[0], {2, 1, 3});
       }},
      {"repeat 0-d and zero repeats",
       {Shape{}},
       [](auto& x) {
         return cat({repeat(x[0], {2, 3}).flatten(), repeat(x[0], {0})});
       }},
      {"repeat non-contiguous",
       {{2, 3}},
       [](auto& x) {
         return repeat(x[0], {3, 2});
       },
       transposed},
      {"tile fewer dims than input", {{2, 3}}, [](auto& x) { return tile(x[0], {2}); }},
      {"tile more dims",
       {{3}},
       [](auto& x) {
         return tile(x[0], {2, 2});
       },
       strided},
      {"repeat_interleave int dim", {{2, 3}}, [](auto& x) { return repeat_interleave(x[0], 2, 1); }},
      {"repeat_interleave int flattened non-contiguous",
       {{2, 3}},
       [](auto& x) { return repeat_interleave(x[0], 3); },
       transposed},
      {"repeat_interleave tensor of repeats",
       {{3, 2}},
       [](auto& x) {
         return repeat_interleave(x[0], i64({2, 0, 3}, {3}), 0);
       }},
      {"repeat_interleave tensor of repeats flattened",
       {{2, 2}},
       [](auto& x) {
         return repeat_interleave(x[0], i64({1, 2, 0, 1}, {4}));
       }},
      {"tril", {{3, 4}}, [](auto& x) { return tril(x[0]); }},
      {"tril negative diagonal batched non-contiguous",
       {{2, 4, 3}},
       [](auto& x) { return tril(x[0], -1); },
       transposed},
      {"triu", {{4, 3}}, [](auto& x) { return triu(x[0]); }},
      {"triu positive diagonal batched", {{2, 3, 4}}, [](auto& x) { return triu(x[0], 2); }},
      {"diag 1-D to 2-D", {{3}}, [](auto& x) { return diag(x[0]); }},
      {"diag 1-D negative offset", {{3}}, [](auto& x) { return diag(x[0], -2); }, strided},
      {"diag 2-D to 1-D offset", {{3, 4}}, [](auto& x) { return diag(x[0], 1); }, transposed},
      {"pad reflect of a broadcast input",
       {{1, 2, 1}},
       [](auto& x) {
         return pad(x[0].expand({2, 2, 3}), {2, 1}, PadMode::reflect);
       }},
      {"tril of a broadcast input",
       {{1, 4}},
       [](auto& x) {
         return tril(x[0].expand({3, 4}), 1);
       }},
      {"flip of a broadcast input",
       {{3, 1}},
       [](auto& x) {
         return flip(x[0].expand({3, 2}), {0, 1});
       }},
      {"roll of a broadcast input",
       {{1, 3}},
       [](auto& x) {
         return roll(x[0].expand({2, 3}), {1, 2}, {0, 1});
       }},
  };
}

}  // namespace op_table
