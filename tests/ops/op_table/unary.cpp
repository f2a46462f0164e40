// Op table lines: elementwise math of one tensor (ops/unary.cpp). Kinked ones (abs,
// sign, rounding, clamp) use `distinct` inputs; functions defined on part of the line use
// `positive` or `unit` ones.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(unary) {
  return {
      // ---- arithmetic ----
      {"neg", {{3, 4}}, [](auto& x) { return neg(x[0]); }},
      {"abs", {{3, 4}}, [](auto& x) { return abs(x[0]); }, distinct},
      {"sign (times x: its own gradient is zero)", {{3, 4}}, [](auto& x) { return x[0] * sign(x[0]); }, distinct},
      {"square", {{3, 4}}, [](auto& x) { return square(x[0]); }},
      {"sqrt", {{3, 4}}, [](auto& x) { return sqrt(x[0]); }, positive},
      {"rsqrt", {{3, 4}}, [](auto& x) { return rsqrt(x[0]); }, positive},

      // ---- exponentials and logarithms ----
      {"exp", {{3, 4}}, [](auto& x) { return exp(x[0]); }},
      {"exp non-contiguous", {{3, 4}}, [](auto& x) { return exp(x[0]); }, transposed},
      {"exp2", {{3, 4}}, [](auto& x) { return exp2(x[0]); }},
      {"expm1", {{3, 4}}, [](auto& x) { return expm1(x[0]); }},
      {"log", {{3, 4}}, [](auto& x) { return log(x[0]); }, positive},
      {"log2", {{3, 4}}, [](auto& x) { return log2(x[0]); }, positive},
      {"log10", {{3, 4}}, [](auto& x) { return log10(x[0]); }, positive},
      {"log1p", {{3, 4}}, [](auto& x) { return log1p(x[0]); }, positive},

      // ---- trigonometric and hyperbolic ----
      {"sin", {{3, 4}}, [](auto& x) { return sin(x[0]); }},
      {"cos", {{3, 4}}, [](auto& x) { return cos(x[0]); }},
      {"tan", {{3, 4}}, [](auto& x) { return tan(x[0]); }, unit},
      {"tan transposed", {{3, 4}}, [](auto& x) { return tan(x[0] * 0.5); }, transposed},
      {"asin", {{3, 4}}, [](auto& x) { return asin(x[0]); }, unit},
      {"acos", {{3, 4}}, [](auto& x) { return acos(x[0]); }, unit},
      {"atan", {{3, 4}}, [](auto& x) { return atan(x[0]); }},
      {"sinh", {{3, 4}}, [](auto& x) { return sinh(x[0]); }},
      {"cosh", {{3, 4}}, [](auto& x) { return cosh(x[0]); }},
      {"asinh", {{3, 4}}, [](auto& x) { return asinh(x[0]); }},
      {"tanh", {{3, 4}}, [](auto& x) { return tanh(x[0]); }},
      {"acosh of x + 1", {{3, 4}}, [](auto& x) { return acosh(x[0] + 1.0); }, positive},
      {"atanh", {{3, 4}}, [](auto& x) { return atanh(x[0]); }, unit},
      {"atanh strided", {{6}}, [](auto& x) { return atanh(x[0] * 0.3); }, strided},

      // ---- special functions ----
      {"erf", {{3, 4}}, [](auto& x) { return erf(x[0]); }},

      // ---- rounding ----
      // Rounding has zero gradient; x * op(x) checks that the graph passes through it.
      {"floor times x", {{3, 4}}, [](auto& x) { return x[0] * floor(x[0]); }, distinct},
      {"ceil times x", {{3, 4}}, [](auto& x) { return x[0] * ceil(x[0]); }, distinct},
      {"round times x", {{3, 4}}, [](auto& x) { return x[0] * round(x[0]); }, distinct},
      {"round decimals 1 times x", {{3, 4}}, [](auto& x) { return x[0] * round(x[0] * 0.5, 1); }, distinct},
      {"trunc times x", {{3, 4}}, [](auto& x) { return x[0] * trunc(x[0]); }, distinct},
      {"frac", {{3, 4}}, [](auto& x) { return frac(x[0] * 3.0); }, distinct},

      // ---- clamp ----
      {"clamp both bounds", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, 0.5); }, distinct},
      {"clamp min only", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, kNone); }, distinct},
      {"clamp max only", {{3, 4}}, [](auto& x) { return clamp(x[0], kNone, 0.5); }, distinct},
      // Bounds offset from x's grid (distinct: 0.05 and 0.15 mod 0.2) so nothing ties.
      {"clamp tensor bounds",
       {{3, 4}, {3, 4}, {4}},
       [](auto& x) { return clamp(x[0], x[1] - 0.33, x[2] + 0.33); },
       distinct},
      {"clamp tensor min only", {{3, 4}, {4}}, [](auto& x) { return clamp(x[0], x[1], std::nullopt); }, distinct},
      {"clamp tensor max only", {{3, 4}, {3, 1}}, [](auto& x) { return clamp(x[0], std::nullopt, x[1]); }, distinct},
      {"clamp tensor min above max",
       {{3, 4}, {3, 4}, {3, 4}},
       [](auto& x) { return clamp(x[0], x[1] + 10.0, x[2] + 0.03); },
       distinct},
  };
}

}  // namespace op_table
