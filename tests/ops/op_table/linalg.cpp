// Op table lines: matmul, linear and einsum (ops/linalg.cpp). einsum's lines: the
// Transformer's contractions, the single-operand patterns (diagonal, trace, permutation,
// sums), ellipsis broadcasting, size-1 letters that broadcast, and non-contiguous
// operands.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(linalg) {
  return {
      {"matmul 1-D . 1-D", {{4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 2-D", {{3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D @ 1-D", {{3, 4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul transposed operands", {{3, 2}, {4, 3}}, [](auto& x) { return matmul(x[0].t(), x[1].t()); }},
      {"matmul non-contiguous leaves", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }, transposed},
      {"matmul batched [2,3,4] @ [4,5]", {{2, 3, 4}, {4, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,1,3,4] @ [3,4,5]", {{2, 1, 3, 4}, {3, 4, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,3,2] @ [2,2,3] non-contiguous",
       {{2, 3, 2}, {2, 2, 3}},
       [](auto& x) { return matmul(x[0], x[1]); },
       transposed},
      {"matmul 2-D @ 3-D", {{3, 2}, {2, 2, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 3-D", {{3}, {2, 3, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 3-D @ 1-D", {{2, 3, 2}, {2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"linear with bias", {{2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear without bias", {{2, 3}, {4, 3}}, [](auto& x) { return linear(x[0], x[1]); }},
      {"linear 1-D input", {{3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D input", {{2, 2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D non-contiguous input",
       {{2, 2, 3}, {4, 3}},
       [](auto& x) { return linear(x[0].transpose(0, 1), x[1]); }},
      // ---- einsum ----
      {"einsum bij,bjk->bik batched matmul",
       {{2, 3, 4}, {2, 4, 5}},
       [](auto& x) {
         return einsum("bij,bjk->bik", {x[0], x[1]});
       }},
      {"einsum bhld,bhsd->bhls attention scores",
       {{2, 2, 3, 4}, {2, 2, 5, 4}},
       [](auto& x) {
         return einsum("bhld,bhsd->bhls", {x[0], x[1]});
       }},
      {"einsum bhls,bhsd->bhld attention values",
       {{2, 2, 3, 5}, {2, 2, 5, 4}},
       [](auto& x) {
         return einsum("bhls,bhsd->bhld", {x[0], x[1]});
       }},
      {"einsum bhld,bhsd->bhls non-contiguous",
       {{2, 2, 3, 4}, {2, 2, 5, 4}},
       [](auto& x) {
         return einsum("bhld,bhsd->bhls", {x[0], x[1]});
       },
       transposed},
      {"einsum ij,jk->ik",
       {{3, 4}, {4, 2}},
       [](auto& x) {
         return einsum("ij,jk->ik", {x[0], x[1]});
       }},
      {"einsum ij,jk implicit output non-contiguous",
       {{3, 4}, {4, 2}},
       [](auto& x) {
         return einsum("ij,jk", {x[0], x[1]});
       },
       transposed},
      {"einsum i,j->ij outer product",
       {{3}, {4}},
       [](auto& x) {
         return einsum("i,j->ij", {x[0], x[1]});
       }},
      {"einsum i,j->ij strided",
       {{3}, {4}},
       [](auto& x) {
         return einsum("i,j->ij", {x[0], x[1]});
       },
       strided},
      {"einsum ii-> trace", {{4, 4}}, [](auto& x) { return einsum("ii->", {x[0]}); }},
      {"einsum ii->i diagonal non-contiguous", {{3, 3}}, [](auto& x) { return einsum("ii->i", {x[0]}); }, transposed},
      {"einsum iji->ij repeated letter in 3-D", {{3, 2, 3}}, [](auto& x) { return einsum("iji->ij", {x[0]}); }},
      {"einsum ij->ji permutation", {{3, 4}}, [](auto& x) { return einsum("ij->ji", {x[0]}); }},
      {"einsum bij->bj sum", {{2, 3, 4}}, [](auto& x) { return einsum("bij->bj", {x[0]}); }},
      {"einsum ij,ij-> dot",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         return einsum("ij,ij->", {x[0], x[1]});
       }},
      {"einsum ij,ij-> non-contiguous",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         return einsum("ij,ij->", {x[0], x[1]});
       },
       transposed},
      {"einsum ...ij,...jk->...ik",
       {{2, 3, 4}, {2, 4, 5}},
       [](auto& x) {
         return einsum("...ij,...jk->...ik", {x[0], x[1]});
       }},
      {"einsum ...ij,...jk->...ik broadcast ellipsis",
       {{2, 1, 3, 4}, {3, 4, 2}},
       [](auto& x) {
         return einsum("...ij,...jk->...ik", {x[0], x[1]});
       }},
      {"einsum ij,jk->ik size-1 letter broadcasts",
       {{3, 1}, {4, 2}},
       [](auto& x) {
         return einsum("ij,jk->ik", {x[0], x[1]});
       }},
      {"einsum ij,ij->ij size-1 batch letter broadcasts",
       {{3, 1}, {3, 4}},
       [](auto& x) {
         return einsum("ij,ij->ij", {x[0], x[1]});
       }},
      {"einsum ij,jk,kl->il three operands",
       {{2, 3}, {3, 4}, {4, 2}},
       [](auto& x) {
         return einsum("ij,jk,kl->il", {x[0], x[1], x[2]});
       }},
      {"einsum bn,anm,bm->ba bilinear",
       {{2, 3}, {4, 3, 5}, {2, 5}},
       [](auto& x) {
         return einsum("bn,anm,bm->ba", {x[0], x[1], x[2]});
       }},
      {"einsum i...->... ellipsis without output letters",
       {{3, 2, 4}},
       [](auto& x) { return einsum("i...->...", {x[0]}); }},
      {"einsum ...i->i ellipsis summed when the output has none",
       {{2, 3, 4}},
       [](auto& x) { return einsum("...i->i", {x[0]}); }},
  };
}

}  // namespace op_table
