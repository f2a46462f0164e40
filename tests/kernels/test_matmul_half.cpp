// bf16 / f16 matmul against the f32 product of the same 16-bit operands, rounded once
// (PyTorch's CPU rule), through every engine this build has (kernels/matmul_dnnl.h:
// oneDNN where built with it, the f32 conversion around sgemm always): odd sizes, K = 1,
// empty operands, batched and broadcast batch dims, transposed, strided and expanded
// operands.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gemv_reference.h"
#include "kernels/dispatch.h"
#include "kernels/gemv.h"
#include "kernels/matmul_dnnl.h"

using namespace ag;
namespace k = ag::kernels;

namespace {

// Selects a bf16 GEMM engine for the scope.
struct EngineGuard {
  explicit EngineGuard(k::HalfGemm e) : saved(k::set_half_gemm(e)) {}
  ~EngineGuard() { k::set_half_gemm(saved); }
  EngineGuard(const EngineGuard&) = delete;
  EngineGuard& operator=(const EngineGuard&) = delete;
  k::HalfGemm saved;
};

// a @ b in dtype d (a, b f32 holding values exact in d) against the f32 product rounded
// once: within one ulp of d (2^-7 relative for bf16, 2^-10 for f16) plus f32 summation-
// order noise (K * 2^-23 of sum |a_ik b_kj|). Returns whether every element passes.
bool matches_rounded_f32(const Tensor& a, const Tensor& b, DType d, const std::string& what) {
  Tensor got = matmul(a.to(d), b.to(d));
  Tensor ref = matmul(a, b);
  CHECK_MESSAGE(got.dtype() == d, what);
  CHECK_MESSAGE(got.shape() == ref.shape(), what);
  if (got.shape() != ref.shape() || ref.numel() == 0) return got.shape() == ref.shape();
  const double ulp = d == DType::bf16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
  const double k_dim = a.dim() >= 2 ? static_cast<double>(a.size(-1)) : static_cast<double>(a.numel());
  // f16's subnormals (under 2^-14) are spaced 2^-24 apart: half that is the rounding there.
  const double floor = d == DType::f16 ? std::ldexp(1.0, -25) : 1e-30;
  Tensor tol = abs(ref) * ulp + matmul(abs(a), abs(b)) * (k_dim * std::ldexp(1.0, -23)) + floor;
  Tensor over = abs(got.to(DType::f32) - ref) - tol;
  const double worst = over.max().item<double>();
  CHECK_MESSAGE(worst <= 0, what, ": worst excess over tolerance ", worst);
  return worst <= 0;
}

// Values exact in bf16 and f16 (8 significant bits, moderate range).
Tensor operand(const Shape& s) { return (randn(s) * 4).to(DType::bf16).to(DType::f32); }

std::vector<k::HalfGemm> engines() {
  std::vector<k::HalfGemm> e = {k::HalfGemm::automatic, k::HalfGemm::convert};
  if (k::have_dnnl()) e.push_back(k::HalfGemm::dnnl);
  return e;
}

const char* engine_name(k::HalfGemm e) {
  return e == k::HalfGemm::automatic ? "automatic" : e == k::HalfGemm::dnnl ? "dnnl" : "convert";
}

}  // namespace

