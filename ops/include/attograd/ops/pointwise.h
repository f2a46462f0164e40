#pragma once
// Elementwise math and activation functions beyond ops.h's core set
// (ops/math.cpp, ops/activation.cpp).
#include "attograd/ops.h"

namespace ag {}  // namespace ag
