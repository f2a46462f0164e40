#pragma once
/// \file
/// The softmax family along one dim (ops/softmax.cpp): x's shape out, f32 or f64.
#include <cstdint>

#include "attograd/tensor.h"

namespace ag {

/// Stable (row max subtracted). A row that is all -inf gives zeros, and zero gradient.
Tensor softmax(const Tensor& x, int64_t dim);
/// A row that is all -inf gives -inf, and zero gradient.
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmin(const Tensor& x, int64_t dim);  ///< softmax(-x, dim)

}  // namespace ag