TEST_CASE("bf16 and f16 matmul equal the f32 product rounded once, every engine and layout") {
  manual_seed(25);
  for (k::HalfGemm e : engines()) {
    EngineGuard guard(e);
    for (DType d : {DType::bf16, DType::f16}) {
      const std::string tag = std::string(engine_name(e)) + " " + std::string(name(d)) + ": ";
      // Odd sizes and tails of the vector kernels, K = 1, a row, a column.
      CHECK(matches_rounded_f32(operand({7, 13}), operand({13, 5}), d, tag + "7x13 @ 13x5"));
      CHECK(matches_rounded_f32(operand({33, 65}), operand({65, 17}), d, tag + "33x65 @ 65x17"));
      CHECK(matches_rounded_f32(operand({130, 257}), operand({257, 70}), d, tag + "130x257 @ 257x70"));
      CHECK(matches_rounded_f32(operand({5, 1}), operand({1, 9}), d, tag + "K = 1"));
      CHECK(matches_rounded_f32(operand({1, 31}), operand({31, 1}), d, tag + "1x31 @ 31x1"));
      // 1-D operands (ops/linalg.cpp makes them 2-D).
      CHECK(matches_rounded_f32(operand({31}), operand({31, 6}), d, tag + "vector @ matrix"));
      CHECK(matches_rounded_f32(operand({6, 31}), operand({31}), d, tag + "matrix @ vector"));
      // Empty: no rows, no columns, K = 0 (zeros).
      CHECK(matches_rounded_f32(operand({0, 4}), operand({4, 3}), d, tag + "0x4 @ 4x3"));
      CHECK(matches_rounded_f32(operand({3, 4}), operand({4, 0}), d, tag + "3x4 @ 4x0"));
      CHECK(matches_rounded_f32(operand({3, 0}), operand({0, 4}), d, tag + "3x0 @ 0x4"));
      Tensor z = matmul(operand({3, 0}).to(d), operand({0, 4}).to(d));
      CHECK(abs(z.to(DType::f32)).max().item<double>() == 0);
      // Batched, and batch dims broadcast either way.
      CHECK(matches_rounded_f32(operand({4, 9, 11}), operand({4, 11, 6}), d, tag + "batched"));
      CHECK(matches_rounded_f32(operand({2, 3, 5, 7}), operand({7, 4}), d, tag + "(2,3,5,7) @ (7,4)"));
      CHECK(matches_rounded_f32(operand({7, 4}).t().contiguous(), operand({2, 3, 7, 5}), d, tag + "(4,7) @ batch"));
      CHECK(matches_rounded_f32(operand({3, 1, 5, 7}), operand({2, 7, 4}), d, tag + "(3,1,5,7) @ (2,7,4)"));
      CHECK(matches_rounded_f32(operand({0, 5, 7}), operand({7, 4}), d, tag + "empty batch"));
      // Transposed views (x @ W^T, g^T @ x), a batched transpose, strided and expanded.
      CHECK(matches_rounded_f32(operand({19, 23}), operand({29, 23}).t(), d, tag + "x @ W^T"));
      CHECK(matches_rounded_f32(operand({23, 19}).t(), operand({23, 29}), d, tag + "g^T @ x"));
      CHECK(matches_rounded_f32(operand({3, 8, 5}), operand({3, 6, 5}).transpose(1, 2), d, tag + "q @ k^T"));
      Tensor big = operand({20, 30});
      CHECK(matches_rounded_f32(big.slice(0, 0, 20, 2).slice(1, 1, 30, 3), operand({10, 7}), d, tag + "strided"));
      CHECK(matches_rounded_f32(operand({5, 6}), operand({6, 3}).expand({4, 6, 3}), d, tag + "expanded b"));
      CHECK(matches_rounded_f32(operand({1, 5, 6}).expand({4, 5, 6}), operand({4, 6, 3}), d, tag + "expanded a"));
    }
  }
}

TEST_CASE("bf16 matmul: every engine gives the same shape errors") {
  for (k::HalfGemm e : engines()) {
    EngineGuard guard(e);
    CHECK_THROWS_AS(matmul(ones({2, 3, 4}, DType::bf16), ones({3, 4, 5}, DType::bf16)), ShapeError);
    CHECK_THROWS_AS(matmul(ones({2, 3}, DType::bf16), ones({4, 5}, DType::bf16)), ShapeError);
  }
}

TEST_CASE("decoding's x @ W^T in bf16 / f16: the rows read the 16-bit weights, same bits at every level") {
  // Up to kGemvMaxRows rows by a transposed contiguous (N, K) weight, of any size, take
  // kernels/gemv.h; K across the 16-lane body and tails, N odd (a weight of 2^18 elements
  // or more, and one of 7 rows), batched rows.
  manual_seed(26);
  const k::SimdLevel saved = k::simd_level();
  for (DType d : {DType::bf16, DType::f16}) {
    for (int64_t K : {1, 15, 16, 17, 100, 513}) {
      for (const Shape& xs : {Shape{1, K}, Shape{3, K}, Shape{2, 4, K}, Shape{9, K}}) {
        for (int64_t N : {int64_t{7}, ((int64_t{1} << 18) + K - 1) / K | 1}) {
          const std::string what = std::string(name(d)) + " x " + detail::cat(xs) + " @ W^T, K " + std::to_string(K) +
                                   ", N " + std::to_string(N);
          Tensor x = operand(xs), w = operand({N, K});
          CHECK(matches_rounded_f32(x, w.t(), d, what));  // automatic: the rows when 8 or fewer
          // Every level gives the same bits (one summation order, gemv.h).
          std::vector<float> first;
          for (k::SimdLevel level : k::available_simd_levels()) {
            k::set_simd_level(level);
            const std::vector<float> got = matmul(x.to(d), w.to(d).t()).to(DType::f32).to_vector<float>();
            if (first.empty()) first = got;
            CHECK_MESSAGE(got == first, what, ": level ", static_cast<int>(level), " differs");
          }
          k::set_simd_level(saved);
          // Those bits are the rows' own (the path is taken when 8 or fewer rows), which
          // are the order gemv.h fixes: fused multiply-adds into p[k mod 16], pairwise.
          const int64_t rows = x.numel() / K;
          if (rows <= k::kGemvMaxRows) {
            const Tensor wh = w.to(d);
            const std::vector<float> xv = x.to(d).to(DType::f32).to_vector<float>();
            const std::vector<float> wv = wh.to(DType::f32).to_vector<float>();
            const std::vector<float> want = in_gemv_order(xv, wv, rows, N, K);
            const std::vector<float> want_h = Tensor::from_vector(want, Shape{static_cast<int64_t>(want.size())})
                                                  .to(d)
                                                  .to(DType::f32)
                                                  .to_vector<float>();
            CHECK_MESSAGE(first == want_h, what, ": not the rows' summation order");
          }
        }
      }
    }
  }
  // A mismatched inner size still names it (not read past the weight).
  CHECK_THROWS_AS(matmul(operand({1, 5}).to(DType::bf16), operand({7, 6}).to(DType::bf16).t()), ShapeError);
}

