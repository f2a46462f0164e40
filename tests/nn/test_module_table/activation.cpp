// Module table lines: activations (attograd/nn/activation.h, and ReLU, GELU from
// attograd/nn/layers.h), each on a (2, 3) input. Printing differences from PyTorch:
// modules without options print no "()", and floats print as C++ does ("1", not "1.0").
#include "module_table.h"

namespace module_table {
namespace {
// A line for an activation: (2, 3) -> (2, 3).
Line activation_line(const char* name, std::function<Made()> make, std::vector<Diff> diffs,
                     std::function<Json()> defaults = {}) {
  return {.name = name,
          .make = std::move(make),
          .inputs = {{2, 3}},
          .outputs = {{2, 3}},
          .defaults = std::move(defaults),
          .diffs = std::move(diffs)};
}
}  // namespace

AG_MODULE_TABLE(activation) {
  return {
      activation_line("SiLU", [] { return unary(nn::SiLU()); }, {{"SiLU()", "SiLU"}}),
      activation_line("SELU", [] { return unary(nn::SELU()); }, {{"SELU()", "SELU"}}),
      activation_line("ReLU6", [] { return unary(nn::ReLU6()); }, {{"ReLU6()", "ReLU6"}}),
      activation_line("Hardsigmoid", [] { return unary(nn::Hardsigmoid()); }, {{"Hardsigmoid()", "Hardsigmoid"}}),
      activation_line("Hardswish", [] { return unary(nn::Hardswish()); }, {{"Hardswish()", "Hardswish"}}),
      activation_line("Mish", [] { return unary(nn::Mish()); }, {{"Mish()", "Mish"}}),
      activation_line("LogSigmoid", [] { return unary(nn::LogSigmoid()); }, {{"LogSigmoid()", "LogSigmoid"}}),
      activation_line("Softsign", [] { return unary(nn::Softsign()); }, {{"Softsign()", "Softsign"}}),
      activation_line("Tanh", [] { return unary(nn::Tanh()); }, {{"Tanh()", "Tanh"}}),
      activation_line("Sigmoid", [] { return unary(nn::Sigmoid()); }, {{"Sigmoid()", "Sigmoid"}}),
      activation_line("ReLU", [] { return unary(nn::ReLU()); }, {{"ReLU()", "ReLU"}}),
      activation_line(
          "Softplus", [] { return unary(nn::Softplus()); }, {},
          [] {
            nn::SoftplusOptions o;
            return Json{{"beta", o.beta()}, {"threshold", o.threshold()}};
          }),
      activation_line(
          "LeakyReLU", [] { return unary(nn::LeakyReLU()); }, {},
          [] {
            return Json{{"negative_slope", nn::LeakyReLUOptions().negative_slope()}};
          }),
      activation_line(
          "ELU", [] { return unary(nn::ELU()); }, {{"alpha=1.0", "alpha=1"}},
          [] {
            return Json{{"alpha", nn::ELUOptions().alpha()}};
          }),
      activation_line(
          "CELU", [] { return unary(nn::CELU()); }, {{"alpha=1.0", "alpha=1"}},
          [] {
            return Json{{"alpha", nn::CELUOptions().alpha()}};
          }),
      activation_line(
          "Hardtanh", [] { return unary(nn::Hardtanh()); }, {{"=-1.0", "=-1"}, {"=1.0", "=1"}},
          [] {
            nn::HardtanhOptions o;
            return Json{{"min_val", o.min_val()}, {"max_val", o.max_val()}};
          }),
      // dim has no default in attograd (torch's None is deprecated: an implicit dim).
      activation_line("Softmax", [] { return unary(nn::Softmax(1)); }, {}),
      activation_line("Softmin", [] { return unary(nn::Softmin(1)); }, {}),
      activation_line("LogSoftmax", [] { return unary(nn::LogSoftmax(1)); }, {}),
      activation_line(
          "GELU", [] { return unary(nn::GELU()); }, {{"'none'", "none"}},
          [] {
            return Json{{"approximate", nn::GELUOptions().approximate() == GeluApprox::none ? "none" : "tanh"}};
          }),
  };
}

}  // namespace module_table
