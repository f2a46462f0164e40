// Op table lines: layer_norm, rms_norm, normalize and the norms (ops/norm.cpp); batch_norm,
// group_norm and instance_norm (ops/norm/batch_norm.cpp).
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
// Running statistics for the batch and instance norm lines, in x's dtype; the eval
// values are exact in bf16 and f16, so the half-dtype table compares like with like.
Tensor stat(const Tensor& x, std::vector<double> v) { return Tensor::from_vector(v, {3}).to(x.dtype()); }
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
      // batch_norm: training normalizes with the batch's statistics (the running ones,
      // updated in place, do not enter the output), eval with the running ones.
      {"batch_norm training (N, C)", {{5, 3}}, [](auto& x) { return batch_norm(x[0], {}, {}, {}, {}, true); }},
      {"batch_norm training affine 4-D running stats",
       {{2, 3, 2, 3}, {3}, {3}},
       [](auto& x) {
         return batch_norm(x[0], stat(x[0], {0, 0, 0}), stat(x[0], {1, 1, 1}), x[1], x[2], true, 0.1, 1e-5);
       }},
      {"batch_norm training affine 3-D momentum 0.3",
       {{3, 3, 4}, {3}, {3}},
       [](auto& x) {
         return batch_norm(x[0], stat(x[0], {0.5, -1, 2}), stat(x[0], {2, 0.5, 1}), x[1], x[2], true, 0.3, 1e-3);
       }},
      {"batch_norm training weight only non-contiguous",
       {{4, 3}, {3}},
       [](auto& x) { return batch_norm(x[0], {}, {}, x[1], {}, true); },
       transposed},
      {"batch_norm eval affine 4-D",
       {{2, 3, 2, 2}, {3}, {3}},
       [](auto& x) {
         return batch_norm(x[0], stat(x[0], {0.5, -0.25, 1}), stat(x[0], {1.5, 0.75, 2}), x[1], x[2], false);
       }},
      {"batch_norm eval 3-D",
       {{2, 3, 4}},
       [](auto& x) {
         return batch_norm(x[0], stat(x[0], {-0.5, 0.25, 0}), stat(x[0], {0.5, 1, 3}), {}, {});
       }},
      {"group_norm 3-D", {{2, 4, 3}}, [](auto& x) { return group_norm(x[0], 2); }},
      {"group_norm affine 4-D", {{2, 6, 2, 2}, {6}, {6}}, [](auto& x) { return group_norm(x[0], 3, x[1], x[2]); }},
      {"group_norm one group per channel eps 1e-3",
       {{3, 3, 4}, {3}},
       [](auto& x) { return group_norm(x[0], 3, x[1], {}, 1e-3); }},
      {"instance_norm 3-D", {{2, 3, 4}}, [](auto& x) { return instance_norm(x[0]); }},
      {"instance_norm affine 4-D running stats",
       {{2, 3, 2, 2}, {3}, {3}},
       [](auto& x) {
         return instance_norm(x[0], stat(x[0], {0, 0, 0}), stat(x[0], {1, 1, 1}), x[1], x[2]);
       }},
      {"instance_norm eval running stats",
       {{2, 3, 4}, {3}, {3}},
       [](auto& x) {
         return instance_norm(x[0], stat(x[0], {0.5, -0.25, 1}), stat(x[0], {1.5, 0.75, 2}), x[1], x[2], false);
       }},
  };
}

}  // namespace op_table