// Decoding at B32 multiplies (B, 1, E) by W^T: B rows, which the engine choice must see
// (with AMX, oneDNN from 16 rows; as 32 products of 1 row each it took the conversion
// path, which widens W on every call). Under every engine the 3-D product has the bits
// of the same rows as one 2-D product.
TEST_CASE("bf16 (B, 1, K) @ W^T: the engine sees B rows, bits as the 2-D product") {
  manual_seed(32);
  const Tensor x = operand({32, 1, 128}).to(DType::bf16), w = operand({256, 128}).to(DType::bf16);
  CHECK(k::dnnl_worth_it(x, w.t()));
  CHECK(k::dnnl_worth_it(x.reshape({32, 128}), w.t()));
  CHECK_FALSE(k::dnnl_worth_it(x.narrow(0, 0, 15), w.t()));                       // 15 rows
  CHECK_FALSE(k::dnnl_worth_it(x, w.narrow(0, 0, 32).t()));                       // 2^17 multiply-adds
  CHECK_FALSE(k::dnnl_worth_it(operand({32, 1, 128}), operand({32, 128, 256})));  // batched: 1 row each
  for (k::HalfGemm e : engines()) {
    EngineGuard guard(e);
    INFO(engine_name(e));
    Tensor three = matmul(x, w.t());
    Tensor two = matmul(x.reshape({32, 128}), w.t()).reshape({32, 1, 256});
    CHECK(three.shape() == Shape{32, 1, 256});
    CHECK(abs(three.to(DType::f32) - two.to(DType::f32)).max().item<double>() == 0);
  }
}

// At 2 threads oneDNN's 2-D products split their rows in two, one call per thread: the
// result is the two halves' products, each made alone, and the f32 product rounded once.
// Row-major and transposed a (the weight gradient's g^T @ x).
TEST_CASE("bf16 oneDNN products at 2 threads: each row half its own product") {
  if (!k::have_dnnl()) return;
  EngineGuard guard(k::HalfGemm::dnnl);
  const int saved = get_num_threads();
  manual_seed(33);
  const Tensor row_major = operand({384, 128}), transposed = operand({2048, 384}).t();  // (384, 2048), column-major
  for (const Tensor& a32 : {row_major, transposed}) {
    const Tensor a = a32.to(DType::bf16), b = operand({a.size(1), 128}).to(DType::bf16);
    set_num_threads(2);
    const Tensor two = matmul(a, b).to(DType::f32);
    set_num_threads(1);
    const Tensor halves = cat({matmul(a.narrow(0, 0, 192), b), matmul(a.narrow(0, 192, 192), b)}, 0).to(DType::f32);
    CHECK(abs(two - halves).max().item<double>() == 0);
    CHECK(matches_rounded_f32(a32, b.to(DType::f32), DType::bf16, "2 threads"));
  }
  set_num_threads(saved);
}

// The 16-bit rows widen x into per-thread scratch and each part rounds its own columns:
// at 2 threads (N split) the bits of 1 thread, and rows that are a strided view (which
// take the conversion instead of the scratch) the bits of their contiguous copy.
TEST_CASE("decoding's x @ W^T in bf16 / f16: strided rows and 2 threads give the same bits") {
  const int saved = get_num_threads();
  manual_seed(34);
  for (DType d : {DType::bf16, DType::f16}) {
    for (int64_t K : {17, 128}) {
      CAPTURE(K);
      const Tensor w = operand({1031, K}).to(d);                // 2 parts at 2 threads (N * K >= 2^15)
      const Tensor x = operand({K, 5}).to(d).t();               // (5, K), column-major
      const Tensor xb = operand({2, 3, K}).to(d).select(1, 1);  // (2, K), rows K * 3 apart
      for (const Tensor& rows : {x, xb}) {
        REQUIRE(!rows.is_contiguous());
        set_num_threads(1);
        const std::vector<float> one = matmul(rows, w.t()).to(DType::f32).to_vector<float>();
        const std::vector<float> copy = matmul(rows.contiguous(), w.t()).to(DType::f32).to_vector<float>();
        set_num_threads(2);
        const std::vector<float> two = matmul(rows.contiguous(), w.t()).to(DType::f32).to_vector<float>();
        auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
          return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
        };
        CHECK(same_bits(one, copy));
        CHECK(same_bits(one, two));
        CHECK(matches_rounded_f32(rows.to(DType::f32), w.to(DType::f32).t(), d, "strided rows"));
      }
    }
  }
  set_num_threads(saved);
}
