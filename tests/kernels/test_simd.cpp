// The dispatched kernels (ops/kernels/DISPATCH.md): every level this CPU has must give
// the baseline's results, in the vector body and the scalar tail alike, with the
// special values (-inf from masks, NaN, 0) in both. Here: the level itself, the
// attention rows (attention_rows.h) and dropout's random words (dropout_rows.h), one
// StubCheck per registered stub (simd_checks.h); the fused attention and dropout at
// every level.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kernels/attention_rows.h"
#include "kernels/dropout_rows.h"
#include "kernels/gelu_rows.h"
#include "simd_checks.h"
#include "test_util.h"

using namespace ag;
using namespace simd_checks;

namespace {

// Lengths that cover an empty row, a pure tail, whole vectors (4, 8, 16 lanes) and
// vectors plus a tail, up to the tile width 64.
const std::vector<int64_t> kRowLengths{0, 1, 3, 4, 7, 8, 15, 16, 17, 33, 63, 64};

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

// ---- attention rows: each level against the baseline ------------------------------
// Scores x with a masked (-inf) entry in the body and one in the tail, as causal masks
// make; y, z plain rows.
template <class T>
struct Rows {
  std::vector<T> x, y, z;
  explicit Rows(int64_t n)
      : x(row_values<T>(n, 7 + static_cast<uint64_t>(n))), y(row_values<T>(n, 3)), z(row_values<T>(n, 99)) {
    if (n > 2) x[1] = -std::numeric_limits<T>::infinity();
    if (n > 0) x[static_cast<std::size_t>(n - 1)] = -std::numeric_limits<T>::infinity();
  }
};

// f(level, n, rows) for every level this CPU has and every row length.
template <class T, class F>
void each_level_and_row(F f) {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    for (int64_t n : kRowLengths) {
      CAPTURE(n);
      f(level, n, Rows<T>(n));
    }
  }
}

template <class T>
void check_row_max() {
  const auto& S = kernels::row_max.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    CHECK(S.get(level)(r.x.data(), n) == S.get(K::sse2)(r.x.data(), n));
    CHECK(S.get(level)(r.y.data(), n) == S.get(K::sse2)(r.y.data(), n));
  });
}

template <class T>
void check_row_exp_sub_sum() {
  const auto& S = kernels::row_exp_sub_sum.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    const T m = kernels::row_max.of<T>().get(K::sse2)(r.x.data(), n);
    if (n == 0 || m == -std::numeric_limits<T>::infinity()) return;
    std::vector<T> a = r.x, b = r.x;
    CHECK(close(S.get(level)(a.data(), n, m), S.get(K::sse2)(b.data(), n, m)));
    for (int64_t i = 0; i < n; ++i) CHECK(close(a[i], b[i]));
    if (n > 2) CHECK(a[1] == T(0));  // exp(-inf - m)
    // Against std::exp, the scalar definition.
    for (int64_t i = 0; i < n; ++i) CHECK(close(a[i], static_cast<T>(std::exp(r.x[i] - m))));
  });
}

template <class T>
void check_row_exp_sub() {
  const auto& S = kernels::row_exp_sub.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    // exp_sub_sum's rows, bit for bit, at the same level.
    std::vector<T> a = r.y, b = r.y;
    S.get(level)(a.data(), n, T(0.5));
    kernels::row_exp_sub_sum.of<T>().get(level)(b.data(), n, T(0.5));
    CHECK(a == b);
    // NaN in the body and in the tail comes through exp.
    if (n > 4) {
      std::vector<T> q = r.x;
      q[2] = std::numeric_limits<T>::quiet_NaN();
      q[static_cast<std::size_t>(n - 2)] = std::numeric_limits<T>::quiet_NaN();
      S.get(level)(q.data(), n, T(0));
      CHECK(std::isnan(q[2]));
      CHECK(std::isnan(q[static_cast<std::size_t>(n - 2)]));
      CHECK(q[1] == T(0));
    }
  });
}

template <class T>
void check_row_scale() {
  const auto& S = kernels::row_scale.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    std::vector<T> a = r.y, b = r.y;
    S.get(level)(a.data(), n, T(0.5));
    S.get(K::sse2)(b.data(), n, T(0.5));
    CHECK(a == b);
  });
}

template <class T>
void check_row_mul() {
  const auto& S = kernels::row_mul.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    std::vector<T> a = r.y, b = r.y;
    S.get(level)(a.data(), r.z.data(), n);
    S.get(K::sse2)(b.data(), r.z.data(), n);
    CHECK(a == b);
  });
}

template <class T>
void check_row_mul_into() {
  const auto& S = kernels::row_mul_into.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    std::vector<T> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    S.get(level)(a.data(), r.y.data(), r.z.data(), n);
    S.get(K::sse2)(b.data(), r.y.data(), r.z.data(), n);
    CHECK(a == b);
  });
}

template <class T>
void check_row_ds() {
  const auto& S = kernels::row_ds.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    std::vector<T> a = r.z, b = r.z;
    S.get(level)(a.data(), r.y.data(), n, T(0.25));
    S.get(K::sse2)(b.data(), r.y.data(), n, T(0.25));
    CHECK(a == b);
  });
}

template <class T>
void check_row_dot() {
  const auto& S = kernels::row_dot.of<T>();
  each_level_and_row<T>([&](K level, int64_t n, Rows<T> r) {
    CHECK(close(S.get(level)(r.y.data(), r.z.data(), n), S.get(K::sse2)(r.y.data(), r.z.data(), n)));
  });
}

