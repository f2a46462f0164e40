#pragma once
// Reductions, scans and sorting beyond ops.h's core set (ops/reduce_more.cpp, ops/scan.cpp,
// ops/sort.cpp).
#include "attograd/ops.h"

namespace ag {}  // namespace ag
