// Op table lines: layer_norm, rms_norm, normalize and the norms (ops/norm.cpp).
#include <cmath>
#include <vector>

#include "op_table.h"

namespace op_table {
namespace {
// x times fixed weights 1 + sqrt(k + 2) / 7 (k the flat index): sums of |x| along any dim
// then differ, so amax / amin in the matrix norms have no ties (a kink).
Tensor spread(const Tensor& x) {
  std::vector<double> w(static_cast<std::size_t>(x.numel()));
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = 1 + std::sqrt(static_cast<double>(k) + 2) / 7;
  return x * Tensor::from_vector(w, x.shape());
}
}  // namespace

AG_OP_TABLE(norm) {
  return {
      {"layer_norm", {{3, 4}}, [](auto& x) { return layer_norm(x[0], {4}); }},
      {"layer_norm weight and bias", {{3, 4}, {4}, {4}}, [](auto& x) { return layer_norm(x[0], {4}, x[1], x[2]); }},
      {"layer_norm weight only", {{3, 4}, {4}}, [](auto& x) { return layer_norm(x[0], {4}, x[1]); }},
      {"layer_norm bias only", {{3, 4}, {4}}, [](auto& x) { return layer_norm(x[0], {4}, {}, x[1]); }},
      {"layer_norm 2-D normalized_shape",
       {{2, 2, 3}, {2, 3}, {2, 3}},
       [](auto& x) {
         return layer_norm(x[0], {2, 3}, x[1], x[2]);
       }},
      {"layer_norm non-contiguous",
       {{3, 4}, {4}, {4}},
       [](auto& x) { return layer_norm(x[0], {4}, x[1], x[2]); },
       transposed},
      {"rms_norm (default eps: finfo eps)", {{3, 4}}, [](auto& x) { return rms_norm(x[0], {4}); }},
      {"rms_norm weight eps 1e-6", {{3, 4}, {4}}, [](auto& x) { return rms_norm(x[0], {4}, x[1], 1e-6); }},
      {"rms_norm 2-D normalized_shape",
       {{2, 2, 3}, {2, 3}},
       [](auto& x) {
         return rms_norm(x[0], {2, 3}, x[1], 1e-5);
       }},
      {"rms_norm non-contiguous", {{3, 4}, {4}}, [](auto& x) { return rms_norm(x[0], {4}, x[1]); }, transposed},
      // normalize: norms kept above eps (a clamped norm's gradient is PyTorch's
      // pass-through, not the forward's derivative), but for the eps line.
      {"normalize p 2 dim 1", {{3, 4}}, [](auto& x) { return normalize(x[0]); }},
      {"normalize p 1 dim 0", {{3, 4}}, [](auto& x) { return normalize(x[0], 1.0, 0); }},
      {"normalize p 3 dim -1", {{2, 3, 4}}, [](auto& x) { return normalize(x[0], 3.0, -1); }},
      {"normalize p inf", {{3, 4}}, [](auto& x) { return normalize(x[0], kInf, 1); }, distinct},
      {"normalize p 0 counts non-zeros", {{3, 4}}, [](auto& x) { return normalize(x[0], 0.0, 1); }},
      {"normalize p -1", {{3, 4}}, [](auto& x) { return normalize(x[0], -1.0, 1); }},
      {"normalize p -2.5 dim 0", {{3, 4}}, [](auto& x) { return normalize(x[0], -2.5, 0); }},
      {"normalize p -inf", {{3, 4}}, [](auto& x) { return normalize(x[0], -kInf, 1); }, distinct},
      {"normalize p 2 eps clamps the norm", {{3, 4}}, [](auto& x) { return normalize(x[0], 2.0, 1, 50.0); }},
      {"normalize non-contiguous", {{3, 4}}, [](auto& x) { return normalize(x[0]); }, transposed},
      // The norms: dims moved to the end and merged, then normalize's p-norm rules.
      {"linalg_vector_norm all dims", {{3, 4}}, [](auto& x) { return linalg_vector_norm(x[0]); }},
      {"linalg_vector_norm ord 3 dims 0 2 keepdim",
       {{2, 3, 4}},
       [](auto& x) {
         return linalg_vector_norm(x[0], 3.0, {0, 2}, true);
       }},
      {"linalg_vector_norm ord 1 dim -1", {{3, 4}}, [](auto& x) { return linalg_vector_norm(x[0], 1.0, {-1}); }},
      {"linalg_vector_norm ord inf dim 0",
       {{3, 4}},
       [](auto& x) { return linalg_vector_norm(x[0], kInf, {0}); },
       distinct},
      {"linalg_vector_norm ord -2 dim 1", {{3, 4}}, [](auto& x) { return linalg_vector_norm(x[0], -2.0, {1}); }},
      {"norm p 2 dim 1 keepdim", {{3, 4}}, [](auto& x) { return norm(x[0], 2.0, {1}, true); }},
      {"frobenius_norm all dims", {{2, 3, 4}}, [](auto& x) { return frobenius_norm(x[0]); }},
      {"linalg_matrix_norm fro batched", {{2, 3, 4}}, [](auto& x) { return linalg_matrix_norm(x[0]); }, transposed},
      // ord +-1 / +-inf: abs, a sum and amax / amin. Rows and columns scaled apart so that
      // no two column (row) sums tie; `distinct` keeps |x| away from 0.
      {"linalg_matrix_norm ord 1", {{3, 4}}, [](auto& x) { return linalg_matrix_norm(spread(x[0]), 1.0); }, distinct},
      {"linalg_matrix_norm ord -1 dims (0, 2) keepdim",
       {{3, 2, 4}},
       [](auto& x) {
         return linalg_matrix_norm(spread(x[0]), -1.0, {0, 2}, true);
       },
       distinct},
      {"linalg_matrix_norm ord inf batched",
       {{2, 3, 4}},
       [](auto& x) { return linalg_matrix_norm(spread(x[0]), kInf); },
       distinct},
      {"linalg_matrix_norm ord -inf dims (-1, -2)",
       {{3, 4}},
       [](auto& x) {
         return linalg_matrix_norm(spread(x[0]), -kInf, {-1, -2});
       },
       distinct},
      {"cdist p 2 batched", {{2, 3, 4}, {2, 5, 4}}, [](auto& x) { return cdist(x[0], x[1]); }},
      {"cdist p 1", {{3, 4}, {5, 4}}, [](auto& x) { return cdist(x[0], x[1], 1.0); }},
      {"cdist p 3", {{3, 4}, {2, 4}}, [](auto& x) { return cdist(x[0], x[1], 3.0); }},
  };
}

}  // namespace op_table