// ---- dropout's random words: each level against the scalar references -------------
void check_hash_row() {
  const uint32_t k0 = 0x12345678u, hi_key = 0x9abcdef0u;
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    for (int64_t n : kRowLengths) {
      // Up to the 2^32 wrap of the index.
      for (uint32_t lo0 : {0u, 1000u, 0xfffffff0u - static_cast<uint32_t>(n)}) {
        std::vector<uint32_t> h(static_cast<std::size_t>(n));
        kernels::hash_row.get(level)(h.data(), n, lo0, k0, hi_key);
        for (int64_t c = 0; c < n; ++c)
          CHECK(h[c] == kernels::mix32(kernels::mix32((lo0 + static_cast<uint32_t>(c)) ^ k0) + hi_key));
      }
    }
  }
}

void check_philox_blocks() {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    // Block counters that cross from the low into the high counter word.
    for (uint64_t block0 : {uint64_t{0}, uint64_t{0xfffffffa}})
      for (int64_t nb : {1, 2, 3, 8, 9, 17}) {
        std::vector<uint32_t> got(static_cast<std::size_t>(4 * nb));
        kernels::philox_blocks.get(level)(got.data(), nb, block0, 0xdeadbeef, 0x01234567);
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

// z = h < keep ? scale : 0, at the threshold (words keep - 1, keep, keep + 1) and with
// keep = 2^32 (p = 0: all kept); nothing written past n.
template <class T>
void check_keep_mask() {
  const uint64_t keep = 0x80000001ull;
  std::vector<uint32_t> h(37);
  for (std::size_t c = 0; c < h.size(); ++c) h[c] = static_cast<uint32_t>(keep) + static_cast<uint32_t>(c % 3) - 1u;
  h[5] = 0, h[20] = 0xffffffffu;
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto mask = kernels::keep_mask.of<T>().get(level);
    for (int64_t n : kRowLengths) {
      if (n > static_cast<int64_t>(h.size())) continue;
      std::vector<T> z(h.size(), T(-1));
      mask(z.data(), h.data(), n, keep, T(1.25));
      int bad = 0;
      for (int64_t c = 0; c < n; ++c) bad += z[size_t(c)] != (h[size_t(c)] < keep ? T(1.25) : T(0));
      CHECK(bad == 0);
      CHECK(z[size_t(n)] == T(-1));
      mask(z.data(), h.data(), n, uint64_t{1} << 32, T(2));
      for (int64_t c = 0; c < n; ++c) bad += z[size_t(c)] != T(2);
      CHECK(bad == 0);
    }
  }
}

const std::vector<StubCheck> kChecks{
    {"row_max_f32", check_row_max<float>},
    {"row_max_f64", check_row_max<double>},
    {"row_exp_sub_sum_f32", check_row_exp_sub_sum<float>},
    {"row_exp_sub_sum_f64", check_row_exp_sub_sum<double>},
    {"row_exp_sub_f32", check_row_exp_sub<float>},
    {"row_exp_sub_f64", check_row_exp_sub<double>},
    {"row_scale_f32", check_row_scale<float>},
    {"row_scale_f64", check_row_scale<double>},
    {"row_mul_f32", check_row_mul<float>},
    {"row_mul_f64", check_row_mul<double>},
    {"row_mul_into_f32", check_row_mul_into<float>},
    {"row_mul_into_f64", check_row_mul_into<double>},
    {"row_ds_f32", check_row_ds<float>},
    {"row_ds_f64", check_row_ds<double>},
    {"row_dot_f32", check_row_dot<float>},
    {"row_dot_f64", check_row_dot<double>},
    {"hash_row", check_hash_row},
    {"philox_blocks", check_philox_blocks},
    {"keep_mask_f32", check_keep_mask<float>},
    {"keep_mask_f64", check_keep_mask<double>},
};

}  // namespace

TEST_CASE("simd: every attention-row and dropout stub has a check, and each level passes it") {
  run_stub_checks("test_simd", kChecks);
}

TEST_CASE("simd: a stub calls the slot of simd_level(); registry names are unique") {
  LevelGuard guard;
  for (K level : kernels::available_simd_levels()) {
    kernels::set_simd_level(level);
    // (Double parentheses: doctest cannot print a function pointer.)
    CHECK((kernels::gelu_row.get() == kernels::gelu_row.get(level)));
    CHECK((kernels::row_max.of<double>().get() == kernels::row_max.of<double>().get(level)));
  }
  std::set<std::string> names;
  for (const kernels::DispatchEntry& e : kernels::dispatch_registry()) CHECK(names.insert(e.name).second);
  CHECK(names.count("row_max_f64") == 1);
}

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
          if (t == 0)
            CHECK(eq(results[i][t], 0.0).sum().item<int64_t>() == eq(results[0][t], 0.0).sum().item<int64_t>());
        }
    }
}

TEST_CASE("simd: set_simd_level rejects nothing it listed and names what it cannot run") {
  LevelGuard guard;
  auto levels = kernels::available_simd_levels();
  if (levels.size() < 3)
    CHECK_THROWS_AS(kernels::set_simd_level(K::avx512), ValueError);
  else
    CHECK_NOTHROW(kernels::set_simd_level(K::avx512));
}

TEST_CASE("simd: Philox4x32-10 gives Random123's known answers") {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  // Random123's tests/kat_vectors for philox4x32 with 10 rounds.
  const Kat kats[] = {{{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
                      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                       {0xffffffff, 0xffffffff},
                       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
                      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0},
                       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  for (const Kat& k : kats) {
    uint32_t out[4];
    kernels::philox4x32_10(k.ctr, k.key, out);
    for (int w = 0; w < 4; ++w) CHECK(out[w] == k.out[w]);
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
