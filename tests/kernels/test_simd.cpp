// The run-time dispatched kernels (ops/kernels/simd.h): every vector width this CPU has
// must give the baseline's results, in the vector body and the scalar tail alike, with
// the special values (-inf from masks, NaN, 0) in both.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/simd.h"
#include "test_util.h"

using namespace ag;
using K = ag::kernels::SimdLevel;

namespace {

// Restores the level in use when a test case ends.
struct LevelGuard {
  K saved = kernels::simd_level();
  ~LevelGuard() { kernels::set_simd_level(saved); }
};

// Lengths that cover an empty row, a pure tail, whole vectors (4, 8, 16 lanes) and
// vectors plus a tail, up to the tile width 64.
const std::vector<int64_t> kLengths{0, 1, 3, 4, 7, 8, 15, 16, 17, 33, 63, 64};

template <class T>
std::vector<T> row_values(int64_t n, uint64_t seed) {
  Generator g(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(g.normal() * 3);
  return x;
}

// Relative closeness allowing for a few ulp of xsimd's exp at each width.
template <class T>
bool close(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  const T tol = std::is_same_v<T, float> ? T(4e-6) : T(1e-14);
  return std::abs(a - b) <= tol * std::max<T>(T(1), std::max(std::abs(a), std::abs(b)));
}

template <class T>
void check_row_ops_against_baseline() {
  const auto& base = kernels::row_ops<T>(K::sse2);
  const T ninf = -std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto& R = kernels::row_ops<T>(level);
    for (int64_t n : kLengths) {
      CAPTURE(n);
      std::vector<T> x = row_values<T>(n, 7 + static_cast<uint64_t>(n)), z = row_values<T>(n, 99);
      // A masked (-inf) score in the body and one in the tail, as causal masks make.
      if (n > 2) x[1] = ninf;
      if (n > 0) x[static_cast<std::size_t>(n - 1)] = ninf;
      T m = n > 0 ? base.max(x.data(), n) : T(0);
      CHECK(R.max(x.data(), n) == base.max(x.data(), n));
      std::vector<T> a = x, b = x;
      if (n > 0 && m != ninf) {
        CHECK(close(R.exp_sub_sum(a.data(), n, m), base.exp_sub_sum(b.data(), n, m)));
        for (int64_t i = 0; i < n; ++i) CHECK(close(a[i], b[i]));
        if (n > 2) CHECK(a[1] == T(0));  // exp(-inf - m)
        // Against std::exp, the scalar definition.
        for (int64_t i = 0; i < n; ++i) CHECK(close(a[i], static_cast<T>(std::exp(x[i] - m))));
      }
      std::vector<T> y = row_values<T>(n, 3), w = y;
      R.scale(y.data(), n, T(0.5));
      base.scale(w.data(), n, T(0.5));
      CHECK(y == w);
      std::vector<T> o1(static_cast<std::size_t>(n)), o2(static_cast<std::size_t>(n));
      R.mul_into(o1.data(), y.data(), z.data(), n);
      base.mul_into(o2.data(), y.data(), z.data(), n);
      CHECK(o1 == o2);
      std::vector<T> d1 = z, d2 = z;
      R.ds(d1.data(), y.data(), n, T(0.25));
      base.ds(d2.data(), y.data(), n, T(0.25));
      CHECK(d1 == d2);
      CHECK(close(R.dot(y.data(), z.data(), n), base.dot(y.data(), z.data(), n)));
      // NaN in the body and in the tail comes through exp and the products.
      if (n > 4) {
        std::vector<T> q = x;
        q[2] = nan;
        q[static_cast<std::size_t>(n - 2)] = nan;
        R.exp_sub(q.data(), n, T(0));
        CHECK(std::isnan(q[2]));
        CHECK(std::isnan(q[static_cast<std::size_t>(n - 2)]));
      }
    }
  }
}

}  // namespace

