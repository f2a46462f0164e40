// Decoding's f32 x @ W^T with at most kGemvMaxRows rows (kernels/gemv.h, through matmul):
// against a float64 product within f32 summation noise, and bit for bit the order gemv.h
// fixes (16 fused partial sums by k mod 16, then pairwise) at every SIMD level and at 1
// and 2 threads (the threads split N, never a sum). Nine rows and more take sgemm.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "gemv_reference.h"
#include "kernels/dispatch.h"
#include "kernels/gemv.h"

using namespace ag;
namespace k = ag::kernels;

namespace {

// Restores the SIMD level and the thread count at scope exit.
struct Restore {
  k::SimdLevel level = k::simd_level();
  int threads = get_num_threads();
  ~Restore() {
    k::set_simd_level(level);
    set_num_threads(threads);
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]) && !(std::isnan(a[i]) && std::isnan(b[i])))
      return false;
  return true;
}

}  // namespace

TEST_CASE("f32 x @ W^T with up to 8 rows: gemv.h's order at every level and thread count; sgemm above") {
  Restore restore;
  manual_seed(8);
  for (int64_t K : {1, 15, 16, 17, 100, 513}) {
    for (const Shape& xs : {Shape{1, K}, Shape{3, K}, Shape{2, 4, K}, Shape{9, K}}) {
      const int64_t N = 37, rows = numel(xs) / K;
      const std::string what =
          "x " + detail::cat(xs) + " @ W^T, W (" + std::to_string(N) + ", " + std::to_string(K) + ")";
      CAPTURE(what);
      const Tensor x = randn(xs), w = randn({N, K});
      // Within f32 summation noise of the float64 product, whichever path runs.
      const Tensor y = matmul(x, w.t());
      Shape ys = xs;
      ys[ys.size() - 1] = N;
      CHECK(y.shape() == ys);
      const Tensor ref = matmul(x.to(DType::f64), w.to(DType::f64).t());
      const Tensor mag = matmul(abs(x).to(DType::f64), abs(w).to(DType::f64).t());
      CHECK(all(le(abs(y.to(DType::f64) - ref), mag * (double(K) * 0x1p-23) + 1e-30)).item<bool>());
      if (rows > k::kGemvMaxRows) continue;
      const std::vector<float> want =
          in_gemv_order(x.contiguous().to_vector<float>(), w.to_vector<float>(), rows, N, K);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        for (k::SimdLevel level : k::available_simd_levels()) {
          k::set_simd_level(level);
          CHECK_MESSAGE(same_bits(matmul(x, w.t()).to_vector<float>(), want), "threads ", threads, ", level ",
                        k::to_string(level));
        }
        k::set_simd_level(restore.level);
      }
    }
  }
}

TEST_CASE("f32 x @ W^T with up to 8 rows: strided rows, NaN rows, a weight that is not W^T") {
  Restore restore;
  manual_seed(9);
  const int64_t K = 33, N = 20;
  const Tensor w = randn({N, K});
  // Rows that are a transposed view are made contiguous first: the same bits.
  const Tensor xt = randn({K, 3}).t();
  CHECK(same_bits(matmul(xt, w.t()).to_vector<float>(), matmul(xt.contiguous(), w.t()).to_vector<float>()));
  // A NaN in a row makes that row NaN and leaves the others alone.
  Tensor x = randn({2, K});
  x.data<float>()[K + 5] = NAN;
  const std::vector<float> y = matmul(x, w.t()).to_vector<float>();
  int nan0 = 0, nan1 = 0;
  for (int64_t n = 0; n < N; ++n) nan0 += std::isnan(y[size_t(n)]), nan1 += std::isnan(y[size_t(N + n)]);
  CHECK(nan0 == 0);
  CHECK(nan1 == N);
  // W itself (not transposed) and a batched weight take sgemm: still the product.
  const Tensor x1 = randn({2, K}), b = randn({K, N}), bb = randn({2, K, N}), x2 = randn({2, 1, K});
  CHECK(allclose(matmul(x1, b), matmul(x1.to(DType::f64), b.to(DType::f64)).to(DType::f32), 1e-5, 1e-5));
  CHECK(allclose(matmul(x2, bb), matmul(x2.to(DType::f64), bb.to(DType::f64)).to(DType::f32), 1e-5, 1e-5));
}
