#pragma once
// Whether OpenBLAS picked kernels below what the CPU can run. A DYNAMIC_ARCH OpenBLAS
// (Debian's) picks its kernels from the CPU model when it loads; a model newer than the
// library (Emerald Rapids, family 6 model 207, under 0.3.21) falls back to "Prescott"
// (SSE3), and sgemm then runs several times slower than it could
// (tools/benchmarks/README.md, "OpenBLAS on a CPU it does not know"). The library
// cannot change that choice after the load: OPENBLAS_CORETYPE must be in the environment
// before the program starts; the f32 GEMM engine (ops/kernels/sgemm.h) runs oneDNN's
// sgemm instead where this advice is not empty. Internal (ag::detail): not part of the API.
#include <string>

namespace ag::detail {

// What the CPU supports, as far as OpenBLAS's x86-64 kernels go.
struct CpuSimd {
  bool avx2 = false, avx512 = false, avx512_bf16 = false;
};

// The OPENBLAS_CORETYPE that suits `cpu` when `core` (openblas_get_corename()) is one of
// OpenBLAS's pre-AVX2 x86 kernel sets and the CPU has AVX2 or AVX-512; "" otherwise
// (including every non-x86 core name and every name OpenBLAS may add later).
std::string blas_coretype_advice(const std::string& core, const CpuSimd& cpu);

}  // namespace ag::detail
