#pragma once
// Shape ops beyond ops.h's views: flips, rolls, padding, repetition, triangles and
// diagonals (ops/shaping.cpp).
#include "attograd/ops.h"

namespace ag {}  // namespace ag
