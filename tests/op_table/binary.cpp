// Op table lines: Elementwise ops: binary with broadcasting, scalar overloads and operators, unary, where.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(elementwise) {
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

      // ---- elementwise: unary ----
      {"neg", {{3, 4}}, [](auto& x) { return neg(x[0]); }},
      {"exp", {{3, 4}}, [](auto& x) { return exp(x[0]); }},
      {"exp non-contiguous", {{3, 4}}, [](auto& x) { return exp(x[0]); }, transposed},
      {"log", {{3, 4}}, [](auto& x) { return log(x[0]); }, positive},
      {"sqrt", {{3, 4}}, [](auto& x) { return sqrt(x[0]); }, positive},
      {"rsqrt", {{3, 4}}, [](auto& x) { return rsqrt(x[0]); }, positive},
      {"abs", {{3, 4}}, [](auto& x) { return abs(x[0]); }, distinct},
      {"sign (times x: its own gradient is zero)", {{3, 4}}, [](auto& x) { return x[0] * sign(x[0]); },
       distinct},
      {"tanh", {{3, 4}}, [](auto& x) { return tanh(x[0]); }},
      {"sigmoid", {{3, 4}}, [](auto& x) { return sigmoid(x[0]); }},
      {"relu", {{3, 4}}, [](auto& x) { return relu(x[0]); }, distinct},
      {"relu strided", {{3, 4}}, [](auto& x) { return relu(x[0]); }, strided},
      {"gelu none", {{3, 4}}, [](auto& x) { return gelu(x[0]); }},
      {"gelu tanh", {{3, 4}}, [](auto& x) { return gelu(x[0], GeluApprox::tanh); }},
      {"gelu non-contiguous", {{3, 4}}, [](auto& x) { return gelu(x[0]); }, transposed},
      {"gelu_backward none", {{3, 4}, {3, 4}}, [](auto& x) { return gelu_backward(x[0], x[1]); }},
      {"gelu_backward tanh", {{3, 4}, {3, 4}},
       [](auto& x) { return gelu_backward(x[0], x[1], GeluApprox::tanh); }},
      {"erf", {{3, 4}}, [](auto& x) { return erf(x[0]); }},
      {"sin", {{3, 4}}, [](auto& x) { return sin(x[0]); }},
      {"cos", {{3, 4}}, [](auto& x) { return cos(x[0]); }},
      {"square", {{3, 4}}, [](auto& x) { return square(x[0]); }},
      {"clamp both bounds", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, 0.5); }, distinct},
      {"clamp min only", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, kNone); }, distinct},
      {"clamp max only", {{3, 4}}, [](auto& x) { return clamp(x[0], kNone, 0.5); }, distinct},

      // ---- type promotion: mixed operands go through the differentiable to() ----
      {"mul by an i64 tensor from floor_divide", {{3, 4}},
       [](auto& x) { return mul(x[0], floor_divide(i64({7, -7, 9, 4}, {4}), 2)); }},
      {"div i64 tensor by f64", {{3, 4}}, [](auto& x) { return div(i64({1, -2, 3, 5}, {4}), x[0]); }, positive},
      {"where f64 and an i64 tensor", {{2, 3}}, [](auto& x) { return where(bools({1, 0, 1}, {3}), x[0], i64({1, 2, 3}, {3})); }},

      // ---- where / masked_fill ----
      {"where", {{2, 3}, {2, 3}},
       [](auto& x) { return where(bools({1, 0, 1, 0, 0, 1}, {2, 3}), x[0], x[1]); }},
      {"where broadcast cond [2,1] a [2,3] b [3]", {{2, 3}, {3}},
       [](auto& x) { return where(bools({1, 0}, {2, 1}), x[0], x[1]); }},
      {"where scalar b", {{2, 3}}, [](auto& x) { return where(bools({1, 0, 1}, {3}), x[0], 0.5); }},
      {"where scalar a", {{2, 3}}, [](auto& x) { return where(bools({1, 0, 1}, {3}), -2.0, x[0]); }},
      {"where both branches scalars (a mask of weights)", {{2, 3}},
       [](auto& x) { return x[0] * where(bools({1, 0, 1}, {3}), 2.0, -0.5).to(DType::f64); }},
      {"where non-contiguous", {{2, 3}, {2, 3}},
       [](auto& x) { return where(bools({0, 1, 1, 0, 1, 0}, {2, 3}), x[0], x[1]); }, transposed},
      {"where eq ne lt le gt ge (a mask from each comparison, tensor and scalar forms)", {{3, 4}, {4}},
       [](auto& x) {
         Tensor a = x[0], b = x[1];
         Tensor m = logical_or(logical_or(eq(a, b), ne(a, 0.1)), logical_or(lt(a, b), le(a, 0.2)));
         return where(m, a, b) + where(gt(a, b), a, 0.0) + where(ge(b, 0.3), b, 0.0);
       }, distinct},
      {"where logical_and logical_or logical_not operator! isfinite", {{3, 4}, {3, 4}},
       [](auto& x) {
         Tensor m = logical_and(isfinite(x[0]), logical_not(gt(x[1], 0.0)));
         return where(logical_or(m, !lt(x[0], 0.0)), x[0], x[1]);
       }, distinct},
      {"masked_fill broadcast mask", {{3, 4}},
       [](auto& x) { return masked_fill(x[0], bools({0, 1, 0, 1}, {4}), -7.0); }},
  };
}

}  // namespace op_table
