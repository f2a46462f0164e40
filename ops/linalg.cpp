// matmul and linear.
#include "op_util.h"

namespace ag {

// ---- matmul ----------------------------------------------------------------------
// out = a @ b over (..., M, K) x (..., K, N).
//   da = sum_to(g @ b^T, a.shape)   db = sum_to(a^T @ g, b.shape)
// The transposes are views: the kernel hands them to BLAS as transpose flags.
static Tensor matmul_nd(const Tensor& a, const Tensor& b) {
  Tensor out = K::matmul(a, b);
  bool na = wants_grad(a), nb = wants_grad(b);
  return record("matmul", out, {a, b},
                [sa = save_if(nb, a), sb = save_if(na, b), as = a.shape(),
                 bs = b.shape()](const Tensor& g, NeedsGrad need) {
                  Grads grads(2);
                  if (need[0]) grads[0] = sum_to(matmul(g, transpose(sb.get(), -1, -2)), as);
                  if (need[1]) {
                    const Tensor& a = sa.get();
                    if (bs.size() == 2 && a.dim() > 2) {
                      // Shared weight: fold the batch into rows, one GEMM (K, B*M) @ (B*M, N).
                      Tensor a2 = reshape(a, {-1, as[as.size() - 1]});
                      Tensor g2 = reshape(g, {-1, g.shape()[g.dim() - 1]});
                      grads[1] = matmul(transpose(a2, 0, 1), g2);
                    } else {
                      grads[1] = sum_to(matmul(transpose(a, -1, -2), g), bs);
                    }
                  }
                  return grads;
                });
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  AG_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError, "matmul: shapes ", a.shape(), " and ", b.shape(),
           " cannot be multiplied (0-d operand)");
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, "matmul: dtypes ", a.dtype(), " and ", b.dtype(),
           " differ (shapes ", a.shape(), " and ", b.shape(), ")");
  check_float(a, "matmul");
  const int64_t ka = a.shape()[a.dim() - 1];
  const int64_t kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  AG_CHECK(ka == kb, ShapeError, "matmul: shapes ", a.shape(), " and ", b.shape(),
           " cannot be multiplied (", ka, " != ", kb, ")");
  if (a.dim() == 1 && b.dim() == 1) return reshape(matmul_nd(unsqueeze(a, 0), unsqueeze(b, 1)), {});
  if (a.dim() == 1) return squeeze(matmul_nd(unsqueeze(a, 0), b), -2);
  if (b.dim() == 1) return squeeze(matmul_nd(a, unsqueeze(b, 1)), -1);
  Shape ab(std::vector<int64_t>(a.shape().begin(), a.shape().end() - 2));
  Shape bb(std::vector<int64_t>(b.shape().begin(), b.shape().end() - 2));
  try {
    broadcast_shapes(ab, bb, "matmul");
  } catch (const ShapeError&) {
    throw ShapeError(detail::cat("matmul: batch dims of shapes ", a.shape(), " and ", b.shape(),
                                 " cannot be broadcast (", ab, " vs ", bb, ")"));
  }
  return matmul_nd(a, b);
}

// x (..., in) @ W^T (in, out) + b (out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  AG_CHECK(weight.dim() == 2, ShapeError, "linear: weight must be 2-D [out, in], got shape ",
           weight.shape());
  AG_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] == weight.shape()[1], ShapeError,
           "linear: input shape ", x.shape(), " does not match weight shape ", weight.shape(),
           " (expected last dim ", weight.shape()[1], ")");
  Tensor y = matmul(x, transpose(weight, 0, 1));
  if (!bias.defined()) return y;
  AG_CHECK(bias.dim() == 1 && bias.shape()[0] == weight.shape()[0], ShapeError, "linear: bias shape ",
           bias.shape(), " does not match weight shape ", weight.shape());
  return y + bias;
}

}  // namespace ag
