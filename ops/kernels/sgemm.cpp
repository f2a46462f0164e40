// The f32 GEMM engine (kernels/sgemm.h): the rule, the process's choice, one call.
#include "kernels/sgemm.h"

#include <cblas.h>

#include <atomic>
#include <cstdlib>

#include "attograd/error.h"
#include "attograd/log.h"
#include "kernels/dispatch.h"

#if ATTOGRAD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

#include "dnnl_threads.h"
#endif

namespace ag::kernels {
namespace {

// What the CPU runs, from the vector kernels' own detection (dispatch.h); AVX512-BF16
// only picks the OPENBLAS_CORETYPE named in the reason.
detail::CpuSimd this_cpu() {
  detail::CpuSimd cpu;
  for (SimdLevel l : available_simd_levels()) {
    cpu.avx2 = cpu.avx2 || l == SimdLevel::avx2;
    cpu.avx512 = cpu.avx512 || l == SimdLevel::avx512;
  }
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
  cpu.avx512_bf16 = cpu.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
  return cpu;
}

SgemmChoice initial_choice() {
  const char* env = std::getenv("ATTOGRAD_SGEMM");
  std::string forced = env ? env : "";
  if (!forced.empty() && forced != "openblas" && forced != "onednn") {
    log().warn("ATTOGRAD_SGEMM={} is not openblas or onednn; ignored", forced);
    forced.clear();
  }
  if (forced == "onednn" && ATTOGRAD_HAVE_DNNL == 0) {
    log().warn("ATTOGRAD_SGEMM=onednn, but this attograd was built without oneDNN; f32 products use OpenBLAS");
    forced.clear();
  }
  const char* core = openblas_get_corename();
  SgemmChoice c = choose_sgemm_engine(forced, core ? core : "", this_cpu(), ATTOGRAD_HAVE_DNNL != 0);
  if (c.engine == SgemmEngine::onednn && forced.empty())
    log().info("f32 products: {}", c.reason);
  else
    log().debug("f32 products: {}", c.reason);
  return c;
}

std::atomic<const SgemmChoice*> g_forced{nullptr};  // set_sgemm_engine's choice, else null

}  // namespace

std::string to_string(SgemmEngine e) { return e == SgemmEngine::onednn ? "oneDNN" : "OpenBLAS"; }

SgemmChoice choose_sgemm_engine(const std::string& forced, const std::string& blas_core, const detail::CpuSimd& cpu,
                                bool have_dnnl) {
  if (forced == "openblas")
    return {SgemmEngine::openblas, "OpenBLAS's sgemm (" + blas_core + " kernels): ATTOGRAD_SGEMM=openblas"};
  if (forced == "onednn" && have_dnnl) return {SgemmEngine::onednn, "oneDNN's sgemm: ATTOGRAD_SGEMM=onednn"};
  const std::string advice = detail::blas_coretype_advice(blas_core, cpu);
  if (!advice.empty() && have_dnnl)
    return {SgemmEngine::onednn, "oneDNN's sgemm, JIT-compiled for this CPU: OpenBLAS does not know it and runs its " +
                                     blas_core + " kernels (without AVX2)"};
  if (!advice.empty())
    return {SgemmEngine::openblas, "OpenBLAS's sgemm on its " + blas_core +
                                       " kernels (without AVX2; built without oneDNN: start with OPENBLAS_CORETYPE=" +
                                       advice + " for the fast ones)"};
  return {SgemmEngine::openblas, "OpenBLAS's sgemm (" + (blas_core.empty() ? std::string("?") : blas_core) +
                                     " kernels, chosen by OpenBLAS for this CPU)"};
}

const SgemmChoice& sgemm_choice() {
  if (const SgemmChoice* forced = g_forced.load(std::memory_order_acquire)) return *forced;
  static const SgemmChoice initial = initial_choice();  // once per process, logged then
  return initial;
}

SgemmEngine set_sgemm_engine(SgemmEngine e) {
  AG_CHECK(e != SgemmEngine::onednn || ATTOGRAD_HAVE_DNNL != 0, ValueError,
           "set_sgemm_engine: this attograd was built without oneDNN");
  const SgemmEngine previous = sgemm_engine();
  // Each choice lives for the process (a product on another thread may be reading one).
  static SgemmChoice forced_openblas{SgemmEngine::openblas, "OpenBLAS's sgemm: set_sgemm_engine"};
  static SgemmChoice forced_onednn{SgemmEngine::onednn, "oneDNN's sgemm: set_sgemm_engine"};
  g_forced.store(e == SgemmEngine::onednn ? &forced_onednn : &forced_openblas, std::memory_order_release);
  return previous;
}

void sgemm_on(SgemmEngine engine, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
#if ATTOGRAD_HAVE_DNNL
  if (engine == SgemmEngine::onednn) {
    OneThread one;  // oneDNN's OpenMP threads would fight attograd's pool (dnnl_threads.h)
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) == dnnl_success)
      return;
  }
#else
  (void)engine;
#endif
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
              ldb, beta, C, ldc);
}

std::string dnnl_description() {
#if ATTOGRAD_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
#else
  return "none (built without oneDNN)";
#endif
}

}  // namespace ag::kernels
