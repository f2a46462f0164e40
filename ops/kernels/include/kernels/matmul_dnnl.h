#pragma once
// The bf16 matmul engine (issue 25): oneDNN's bf16 matmul primitive (f32 accumulation,
// the result rounded once to bf16) where it beats converting to f32 around OpenBLAS's
// sgemm, which is on CPUs with AMX only (without AMX oneDNN's bf16 kernels, AVX512_BF16
// or AVX-512, were slower than the conversion). Measured with
// build/tools/benchmarks/half_bench (method: tools/benchmarks/README.md, "bf16 and f16:
// conversion and the matmul engine"). Internal header.
#include "kernels/kernels.h"

namespace ag::kernels {

// a (..., M, K) @ b (..., K, N), both bf16, batch dims broadcast, M, N, K > 0; an
// undefined tensor when the engine is off or oneDNN declines (no build support, no
// kernel for this CPU or layout, an error), and the caller converts to f32 instead.
Tensor matmul_dnnl(const Tensor& a, const Tensor& b);

// Which engine bf16 matmul uses: automatic (oneDNN on CPUs with AMX for products of at
// least 16 rows and 2^18 multiply-adds, the conversion elsewhere), or forced either way (tests, benchmarks). Forcing oneDNN on a CPU without
// bf16 kernels still falls back. Returns the previous setting.
// Automatic also sends products of at most kGemvMaxRows rows by a transposed
// contiguous weight (x @ W^T), of any size, to gemv.h's rows; `convert`
// forces the conversion.
enum class HalfGemm { automatic, dnnl, convert };
HalfGemm set_half_gemm(HalfGemm e);
HalfGemm half_gemm();  // the current setting
// Whether the library was built with oneDNN.
bool have_dnnl();
// The automatic engine's size rule: whether a @ b is big enough for oneDNN (at least 16
// rows and 2^18 multiply-adds; a (..., n, K) @ a 2-D b counts all numel(a) / K rows).
bool dnnl_worth_it(const Tensor& a, const Tensor& b);

}  // namespace ag::kernels
