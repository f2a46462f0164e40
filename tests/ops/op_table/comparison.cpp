// Op table lines: where (ops/comparison.cpp). Comparisons, logic and predicates have no
// gradient of their own: each is named among the other words of a where line that uses
// it.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(comparison) {
  return {
      {"where",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return where(bools({1, 0, 1, 0, 0, 1}, {2, 3}), x[0], x[1]);
       }},
      {"where broadcast cond [2,1] a [2,3] b [3]",
       {{2, 3}, {3}},
       [](auto& x) {
         return where(bools({1, 0}, {2, 1}), x[0], x[1]);
       }},
      {"where of bitwise_and bitwise_or bitwise_xor bitwise_not logical_xor masks",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 0, 0, 1}, {2, 3}), n = bools({1, 1, 0}, {3});
         Tensor c = bitwise_xor(bitwise_or(bitwise_and(m, n), bitwise_not(n)), logical_xor(m, n));
         return where(c, x[0], x[1]);
       }},
      {"where of operator== operator!= operator< operator<= operator> operator>= masks",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         Tensor a = x[0].detach(), b = x[1].detach();
         Tensor c = ((a == b) | (a != b)) & ((a < 0.1) | (a <= b) | (a > b) | (0.2 >= a) | (a >= 0.3));
         return where(c, x[0], x[1]);
       }},
      {"where of operator& operator| operator^ operator~ masks",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 0, 0, 1}, {2, 3}), n = bools({1, 1, 0}, {3});
         return where((m & n) ^ (~m | n), x[0], x[1]);
       }},
      {"where scalar b",
       {{2, 3}},
       [](auto& x) {
         return where(bools({1, 0, 1}, {3}), x[0], 0.5);
       }},
      {"where scalar a",
       {{2, 3}},
       [](auto& x) {
         return where(bools({1, 0, 1}, {3}), -2.0, x[0]);
       }},
      {"where both branches scalars (a mask of weights)",
       {{2, 3}},
       [](auto& x) {
         return x[0] * where(bools({1, 0, 1}, {3}), 2.0, -0.5).to(DType::f64);
       }},
      {"where non-contiguous",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return where(bools({0, 1, 1, 0, 1, 0}, {2, 3}), x[0], x[1]);
       },
       transposed},
      {"where eq ne lt le gt ge (a mask from each comparison, tensor and scalar forms)",
       {{3, 4}, {4}},
       [](auto& x) {
         Tensor a = x[0], b = x[1];
         Tensor m = logical_or(logical_or(eq(a, b), ne(a, 0.1)), logical_or(lt(a, b), le(a, 0.2)));
         return where(m, a, b) + where(gt(a, b), a, 0.0) + where(ge(b, 0.3), b, 0.0);
       },
       distinct},
      {"where logical_and logical_or logical_not operator! isfinite",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         Tensor m = logical_and(isfinite(x[0]), logical_not(gt(x[1], 0.0)));
         return where(logical_or(m, !lt(x[0], 0.0)), x[0], x[1]);
       },
       distinct},
      {"where f64 and an i64 tensor",
       {{2, 3}},
       [](auto& x) {
         return where(bools({1, 0, 1}, {3}), x[0], i64({1, 2, 3}, {3}));
       }},
      {"where isnan isinf of 1/x",
       {{3, 4}},
       [](auto& x) {
         Tensor r = 1.0 / x[0];
         return where(logical_or(isnan(r), isinf(r)), 0.0, r);
       },
       positive},
      {"where isclose", {{3, 4}, {3, 4}}, [](auto& x) { return where(isclose(x[0], x[0] * (1 + 1e-7)), x[0], x[1]); }},
  };
}

}  // namespace op_table
