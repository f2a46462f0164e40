#pragma once
// Contiguous f32 <-> bf16 / f16 rows (copy.cpp: to(), copy_ and every conversion through
// f32), bit-identical at every level to the scalar ag::BFloat16 / ag::Half conversions
// (PyTorch 1.13's bits: round to nearest even, bf16 NaN 0x7FC0, f16 NaN sign | 0x7E00).
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// out[i] = the bf16 / f16 bits of x[i], i < n.
using ToHalfRowFn = void (*)(uint16_t* out, const float* x, int64_t n);
AG_DECLARE_DISPATCH(ToHalfRowFn, f32_to_bf16_row);
AG_DECLARE_DISPATCH(ToHalfRowFn, f32_to_f16_row);

// out[i] = the float of the bf16 / f16 bits x[i], i < n (exact; f16 NaNs quieted).
using FromHalfRowFn = void (*)(float* out, const uint16_t* x, int64_t n);
AG_DECLARE_DISPATCH(FromHalfRowFn, bf16_to_f32_row);
AG_DECLARE_DISPATCH(FromHalfRowFn, f16_to_f32_row);

}  // namespace ag::kernels
