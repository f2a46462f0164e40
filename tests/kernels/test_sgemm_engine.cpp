// The f32 GEMM engine (kernels/sgemm.h): the rule that picks OpenBLAS or oneDNN per
// machine, both engines against each other over shapes, transposes, leading dimensions,
// alpha / beta and special values (beta = 0 never reads C, as BLAS), and matmul with
// either engine forced, split over the pool or not.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul_dnnl.h"  // have_dnnl
#include "kernels/sgemm.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using kernels::SgemmEngine;

namespace {
detail::CpuSimd cpu(bool avx2, bool avx512) {
  detail::CpuSimd c;
  c.avx2 = avx2, c.avx512 = avx512;
  return c;
}

// Restores the process's engine at the end of a test case.
struct EngineGuard {
  SgemmEngine saved = kernels::sgemm_engine();
  ~EngineGuard() { kernels::set_sgemm_engine(saved); }
};

// C (M, N) by plain double loops: the reference for both engines.
std::vector<float> reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                             const std::vector<float>& A, int64_t lda, const std::vector<float>& B, int64_t ldb,
                             float beta, const std::vector<float>& C, int64_t ldc) {
  std::vector<float> out = C;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? A[k * lda + i] : A[i * lda + k]) * double(tb ? B[j * ldb + k] : B[k * ldb + j]);
      out[i * ldc + j] = float(alpha * s + (beta == 0 ? 0.0 : beta * double(C[i * ldc + j])));
    }
  return out;
}
}  // namespace

TEST_CASE("sgemm engine: oneDNN exactly where OpenBLAS runs kernels below the CPU") {
  using kernels::choose_sgemm_engine;
  // Sapphire / Emerald Rapids under OpenBLAS 0.3.21: Prescott kernels on an AVX-512 CPU.
  CHECK(choose_sgemm_engine("", "Prescott", cpu(true, true), true).engine == SgemmEngine::onednn);
  CHECK(choose_sgemm_engine("", "Nehalem", cpu(true, false), true).engine == SgemmEngine::onednn);
  // Kernels that match the CPU: OpenBLAS stays (AMD EPYC: Zen; Intel it knows: SkylakeX, Haswell).
  for (const char* core : {"Zen", "Haswell", "SkylakeX", "Cooperlake", "SapphireRapids"})
    CHECK(choose_sgemm_engine("", core, cpu(true, true), true).engine == SgemmEngine::openblas);
  // A CPU without AVX2: Prescott is what it can run.
  CHECK(choose_sgemm_engine("", "Prescott", cpu(false, false), true).engine == SgemmEngine::openblas);
  // Without oneDNN: OpenBLAS, and the reason names the variable that helps.
  const auto no_dnnl = choose_sgemm_engine("", "Prescott", cpu(true, true), false);
  CHECK(no_dnnl.engine == SgemmEngine::openblas);
  CHECK(test_util::contains(no_dnnl.reason, "OPENBLAS_CORETYPE=SkylakeX"));
  // ATTOGRAD_SGEMM forces either way.
  CHECK(choose_sgemm_engine("openblas", "Prescott", cpu(true, true), true).engine == SgemmEngine::openblas);
  CHECK(choose_sgemm_engine("onednn", "Zen", cpu(true, false), true).engine == SgemmEngine::onednn);
  CHECK(test_util::contains(choose_sgemm_engine("", "Prescott", cpu(true, true), true).reason, "Prescott kernels"));
  CHECK(test_util::contains(show_config(), "f32 products: "));
}

TEST_CASE("sgemm engine: oneDNN and OpenBLAS agree with a double reference") {
  if (!kernels::have_dnnl()) return;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int cases = 0;
  for (int64_t M : {1, 3, 17, 64})
    for (int64_t N : {1, 5, 33})
      for (int64_t K : {1, 7, 40})
        for (int t = 0; t < 4; ++t)
          for (const std::pair<float, float>& ab : {std::pair{1.0f, 0.0f}, {0.5f, 1.0f}, {-2.0f, 0.25f}}) {
            const float alpha = ab.first, beta = ab.second;  // not a structured binding: INFO captures it (clang 14)
            const bool ta = t & 1, tb = t & 2;
            const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;
            std::vector<float> A((ta ? K : M) * lda), B((tb ? N : K) * ldb), C(M * ldc);
            for (auto* v : {&A, &B, &C})
              for (float& x : *v) x = u(rng);
            if (beta == 0)
              for (float& x : C) x = nan;  // beta 0: C is written, never read
            const auto want = reference(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
            for (SgemmEngine e : {SgemmEngine::openblas, SgemmEngine::onednn}) {
              std::vector<float> got = C;
              kernels::sgemm_on(e, ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, got.data(), ldc);
              double worst = 0;
              for (int64_t i = 0; i < M; ++i)
                for (int64_t j = 0; j < N; ++j)
                  worst = std::max(worst, std::abs(double(got[i * ldc + j]) - want[i * ldc + j]));
              INFO(kernels::to_string(e), " M ", M, " N ", N, " K ", K, " ta ", ta, " tb ", tb, " beta ", beta);
              CHECK(worst <= 1e-5 * double(K));
              ++cases;
            }
          }
  CHECK(cases == 4 * 3 * 3 * 4 * 3 * 2);
}

TEST_CASE("sgemm engine: matmul under either engine, whole and split over the pool") {
  if (!kernels::have_dnnl()) return;
  EngineGuard guard;
  manual_seed(9);
  const int threads = get_num_threads();
  for (int nt : {1, 2}) {
    set_num_threads(nt);
    for (const std::array<int64_t, 3>& mkn :
         {std::array<int64_t, 3>{300, 200, 150}, {64, 512, 64}, {1, 1024, 700}, {2048, 64, 32}}) {
      const int64_t m = mkn[0], k = mkn[1], n = mkn[2];  // not a structured binding: INFO captures them (clang 14)
      Tensor a = randn({m, k}), b = randn({k, n});
      Tensor want = matmul(a.to(DType::f64), b.to(DType::f64));
      for (SgemmEngine e : {SgemmEngine::openblas, SgemmEngine::onednn}) {
        kernels::set_sgemm_engine(e);
        INFO(kernels::to_string(e), " threads ", nt, " shape ", m, "x", k, "x", n);
        CHECK(tc::diff(matmul(a, b), want, 1e-4) == "");
        CHECK(tc::diff(matmul(a.t().contiguous().t(), b), want, 1e-4) == "");  // a transposed in memory
      }
    }
    // inf and NaN reach the output as each engine's sums carry them.
    Tensor a = randn({40, 30}), b = randn({30, 20});
    a.index_put_({3, 4}, std::numeric_limits<float>::infinity());
    b.index_put_({5, 6}, std::numeric_limits<float>::quiet_NaN());
    for (SgemmEngine e : {SgemmEngine::openblas, SgemmEngine::onednn}) {
      kernels::set_sgemm_engine(e);
      Tensor y = matmul(a, b);
      CHECK_FALSE(std::isfinite(y.index({3, 0}).item<float>()));  // inf times a finite row
      CHECK(std::isnan(y.index({0, 6}).item<float>()));           // NaN in column 6
      CHECK(std::isfinite(y.index({0, 0}).item<float>()));
    }
  }
  set_num_threads(threads);
}
