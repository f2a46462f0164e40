#pragma once
/// \file
/// Type promotion (ops/promotion.cpp): PyTorch's torch.result_type, the dtype that the
/// binary ops compute in. Binary ops broadcast NumPy-style and promote their operands'
/// dtypes as PyTorch does: i64 tensor * 0.5 is f32, i32 tensor + 2 stays i32, f32 + f64
/// tensors are f64. Mixed operands are converted with the differentiable to(), so each
/// input's gradient comes back in its own dtype. promote_types(DType, DType) is in
/// attograd/dtype.h.
#include "attograd/tensor.h"

namespace ag {

/// Categories bool < integral < floating; priority dimensioned tensors (dim >= 1) > 0-d
/// tensors > scalars. The result is the highest category present; its dtype comes from the
/// highest-priority class holding an operand of that category (promote_types among them),
/// and a scalar that raises the category gives i64 or get_default_dtype().
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);  ///< \overload
DType result_type(Scalar a, const Tensor& b);  ///< \overload

}  // namespace ag
