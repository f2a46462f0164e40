#pragma once
// float sums in double (reduce.cpp; double and integer sums run in order there): a row
// in double lanes, and a row added into double accumulators.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// sum of x over n, in the double lanes of the level's width, then the tail in order.
using SumRowFn = double (*)(const float* x, int64_t n);
AG_DECLARE_DISPATCH(SumRowFn, sum_row);

// acc[j] += x[j] for j < n (the bias-gradient sum over leading dims).
using AccumulateRowFn = void (*)(double* acc, const float* x, int64_t n);
AG_DECLARE_DISPATCH(AccumulateRowFn, accumulate_row);

}  // namespace ag::kernels
