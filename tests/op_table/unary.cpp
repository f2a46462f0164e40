// Op table lines: elementwise math beyond the core set (ops/math.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(math) {
  return {
      {"tan", {{3, 4}}, [](auto& x) { return tan(x[0]); }, unit},
      {"tan transposed", {{3, 4}}, [](auto& x) { return tan(x[0] * 0.5); }, transposed},
      {"asin", {{3, 4}}, [](auto& x) { return asin(x[0]); }, unit},
      {"acos", {{3, 4}}, [](auto& x) { return acos(x[0]); }, unit},
      {"atan", {{3, 4}}, [](auto& x) { return atan(x[0]); }},
      {"sinh", {{3, 4}}, [](auto& x) { return sinh(x[0]); }},
      {"cosh", {{3, 4}}, [](auto& x) { return cosh(x[0]); }},
      {"asinh", {{3, 4}}, [](auto& x) { return asinh(x[0]); }},
      {"acosh of x + 1", {{3, 4}}, [](auto& x) { return acosh(x[0] + 1.0); }, positive},
      {"atanh", {{3, 4}}, [](auto& x) { return atanh(x[0]); }, unit},
      {"atanh strided", {{6}}, [](auto& x) { return atanh(x[0] * 0.3); }, strided},
      {"log2", {{3, 4}}, [](auto& x) { return log2(x[0]); }, positive},
      {"log10", {{3, 4}}, [](auto& x) { return log10(x[0]); }, positive},
      {"log1p", {{3, 4}}, [](auto& x) { return log1p(x[0]); }, positive},
      {"expm1", {{3, 4}}, [](auto& x) { return expm1(x[0]); }},
      {"exp2", {{3, 4}}, [](auto& x) { return exp2(x[0]); }},
      // Rounding has zero gradient; x * op(x) checks that the graph passes through it.
      {"floor times x", {{3, 4}}, [](auto& x) { return x[0] * floor(x[0]); }, distinct},
      {"ceil times x", {{3, 4}}, [](auto& x) { return x[0] * ceil(x[0]); }, distinct},
      {"round times x", {{3, 4}}, [](auto& x) { return x[0] * round(x[0]); }, distinct},
      {"round decimals 1 times x", {{3, 4}}, [](auto& x) { return x[0] * round(x[0] * 0.5, 1); }, distinct},
      {"trunc times x", {{3, 4}}, [](auto& x) { return x[0] * trunc(x[0]); }, distinct},
      {"frac", {{3, 4}}, [](auto& x) { return frac(x[0] * 3.0); }, distinct},
      {"where isnan isinf of 1/x", {{3, 4}},
       [](auto& x) {
         Tensor r = 1.0 / x[0];
         return where(logical_or(isnan(r), isinf(r)), 0.0, r);
       }, positive},
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
      // Bounds offset from x's grid (distinct: 0.05 and 0.15 mod 0.2) so nothing ties.
      {"clamp tensor bounds", {{3, 4}, {3, 4}, {4}},
       [](auto& x) { return clamp(x[0], x[1] - 0.33, x[2] + 0.33); }, distinct},
      {"clamp tensor min only", {{3, 4}, {4}}, [](auto& x) { return clamp(x[0], x[1], std::nullopt); }, distinct},
      {"clamp tensor max only", {{3, 4}, {3, 1}}, [](auto& x) { return clamp(x[0], std::nullopt, x[1]); }, distinct},
      {"clamp tensor min above max", {{3, 4}, {3, 4}, {3, 4}},
       [](auto& x) { return clamp(x[0], x[1] + 10.0, x[2] + 0.03); }, distinct},
      {"where isclose", {{3, 4}, {3, 4}},
       [](auto& x) { return where(isclose(x[0], x[0] * (1 + 1e-7)), x[0], x[1]); }},
  };
}

}  // namespace op_table
