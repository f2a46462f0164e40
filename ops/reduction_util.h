#pragma once
// Internal helpers shared by ops/reduce_more.cpp, ops/scan.cpp and ops/sort.cpp.
#include "op_util.h"

namespace ag {

// Differentiable running sum / product along dim (dim already wrapped), from the last
// element backwards when `reverse`. cumsum/cumprod are the forward ones; the reverse
// ones are what their backwards (and prod's) need, and are themselves differentiable.
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse);
Tensor cumprod_dir(const Tensor& x, int64_t dim, bool reverse);

}  // namespace ag
