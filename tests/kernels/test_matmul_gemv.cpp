// Decoding's f32 x @ W^T with at most kGemvMaxRows rows (kernels/gemv.h, through matmul):
// against a float64 product within f32 summation noise, and bit for bit the order gemv.h
// fixes (16 fused partial sums by k mod 16, then pairwise) at every SIMD level and at 1
// and 2 threads (the threads split N, never a sum). Nine rows and more take sgemm.
// linear without a graph adds its bias inside that product: the bits of matmul then add.
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

// Bit equality that treats every NaN alike, for f32 / bf16 / f16 tensors.
bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         same_bits(a.to(DType::f32).to_vector<float>(), b.to(DType::f32).to_vector<float>());
}

TEST_CASE("linear without a graph: the bias inside the few-row product, the bits of matmul + add") {
  Restore restore;
  manual_seed(10);
  const int64_t K = 128, N = 520;  // 2 parts at 2 threads, one not a multiple of 16
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    for (const Shape& xs : {Shape{1, 1, K}, Shape{3, K}, Shape{8, K}, Shape{9, K}}) {
      CAPTURE(dt);
      CAPTURE(detail::cat(xs));
      Tensor x = randn(xs).to(dt), w = randn({N, K}).to(dt), b = randn({N}).to(dt);
      // Special values in the bias: each must reach its column as the separate add does.
      Tensor bf = b.to(DType::f32);
      float* pb = bf.data<float>();
      pb[0] = INFINITY, pb[1] = -INFINITY, pb[2] = NAN, pb[3] = -0.0f, pb[N - 1] = 65504.0f;
      b = bf.to(dt);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        NoGradGuard no_grad;
        const Tensor want = add(matmul(x, w.t()), b);
        CHECK(same_values(linear(x, w, b), want));
        CHECK(same_values(nn::functional::linear(x, w, b), want));
      }
    }
  }
  // With a graph to build, linear stays matmul + add and its gradients arrive.
  Tensor x = randn({2, K}).requires_grad_(), w = randn({N, K}).requires_grad_(), b = randn({N}).requires_grad_();
  linear(x, w, b).sum().backward();
  CHECK(b.grad().defined());
  CHECK(allclose(b.grad(), full({N}, 2.0)));
  // A bias that is not contiguous takes the separate add.
  NoGradGuard no_grad;
  const Tensor x32 = randn({1, K}), w32 = randn({N, K});
  const Tensor bs = randn({2 * N}).slice(0, 0, 2 * N, 2);
  CHECK(same_values(linear(x32, w32, bs), add(matmul(x32, w32.t()), bs)));
}
