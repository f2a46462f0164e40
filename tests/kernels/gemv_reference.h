#pragma once
// The summation order kernels/gemv.h fixes, in scalar code: y (rows, N) from x (rows, K)
// and W (N, K), both contiguous f32 values (16-bit weights already widened): 16 partial
// sums p[k mod 16] of fused multiply-adds in increasing k, then pairwise (p[j] += p[j + 8],
// + 4, + 2, + 1). test_matmul_gemv and test_matmul_half compare matmul's bits with it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

inline std::vector<float> in_gemv_order(const std::vector<float>& x, const std::vector<float>& w, int64_t rows,
                                        int64_t N, int64_t K) {
  std::vector<float> y;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < N; ++n) {
      float p[16] = {};
      for (int64_t j = 0; j < K; ++j) p[j % 16] = std::fma(x[size_t(i * K + j)], w[size_t(n * K + j)], p[j % 16]);
      for (int step = 8; step >= 1; step /= 2)
        for (int j = 0; j < step; ++j) p[j] = p[j] + p[j + step];
      y.push_back(p[0]);
    }
  return y;
}
