#pragma once
/// \file
/// Linear algebra (ops/linalg.cpp): matmul, linear and einsum. Transposed operands go to
/// BLAS as transpose flags, in both directions of the pass.
#include <string>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// 1-D, 2-D and batched (..., M, K) @ (..., K, N) with broadcast batch dims. Transposed
/// views go to BLAS as transpose flags, in both directions of the pass.
Tensor matmul(const Tensor& a, const Tensor& b);
/// x (..., in) @ W^T + b with W in PyTorch's [out, in] layout.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
/// PyTorch's einsum: letters a-zA-Z, optional "->output" (implicit: letters seen once,
/// sorted, after the ellipsis dims), "..." broadcasting, a repeated letter within an
/// operand takes a diagonal, letters left out of the output are summed. Built from
/// views, sums and one batched matmul per pair of operands (left to right).
/// Example: einsum("bhld,bhsd->bhls", {q, k}) (B, h, L, S) attention scores.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ag
