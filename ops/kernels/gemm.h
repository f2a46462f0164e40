#pragma once
// C = alpha * op(A) op(B) + beta * C, row-major, op = optional transpose: the one GEMM
// entry point of the kernels. Tiny products (attention at decode time multiplies
// thousands of 1 x 16 by 16 x t matrices) are computed directly, because a BLAS call
// costs more than their arithmetic; the rest go to OpenBLAS. Internal header.
#include <cblas.h>
#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <type_traits>

namespace ag::kernels {

inline constexpr int64_t kSmallGemm = 512;  // M * N * K multiply-adds; OpenBLAS has fast small kernels above

template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
          T beta, T* C, int64_t ldc) {
  if (M * N * K <= kSmallGemm) {
    // Each layout gets loops whose innermost index walks contiguous memory.
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    using V = xsimd::batch<T>;
    constexpr int64_t W = static_cast<int64_t>(V::size);
    if (!ta && tb) {  // rows of A against rows of B: dot products
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const T *a = A + i * lda, *b = B + j * ldb;
          V vacc(T(0));
          int64_t k = 0;
          for (; k + W <= K; k += W) vacc += V::load_unaligned(a + k) * V::load_unaligned(b + k);
          T acc = xsimd::hadd(vacc);
          for (; k < K; ++k) acc += a[k] * b[k];
          C[i * ldc + j] += alpha * acc;
        }
    } else {  // C row i += (alpha * a_ik) * B row k
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
          const T a = alpha * (ta ? A[k * lda + i] : A[i * lda + k]);
          T* c = C + i * ldc;
          if (!tb) {
            const T* b = B + k * ldb;
            const V va(a);
            int64_t j = 0;
            for (; j + W <= N; j += W)
              (V::load_unaligned(c + j) + va * V::load_unaligned(b + j)).store_unaligned(c + j);
            for (; j < N; ++j) c[j] += a * b[j];
          } else {
            for (int64_t j = 0; j < N; ++j) c[j] += a * B[j * ldb + k];
          }
        }
    }
    return;
  }
  auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    cblas_dgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace ag::kernels
