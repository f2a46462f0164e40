// Op table lines: indexing (ops/indexing.cpp): gathers, embedding, the scatter family,
// masked indexing, one_hot, and the index lists (Tensor::index's rules: index,
// index_put, nonzero, argwhere). Scatter lines use indices that do not repeat within a
// column (dim 0) or row (dim 1): with repeats, scatter's result is PyTorch-undefined and
// not differentiable in src.
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(indexing) {
  return {
      {"index_select repeated ids",
       {{4, 3}},
       [](auto& x) {
         return index_select(x[0], 0, i64({2, 0, 2}, {3}));
       }},
      {"index_select negative dim non-contiguous",
       {{3, 4}},
       [](auto& x) {
         return index_select(x[0], -1, i64({3, 1, 1, 0, 3}, {5}));
       },
       transposed},
      {"gather dim 1 repeated",
       {{3, 4}},
       [](auto& x) {
         return gather(x[0], 1, i64({0, 0, 3, 2, 1, 2}, {3, 2}));
       }},
      {"gather dim 0 non-contiguous",
       {{3, 4}},
       [](auto& x) {
         return gather(x[0], 0, i64({2, 0, 1, 1, 0, 0, 2, 2}, {2, 4}));
       },
       transposed},
      {"embedding repeated ids",
       {{5, 3}},
       [](auto& x) {
         return embedding(i64({1, 4, 1, 0, 1, 2}, {2, 3}), x[0]);
       }},
      {"embedding i32 ids non-contiguous weight",
       {{5, 3}},
       [](auto& x) {
         return embedding(i64({3, 3, 0}, {3}).to(DType::i32), x[0]);
       },
       transposed},
      {"embedding padding_idx (not among the ids)",
       {{5, 3}},
       [](auto& x) {
         return embedding(i64({1, 4, 1}, {3}), x[0], 2);
       }},
      {"scatter dim 0 src",
       {{3, 4}, {2, 4}},
       [](auto& x) {
         return scatter(x[0], 0, i64({0, 2, 1, 2, 2, 0, 0, 1}, {2, 4}), x[1]);
       }},
      {"scatter dim 1 src larger than index",
       {{3, 4}, {3, 5}},
       [](auto& x) {
         return scatter(x[0], 1, i64({3, 0, 1, 2, 2, 0}, {3, 2}), x[1]);
       }},
      {"scatter negative dim non-contiguous",
       {{3, 4}, {2, 3}},
       [](auto& x) {
         return scatter(x[0], -1, i64({1, 3, 0, 2, 1, 3}, {2, 3}), x[1]);
       },
       transposed},
      {"scatter 3-D dim 1",
       {{2, 3, 2}, {2, 2, 2}},
       [](auto& x) {
         return scatter(x[0], 1, i64({0, 2, 1, 1, 2, 0, 0, 1}, {2, 2, 2}), x[1]);
       }},
      {"scatter value",
       {{3, 4}},
       [](auto& x) {
         return scatter(x[0], 1, i64({0, 3, 1, 1}, {2, 2}), 2.5);
       }},
      {"scatter value of a 0-d tensor",
       {Shape{}},
       [](auto& x) { return scatter(x[0] * 3.0, 0, i64({0}, {}), -1.0) + x[0]; }},
      {"scatter_add dim 0 repeated indices",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         return scatter_add(x[0], 0, i64({0, 0, 1, 2, 0, 1, 1, 2, 0, 0, 0, 0}, {3, 4}), x[1]);
       }},
      {"scatter_add dim 1 src larger non-contiguous",
       {{3, 4}, {2, 5}},
       [](auto& x) {
         return scatter_add(x[0], 1, i64({3, 3, 0, 1, 1, 2}, {2, 3}), x[1]);
       },
       transposed},
      {"index_add dim 0 repeated",
       {{4, 3}, {3, 3}},
       [](auto& x) {
         return index_add(x[0], 0, i64({3, 0, 3}, {3}), x[1]);
       }},
      {"index_add alpha negative dim i32 index non-contiguous",
       {{3, 4}, {3, 2}},
       [](auto& x) {
         return index_add(x[0], -1, i64({2, 2}, {2}).to(DType::i32), x[1], 2.5);
       },
       transposed},
      {"index_add 3-D dim 1",
       {{2, 3, 2}, {2, 4, 2}},
       [](auto& x) {
         return index_add(x[0], 1, i64({0, 2, 1, 0}, {4}), x[1], -1.5);
       }},
      {"index_add 0-d", {Shape{}, Shape{}}, [](auto& x) { return index_add(x[0], 0, i64({0}, {1}), x[1], 3.0); }},
      {"masked_select same shape",
       {{3, 4}},
       [](auto& x) {
         return masked_select(x[0], bools({1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1}, {3, 4}));
       }},
      {"masked_select mask broadcasts with x",
       {{3, 1}},
       [](auto& x) {
         return masked_select(x[0], bools({1, 0, 1, 1}, {4}));
       }},
      {"masked_select x broadcast to mask non-contiguous",
       {{2, 3}},
       [](auto& x) {
         return masked_select(x[0], bools({1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0}, {2, 2, 3}));
       },
       transposed},
      {"masked_scatter source larger than the trues",
       {{2, 3}, {2, 5}},
       [](auto& x) {
         return masked_scatter(x[0], bools({1, 0, 1, 0, 1, 1}, {2, 3}), x[1]);
       }},
      {"masked_scatter x broadcast to mask non-contiguous",
       {{3}, {7}},
       [](auto& x) {
         return masked_scatter(x[0], bools({1, 0, 1, 0, 1, 1}, {2, 3}), x[1]);
       },
       strided},
      {"masked_scatter mask broadcasts source exact",
       {{2, 3}, {4}},
       [](auto& x) {
         return masked_scatter(x[0], bools({0, 1}, {2, 1}), x[1].slice(0, 0, 3));
       }},
      {"mul by one_hot of class ids (inferred classes)",
       {{2, 3, 4}},
       [](auto& x) {
         return mul(x[0], one_hot(i64({0, 3, 1, 2, 2, 3}, {2, 3})).to(DType::f64));
       }},
      {"sum of x times one_hot with num_classes",
       {{4, 5}},
       [](auto& x) {
         return sum(x[0] * one_hot(i64({4, 0, 2, 2}, {4}), 5).to(DType::f64), {1});
       }},
      // Python's x[...] through LibTorch's index (a composite of views and index_select).
      {"index slices None Ellipsis and an int",
       {{3, 4, 5}},
       [](auto& x) {
         using namespace indexing;
         return index(x[0], {Slice(1), None, Ellipsis, 2});
       }},
      {"index adjacent repeated index tensors",
       {{3, 4, 5}},
       [](auto& x) {
         return index(x[0], {indexing::Slice(), i64({3, 0, 3}, {3}), i64({-1, 2, -1}, {3})});
       },
       transposed},
      {"index nonzero of a bool mask and a non-adjacent index tensor",
       {{3, 4, 5}},
       [](auto& x) {
         return index(x[0], {bools({1, 0, 1}, {3}), indexing::Slice(), i64({4, 1}, {2})});
       }},
      // Repeated positions only with accumulate (a plain put's last write wins: PyTorch
      // leaves it undefined, and the values' gradient is not that of the forward).
      {"index_put of a mask and a broadcast row",
       {{3, 4}, {4}},
       [](auto& x) {
         return index_put(x[0], {bools({1, 0, 1}, {3})}, x[1]);
       }},
      {"index_put accumulate repeated argwhere",
       {{3, 4}, {5}},
       [](auto& x) {
         Tensor rows = select(argwhere(bools({1, 0, 1, 1, 0}, {5})), 1, 0);  // [0, 2, 3]
         return index_put(x[0], {i64({0, 2, 0, 1, 0}, {5}), i64({1, 1, 1, 3, 0}, {5})}, x[1] * sum(rows.to(DType::f64)),
                          true);
       }},
      {"masked_fill broadcast mask",
       {{3, 4}},
       [](auto& x) {
         return masked_fill(x[0], bools({0, 1, 0, 1}, {4}), -7.0);
       }},
  };
}

}  // namespace op_table
