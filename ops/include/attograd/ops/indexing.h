#pragma once
// Scatter, masked and one-hot indexing, and einsum (ops/scatter.cpp, ops/einsum.cpp).
#include "attograd/ops.h"

namespace ag {}  // namespace ag
