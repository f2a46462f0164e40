#pragma once
// C = alpha * op(A) op(B) + beta * C, row-major, op = optional transpose: the one GEMM
// entry point of the kernels. Tiny products (attention at decode time multiplies
// thousands of 1 x 16 by 16 x t matrices) are computed directly, because a BLAS call
// costs more than their arithmetic; the rest go to the f32 engine (OpenBLAS or oneDNN,
// kernels/sgemm.h) or OpenBLAS's dgemm. Internal header.
#include <cblas.h>
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "attograd/detail/parallel.h"
#include "attograd/runtime.h"
#include "kernels/sgemm.h"

namespace ag::kernels {

inline constexpr int64_t kSmallGemm = 512;  // M * N * K multiply-adds; OpenBLAS has fast small kernels above

// OpenBLAS runs on one thread (runtime.cpp): its own threads spun (sched_yield) after
// each call and fought attograd's pool for the cores, so 2-thread decoding took 10 or
// 21 ms per 63 tokens from one process to the next. Instead an f32 product of at least
// 2^21 multiply-adds splits over the pool: its rows (or its columns, when there are
// more) in parts of at least 32 and 2^20 multiply-adds, cut at multiples of 16, one
// engine call each. With OpenBLAS's Prescott to Sandybridge kernels every output's sum
// is then the one the whole product computes (checked over 1,389 random shapes, layouts
// and cuts): the thread count changes no bit. Its Haswell and Zen kernels round about 0.3%
// of the outputs of a cut differently (by an ulp or two: their order of partial sums
// follows the call's M and N), as do oneDNN's (the engine where OpenBLAS fell back,
// kernels/sgemm.h), so there the thread count changes those bits, and
// test_tensor_matmul checks closeness and repeatability instead. f64 products, where
// some cuts changed bits on every kernel, run whole.
//
// pool_parts and pool_cut are the split, shared with oneDNN's bf16 products
// (matmul_dnnl.cpp): the parts a product of D rows (or columns) and `work` multiply-adds
// splits into, at most one per thread, each at least 32 wide and 2^20 multiply-adds; 1
// at one thread, or inside a parallel region, where a nested split would run inline.
inline int64_t pool_parts(int64_t D, double work) {
  if (detail::in_parallel_region()) return 1;
  return std::max<int64_t>(
      1, std::min<int64_t>({get_num_threads(), D / 32, static_cast<int64_t>(work / double(int64_t{1} << 20))}));
}

// Where part p of `parts` starts (p = parts: D), at a multiple of 16.
inline int64_t pool_cut(int64_t D, int64_t p, int64_t parts) { return p == parts ? D : D * p / parts / 16 * 16; }

inline bool split_sgemm(SgemmEngine engine, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                        const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const bool by_rows = M >= N;
  const int64_t D = by_rows ? M : N;
  const int64_t parts = pool_parts(D, double(M) * double(N) * double(K));
  if (parts < 2) return false;
  detail::parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t d0 = pool_cut(D, p, parts), d1 = pool_cut(D, p + 1, parts);
      if (by_rows)
        sgemm_on(engine, ta, tb, d1 - d0, N, K, alpha, A + (ta ? d0 : d0 * lda), lda, B, ldb, beta, C + d0 * ldc, ldc);
      else
        sgemm_on(engine, ta, tb, M, d1 - d0, K, alpha, A, lda, B + (tb ? d0 * ldb : d0), ldb, beta, C + d0, ldc);
    }
  });
  return true;
}

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
  if constexpr (std::is_same_v<T, float>) {
    const SgemmEngine engine = sgemm_engine();  // chosen (and logged) once per process
    if (!split_sgemm(engine, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
      sgemm_on(engine, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
  }
}

}  // namespace ag::kernels
