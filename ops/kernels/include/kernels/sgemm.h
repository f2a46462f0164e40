#pragma once
// The f32 GEMM engine (issue 43): OpenBLAS's sgemm or oneDNN's, chosen once per process.
// Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from the CPU model when it
// loads; on a model newer than the library (Sapphire and Emerald Rapids) it falls back to
// its Prescott (SSE3) kernels, and nothing a library does after the load changes that
// (OPENBLAS_CORETYPE must be in the environment before the program starts). oneDNN's
// sgemm JITs for the CPU it finds. So: OpenBLAS where it runs kernels for this CPU's
// vector width, oneDNN where it fell back (tools/benchmarks/README.md, "OpenBLAS on a
// CPU it does not know": the measurements behind the rule). Internal header.
#include <cstdint>
#include <string>

#include "attograd/detail/blas_check.h"

namespace ag::kernels {

enum class SgemmEngine { openblas, onednn };
std::string to_string(SgemmEngine e);  // "OpenBLAS", "oneDNN"

// The rule, pure for tests: `forced` is ATTOGRAD_SGEMM's value ("" when unset;
// "openblas" or "onednn" force, anything else is ignored with a warning by the caller);
// `blas_core` is openblas_get_corename(). oneDNN when forced, or when OpenBLAS runs
// pre-AVX2 kernels on a CPU with AVX2 or AVX-512 (detail::blas_coretype_advice) and the
// library has oneDNN; OpenBLAS otherwise.
struct SgemmChoice {
  SgemmEngine engine = SgemmEngine::openblas;
  std::string reason;  // one line for show_config() and the log
};
SgemmChoice choose_sgemm_engine(const std::string& forced, const std::string& blas_core, const detail::CpuSimd& cpu,
                                bool have_dnnl);

// This process's choice: from the environment, OpenBLAS and the CPU at the first call
// (logged once at info level when oneDNN takes over), unless set_sgemm_engine chose.
const SgemmChoice& sgemm_choice();
inline SgemmEngine sgemm_engine() { return sgemm_choice().engine; }
// For tests and benchmarks: forces an engine (oneDNN without the library's support is a
// ValueError); returns the previous one.
SgemmEngine set_sgemm_engine(SgemmEngine e);

// C = alpha op(A) op(B) + beta C, row-major, on the calling thread alone, by `engine`.
void sgemm_on(SgemmEngine engine, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// "oneDNN 2.7.3 (ISA avx2)", or "none (built without oneDNN)": for show_config().
std::string dnnl_description();

}  // namespace ag::kernels