TEST_CASE("simd: the baseline is always available and ATTOGRAD_SIMD names parse") {
  auto levels = kernels::available_simd_levels();
  REQUIRE(!levels.empty());
  CHECK(levels.front() == K::sse2);
  CHECK(kernels::to_string(K::avx512) == "avx512");
  LevelGuard guard;
  for (K level : levels) {
    kernels::set_simd_level(level);
    CHECK(kernels::simd_level() == level);
  }
}

TEST_CASE("simd: every width's attention row operations equal the baseline's, float32 and float64") {
  check_row_ops_against_baseline<float>();
  check_row_ops_against_baseline<double>();
}

TEST_CASE("simd: the dropout hash is bit-identical at every width, across a 2^32 wrap of the index") {
  const uint32_t k0 = 0x12345678u, hi_key = 0x9abcdef0u;
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto& R = kernels::row_ops<float>(level);
    for (int64_t n : kLengths) {
      for (uint32_t lo0 : {0u, 1000u, 0xfffffff0u - static_cast<uint32_t>(n)}) {
        std::vector<uint32_t> h(static_cast<std::size_t>(n));
        R.hash_row(h.data(), n, lo0, k0, hi_key);
        for (int64_t c = 0; c < n; ++c)
          CHECK(h[c] == kernels::mix32(kernels::mix32((lo0 + static_cast<uint32_t>(c)) ^ k0) + hi_key));
      }
    }
  }
}

TEST_CASE("simd: fused attention forward and backward at every width equal the baseline's") {
  LevelGuard guard;
  for (bool causal : {false, true})
    for (double p : {0.0, 0.3}) {
      CAPTURE(causal);
      CAPTURE(p);
      // L 70 and S 75: two query blocks and two key tiles, each with a partial last one.
      Generator g(5);
      Tensor q = randn({2, 3, 70, 20}, DType::f32, &g).requires_grad_();
      Tensor k = randn({2, 3, 75, 20}, DType::f32, &g).requires_grad_();
      Tensor v = randn({2, 3, 75, 12}, DType::f32, &g).requires_grad_();
      Tensor w = randn({2, 3, 70, 12}, DType::f32, &g);
      std::vector<std::vector<Tensor>> results;
      for (K level : kernels::available_simd_levels()) {
        kernels::set_simd_level(level);
        SdpaOptions o;
        o.causal = causal;
        o.dropout_p = p;
        Generator dg(11);  // the same dropout seed at every width
        o.generator = &dg;
        Tensor out = scaled_dot_product_attention(q, k, v, o).first;
        auto grads = ag::grad({(out * w).sum()}, {q, k, v});
        results.push_back({out, grads[0], grads[1], grads[2]});
      }
      for (std::size_t i = 1; i < results.size(); ++i)
        for (std::size_t t = 0; t < 4; ++t) {
          CAPTURE(t);
          CHECK(allclose(results[i][t], results[0][t], 1e-5, 1e-5));
          // Dropout masks are integer hashes: the zeros sit in the same places.
          if (t == 0) CHECK(eq(results[i][t], 0.0).sum().item<int64_t>() == eq(results[0][t], 0.0).sum().item<int64_t>());
        }
    }
}

TEST_CASE("simd: set_simd_level rejects nothing it listed and names what it cannot run") {
  LevelGuard guard;
  auto levels = kernels::available_simd_levels();
  if (levels.size() < 3) CHECK_THROWS_AS(kernels::set_simd_level(K::avx512), ValueError);
  else CHECK_NOTHROW(kernels::set_simd_level(K::avx512));
}

