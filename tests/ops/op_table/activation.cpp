// Op table lines: activation functions (ops/activation.cpp). Kinked ones use `distinct`
// inputs (a grid never closer than 0.05 to a multiple of 0.1), scaled so that no value
// lands on a kink (hardsigmoid's +-3 with x * 5: values 0.25 + k).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(activation) {
  return {
      {"relu", {{3, 4}}, [](auto& x) { return relu(x[0]); }, distinct},
      {"relu strided", {{3, 4}}, [](auto& x) { return relu(x[0]); }, strided},
      {"sigmoid", {{3, 4}}, [](auto& x) { return sigmoid(x[0]); }},
      {"silu", {{3, 4}}, [](auto& x) { return silu(x[0]); }},
      {"silu transposed", {{3, 4}}, [](auto& x) { return silu(x[0]); }, transposed},
      {"softplus", {{3, 4}}, [](auto& x) { return softplus(x[0]); }},
      {"softplus beta 2 threshold 1", {{3, 4}}, [](auto& x) { return softplus(x[0], 2.0, 1.0); }, distinct},
      {"leaky_relu", {{3, 4}}, [](auto& x) { return leaky_relu(x[0]); }, distinct},
      {"leaky_relu slope 0.2 strided", {{6}}, [](auto& x) { return leaky_relu(x[0], 0.2); }, strided},
      {"elu", {{3, 4}}, [](auto& x) { return elu(x[0]); }, distinct},
      {"elu alpha 0.5", {{3, 4}}, [](auto& x) { return elu(x[0], 0.5); }, distinct},
      {"celu", {{3, 4}}, [](auto& x) { return celu(x[0]); }, distinct},
      {"celu alpha 2", {{3, 4}}, [](auto& x) { return celu(x[0], 2.0); }, distinct},
      {"selu", {{3, 4}}, [](auto& x) { return selu(x[0]); }, distinct},
      {"hardtanh", {{3, 4}}, [](auto& x) { return hardtanh(x[0] * 2.0); }, distinct},
      {"hardtanh -0.3 0.5", {{3, 4}}, [](auto& x) { return hardtanh(x[0], -0.3, 0.5); }, distinct},
      {"relu6", {{3, 4}}, [](auto& x) { return relu6(x[0] * 5.0); }, distinct},
      {"hardsigmoid", {{3, 4}}, [](auto& x) { return hardsigmoid(x[0] * 5.0); }, distinct},
      {"hardswish", {{3, 4}}, [](auto& x) { return hardswish(x[0] * 5.0); }, distinct},
      {"hardswish transposed", {{3, 4}}, [](auto& x) { return hardswish(x[0] * 2.0); }, transposed},
      {"mish", {{3, 4}}, [](auto& x) { return mish(x[0]); }},
      {"logsigmoid", {{3, 4}}, [](auto& x) { return logsigmoid(x[0]); }},
      {"logsigmoid large values", {{3, 4}}, [](auto& x) { return logsigmoid(x[0] * 50.0); }},
      {"softsign", {{3, 4}}, [](auto& x) { return softsign(x[0]); }, distinct},

      // ---- GELU ----
      {"gelu none", {{3, 4}}, [](auto& x) { return gelu(x[0]); }},
      {"gelu tanh", {{3, 4}}, [](auto& x) { return gelu(x[0], GeluApprox::tanh); }},
      {"gelu non-contiguous", {{3, 4}}, [](auto& x) { return gelu(x[0]); }, transposed},
      {"gelu_backward none", {{3, 4}, {3, 4}}, [](auto& x) { return gelu_backward(x[0], x[1]); }},
      {"gelu_backward tanh", {{3, 4}, {3, 4}}, [](auto& x) { return gelu_backward(x[0], x[1], GeluApprox::tanh); }},
      {"gelu string tanh", {{3, 4}}, [](auto& x) { return gelu(x[0], std::string("tanh")); }},
  };
}

}  // namespace op_table
