// Op table lines: rotary position embedding with its table builder (ops/position.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(position) {
  return {
      // x (B, h, L, d) with the HF tables for positions 0 .. L-1 (d 4: two frequencies).
      {"rotary_embedding rotary_cos_sin (B, h, L, d)",
       {{2, 2, 3, 4}},
       [](auto& x) {
         auto [c, s] = rotary_cos_sin(3, 4, 10000.0, 0, DType::f64);
         return rotary_embedding(x[0], c, s);
       }},
      // Cached decoding: positions 5 .. 7, a small base so every angle is large.
      {"rotary_embedding offset 5 base 100",
       {{1, 2, 3, 6}},
       [](auto& x) {
         auto [c, s] = rotary_cos_sin(3, 6, 100.0, 5, DType::f64);
         return rotary_embedding(x[0], c, s);
       }},
      // Arbitrary cos / sin that need gradients (summed over the batch by sum_to); the
      // two halves differ, so dx must be rotate_half^T(g * sin), not rotate_half^T(g) * sin.
      {"rotary_embedding cos and sin as inputs",
       {{2, 3, 4}, {3, 4}, {3, 4}},
       [](auto& x) { return rotary_embedding(x[0], x[1], x[2]); }},
      // The (B, L, h, d) layout: tables (L, 1, d) broadcast over the heads.
      {"rotary_embedding (B, L, h, d) layout",
       {{2, 3, 2, 4}},
       [](auto& x) {
         auto [c, s] = rotary_cos_sin(3, 4, 10000.0, 2, DType::f64);
         return rotary_embedding(x[0], c.unsqueeze(-2), s.unsqueeze(-2));
       }},
      {"rotary_embedding non-contiguous",
       {{2, 3, 4}},
       [](auto& x) {
         auto [c, s] = rotary_cos_sin(3, 4, 10000.0, 1, DType::f64);
         return rotary_embedding(x[0], c, s);
       },
       transposed},
  };
}

}  // namespace op_table