TEST_CASE("simd: Philox4x32-10 gives Random123's known answers, and every width gives the scalar's blocks") {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  // Random123's tests/kat_vectors for philox4x32 with 10 rounds.
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  for (const Kat& k : kats) {
    uint32_t out[4];
    kernels::philox4x32_10(k.ctr, k.key, out);
    for (int w = 0; w < 4; ++w) CHECK(out[w] == k.out[w]);
  }
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto& R = kernels::row_ops<double>(level);
    // Block counters that cross from the low into the high counter word.
    for (uint64_t block0 : {uint64_t{0}, uint64_t{0xfffffffa}})
      for (int64_t nb : {1, 2, 3, 8, 9, 17}) {
        std::vector<uint32_t> got(static_cast<std::size_t>(4 * nb));
        R.philox_blocks(got.data(), nb, block0, 0xdeadbeef, 0x01234567);
        for (int64_t b = 0; b < nb; ++b) {
          const uint64_t blk = block0 + static_cast<uint64_t>(b);
          const uint32_t ctr[4] = {static_cast<uint32_t>(blk), static_cast<uint32_t>(blk >> 32), 0, 0};
          const uint32_t key[2] = {0xdeadbeef, 0x01234567};
          uint32_t want[4];
          kernels::philox4x32_10(ctr, key, want);
          for (int w = 0; w < 4; ++w) CHECK(got[static_cast<std::size_t>(4 * b + w)] == want[w]);
        }
      }
  }
}

TEST_CASE("dropout: the Philox mask is the same at every width and thread count, and keeps 1 - p") {
  LevelGuard guard;
  const int threads = get_num_threads();
  const double p = 0.3;
  Tensor x = ones({1000, 77});  // 77 000 elements: 75 whole chunks of 1024 and a tail
  std::vector<Tensor> masks;
  for (K level : kernels::available_simd_levels())
    for (int t : {1, 2}) {
      kernels::set_simd_level(level);
      set_num_threads(t);
      Generator g(123);
      masks.push_back(dropout(x, p, true, &g));
    }
  set_num_threads(threads);
  for (std::size_t i = 1; i < masks.size(); ++i) CHECK(allclose(masks[i], masks[0], 0, 0));
  // Kept entries are 1 / (1 - p); their share is within 4 standard deviations of 1 - p.
  const double kept = gt(masks[0], 0.0).sum().item<int64_t>() / 77000.0;
  CHECK(std::abs(kept - (1 - p)) < 4 * std::sqrt(p * (1 - p) / 77000.0));
  CHECK(amax(masks[0]).item<float>() == doctest::Approx(1 / (1 - p)));
  // A second draw from the same generator gives another mask.
  Generator g(123);
  Tensor a = dropout(x, p, true, &g), b = dropout(x, p, true, &g);
  CHECK(!allclose(a, b, 0, 0));
}

TEST_CASE("simd: keep_mask is h < keep ? scale : 0 at every width, at the threshold and with keep = 2^32") {
  const uint64_t keep = 0x80000001ull;  // words keep - 1 and keep sit on either side
  std::vector<uint32_t> h(37);
  for (std::size_t c = 0; c < h.size(); ++c) h[c] = static_cast<uint32_t>(keep) + static_cast<uint32_t>(c % 3) - 1u;
  h[5] = 0, h[20] = 0xffffffffu;
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    for (int64_t n : kLengths) {
      if (n > static_cast<int64_t>(h.size())) continue;
      std::vector<float> z(h.size(), -1.0f);
      kernels::row_ops<float>(level).keep_mask(z.data(), h.data(), n, keep, 1.25f);
      int bad = 0;
      for (int64_t c = 0; c < n; ++c) bad += z[size_t(c)] != (h[size_t(c)] < keep ? 1.25f : 0.0f);
      CHECK(bad == 0);
      CHECK(z[size_t(n)] == -1.0f);  // nothing past n
      std::vector<double> zd(h.size(), -1.0);
      kernels::row_ops<double>(level).keep_mask(zd.data(), h.data(), n, uint64_t{1} << 32, 2.0);  // p = 0: all kept
      for (int64_t c = 0; c < n; ++c) bad += zd[size_t(c)] != 2.0;
      CHECK(bad == 0);
    }
  }
}
