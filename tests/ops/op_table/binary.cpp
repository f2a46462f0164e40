// Op table lines: elementwise ops of two or three tensors (ops/binary.cpp): arithmetic
// with broadcasting, scalar overloads and operators, type promotion, math functions.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(binary) {
  return {
      // ---- elementwise: binary, broadcasting ----
      {"add", {{3, 4}, {3, 4}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add broadcast [3,4] + [4]", {{3, 4}, {4}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add broadcast [2,1,3] + [4,1]", {{2, 1, 3}, {4, 1}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add non-contiguous", {{3, 4}, {3, 4}}, [](auto& x) { return add(x[0], x[1]); }, transposed},
      {"sub", {{3, 4}, {4}}, [](auto& x) { return sub(x[0], x[1]); }},
      {"sub [3,1] - [1,4]", {{3, 1}, {1, 4}}, [](auto& x) { return sub(x[0], x[1]); }},
      {"mul", {{3, 4}, {3, 4}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul broadcast [3,1] * [1,4]", {{3, 1}, {1, 4}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul 0-d by [3]", {Shape{}, {3}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul same input twice", {{3, 4}}, [](auto& x) { return mul(x[0], x[0]); }},
      {"mul transposed view", {{4, 3}, {3, 4}}, [](auto& x) { return mul(x[0].t(), x[1]); }},
      {"div", {{3, 4}, {3, 4}}, [](auto& x) { return div(x[0], x[1]); }, positive},
      {"div broadcast [4] / [3,1]", {{4}, {3, 1}}, [](auto& x) { return div(x[0], x[1]); }, positive},
      {"pow tensor-tensor broadcast", {{3, 4}, {4}}, [](auto& x) { return pow(x[0], x[1]); }, positive},
      {"pow scalar 3", {{3, 4}}, [](auto& x) { return pow(x[0], 3.0); }},
      {"pow scalar 2", {{3, 4}}, [](auto& x) { return pow(x[0], 2.0); }},
      {"pow scalar 0.5", {{3, 4}}, [](auto& x) { return pow(x[0], 0.5); }, positive},
      {"pow scalar -1.5", {{3, 4}}, [](auto& x) { return pow(x[0], -1.5); }, positive},
      {"pow scalar 0", {{3, 4}}, [](auto& x) { return pow(x[0], 0.0); }},
      {"maximum", {{3, 4}, {3, 4}}, [](auto& x) { return maximum(x[0], x[1]); }, distinct},
      {"maximum broadcast", {{3, 4}, {4}}, [](auto& x) { return maximum(x[0], x[1]); }, distinct},
      {"minimum", {{3, 4}, {3, 4}}, [](auto& x) { return minimum(x[0], x[1]); }, distinct},
      {"minimum broadcast", {{3, 1}, {4}}, [](auto& x) { return minimum(x[0], x[1]); }, distinct},

      // ---- scalar overloads and operators ----
      {"add scalar", {{3, 4}}, [](auto& x) { return add(x[0], 2.5); }},
      {"sub scalar", {{3, 4}}, [](auto& x) { return sub(x[0], 2.5); }},
      {"mul scalar", {{3, 4}}, [](auto& x) { return mul(x[0], -1.5); }},
      {"div scalar", {{3, 4}}, [](auto& x) { return div(x[0], 4.0); }},
      {"rsub", {{3, 4}}, [](auto& x) { return rsub(2.0, x[0]); }},
      {"rdiv", {{3, 4}}, [](auto& x) { return rdiv(3.0, x[0]); }, positive},
      {"operator+ tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] + x[1]; }},
      {"operator- tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] - x[1]; }},
      {"operator* tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] * x[1]; }},
      {"operator/ tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] / x[1]; }, positive},
      {"operator+ scalar right", {{3, 4}}, [](auto& x) { return x[0] + 1.5; }},
      {"operator+ scalar left", {{3, 4}}, [](auto& x) { return 1.5 + x[0]; }},
      {"operator- scalar right", {{3, 4}}, [](auto& x) { return x[0] - 1.5; }},
      {"operator- scalar left", {{3, 4}}, [](auto& x) { return 1.5 - x[0]; }},
      {"operator* scalar right", {{3, 4}}, [](auto& x) { return x[0] * 3.0; }},
      {"operator* scalar left", {{3, 4}}, [](auto& x) { return 3.0 * x[0]; }},
      {"operator/ scalar right", {{3, 4}}, [](auto& x) { return x[0] / 3.0; }},
      {"operator/ scalar left", {{3, 4}}, [](auto& x) { return 3.0 / x[0]; }, positive},
      {"operator- unary", {{3, 4}}, [](auto& x) { return -x[0]; }},

      // ---- type promotion: mixed operands go through the differentiable to() ----
      {"mul by an i64 tensor from floor_divide",
       {{3, 4}},
       [](auto& x) {
         return mul(x[0], floor_divide(i64({7, -7, 9, 4}, {4}), 2));
       }},
      {"div i64 tensor by f64",
       {{3, 4}},
       [](auto& x) {
         return div(i64({1, -2, 3, 5}, {4}), x[0]);
       },
       positive},

      // ---- math functions ----
      {"atan2", {{3, 4}, {3, 4}}, [](auto& x) { return atan2(x[0], x[1]); }},
      {"atan2 broadcast", {{3, 4}, {4}}, [](auto& x) { return atan2(x[0], x[1]); }},
      {"atan2 transposed", {{3, 4}, {3, 4}}, [](auto& x) { return atan2(x[0], x[1]); }, transposed},
      {"copysign", {{3, 4}, {3, 4}}, [](auto& x) { return copysign(x[0], x[1]); }, distinct},
      {"copysign broadcast", {{3, 4}, {3, 1}}, [](auto& x) { return copysign(x[0], x[1]); }, distinct},
      {"logaddexp", {{3, 4}, {3, 4}}, [](auto& x) { return logaddexp(x[0], x[1]); }},
      {"logaddexp broadcast large", {{3, 4}, {4}}, [](auto& x) { return logaddexp(x[0] * 300.0, x[1] * 300.0); }},
      {"lerp tensor weight", {{3, 4}, {3, 4}, {3, 4}}, [](auto& x) { return lerp(x[0], x[1], x[2]); }, unit},
      {"lerp broadcast weight", {{3, 4}, {4}, {3, 1}}, [](auto& x) { return lerp(x[0], x[1], x[2]); }},
      {"lerp scalar weight", {{3, 4}, {3, 4}}, [](auto& x) { return lerp(x[0], x[1], 0.7); }},
      // Quotients away from integers (the steps of trunc and floor).
      {"fmod", {{3, 4}, {3, 4}}, [](auto& x) { return fmod(x[0] * 3.0, x[1]); }, positive},
      {"fmod negative broadcast", {{3, 4}, {4}}, [](auto& x) { return fmod(neg(x[0]) * 3.0, x[1]); }, positive},
      {"fmod scalar", {{3, 4}}, [](auto& x) { return fmod(x[0], 0.7); }, distinct},
      {"remainder", {{3, 4}, {3, 4}}, [](auto& x) { return remainder(x[0] * 3.0, neg(x[1])); }, positive},
      {"remainder broadcast", {{3, 4}, {3, 1}}, [](auto& x) { return remainder(neg(x[0]) * 3.0, x[1]); }, positive},
      {"remainder scalar", {{3, 4}}, [](auto& x) { return remainder(x[0], -0.7); }, distinct},
      // A rounded quotient's gradient is 0 (PyTorch's), away from its steps.
      {"div rounding_mode trunc", {{3, 4}, {3, 4}}, [](auto& x) { return div(x[0] * -3.0, x[1], "trunc"); }, positive},
      {"div rounding_mode floor", {{3, 4}, {4}}, [](auto& x) { return div(x[0] * -3.0, x[1], "floor"); }, positive},

      // ---- a factory (linspace) as an operand ----
      {"mul by linspace", {{5}}, [](auto& x) { return x[0] * linspace(-1.0, 1.0, 5, DType::f64); }},
  };
}

}  // namespace op_table
