// The weight-only quantized kernels (kernels/quant_rows.h; one StubCheck per registered
// stub, simd_checks.h) at every level this CPU has, against the scalar reference: the
// GEMV stubs within f32 summation-order tolerance (K tails, odd N, M = 1, 3, 8, 17), the
// dequantization rows bit for bit; the quantizers' round-trip bound and nibble order;
// the whole product (GEMV and dequantize + sgemm paths). The ops and modules:
// tests/nn/test_quantize.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/quant_rows.h"
#include "kernels/s8_gemm.h"
#include "simd_checks.h"

using namespace ag;
using namespace simd_checks;

namespace {

std::vector<float> normals(int64_t n, uint64_t seed, float sd = 1.f) {
  Generator g(seed);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<float>(g.normal()) * sd;
  return v;
}

// One quantized weight of either format, made by the quantizers from random weights.
struct QW {
  int64_t N, K, G;  // G = 0: int8
  std::vector<int8_t> q8;
  std::vector<uint8_t> q4;
  std::vector<float> scale;
  QW(int64_t n, int64_t k, int64_t g, uint64_t seed) : N(n), K(k), G(g) {
    const std::vector<float> w = normals(N * K, seed, 0.5f);
    if (G == 0) {
      q8.resize(static_cast<std::size_t>(N * K));
      scale.resize(static_cast<std::size_t>(N));
      kernels::quantize_q8(q8.data(), scale.data(), w.data(), N, K);
    } else {
      q4.resize(static_cast<std::size_t>(N * K / 2));
      scale.resize(static_cast<std::size_t>(N * (K / G)));
      kernels::quantize_q4(q4.data(), scale.data(), w.data(), N, K, G);
    }
  }
  std::vector<float> dequant() const {
    std::vector<float> out(static_cast<std::size_t>(N * K));
    if (G == 0)
      kernels::quant_ref::q8_dequant_rows(out.data(), q8.data(), scale.data(), K, 0, N);
    else
      kernels::quant_ref::q4_dequant_rows(out.data(), q4.data(), scale.data(), K, G, 0, N);
    return out;
  }
};

// |y - ref| within the f32 summation-order bound: (K + 4) ulps of sum |x| |w| + |b|.
void check_close(const std::vector<float>& y, const std::vector<float>& ref, const std::vector<float>& x, const QW& w,
                 const float* bias, int64_t M) {
  const std::vector<float> wd = w.dequant();
  int bad = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < w.N; ++n) {
      double mag = bias ? std::fabs(bias[n]) : 0.0;
      for (int64_t k = 0; k < w.K; ++k) mag += std::fabs(double(x[size_t(m * w.K + k)]) * wd[size_t(n * w.K + k)]);
      const double tol = double(w.K + 4) * 1.2e-7 * mag + 1e-30;
      const double d = std::fabs(double(y[size_t(m * w.N + n)]) - ref[size_t(m * w.N + n)]);
      if (!(d <= tol) && bad++ < 3)
        FAIL_CHECK("m " << m << " n " << n << ": " << y[size_t(m * w.N + n)] << " vs " << ref[size_t(m * w.N + n)]
                        << " (tol " << tol << ")");
    }
}

// Every (M, N, K, G) shape the GEMV checks run: K tails for int8, odd N, M past 8.
struct Shape4 {
  int64_t M, N, K, G;
};
std::vector<Shape4> gemv_shapes(bool int4) {
  std::vector<Shape4> out;
  const std::vector<int64_t> ks8{1, 7, 8, 15, 16, 17, 33, 100, 257};
  const std::vector<std::pair<int64_t, int64_t>> kg4{{32, 32}, {96, 32}, {64, 64}, {192, 64}};
  for (int64_t M : {1, 2, 3, 8, 17})
    for (int64_t N : {1, 5, 13}) {
      if (int4)
        for (const auto& p : kg4) out.push_back({M, N, p.first, p.second});
      else
        for (int64_t K : ks8) out.push_back({M, N, K, 0});
    }
  return out;
}

void check_gemv(bool int4) {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    uint64_t seed = 1;
    for (const Shape4& s : gemv_shapes(int4))
      for (bool with_bias : {false, true}) {
        CAPTURE(s.M);
        CAPTURE(s.N);
        CAPTURE(s.K);
        CAPTURE(s.G);
        CAPTURE(with_bias);
        const QW w(s.N, s.K, s.G, ++seed);
        const std::vector<float> x = normals(s.M * s.K, ++seed), b = normals(s.N, ++seed);
        const float* bias = with_bias ? b.data() : nullptr;
        std::vector<float> y(size_t(s.M * s.N), 7.f), ref(size_t(s.M * s.N), -7.f);
        // Two calls over [0, n0) and [n0, N): the row range is honoured.
        const int64_t n0 = s.N / 2;
        for (const auto& range : {std::pair{int64_t{0}, n0}, std::pair{n0, s.N}}) {
          const int64_t a = range.first, e = range.second;
          if (int4) {
            kernels::q4_gemv.get(level)(y.data(), s.N, x.data(), s.K, s.M, s.K, s.G, w.q4.data(), w.scale.data(), bias,
                                        a, e);
            kernels::quant_ref::q4_gemv(ref.data(), s.N, x.data(), s.K, s.M, s.K, s.G, w.q4.data(), w.scale.data(),
                                        bias, a, e);
          } else {
            kernels::q8_gemv.get(level)(y.data(), s.N, x.data(), s.K, s.M, s.K, w.q8.data(), w.scale.data(), bias, a,
                                        e);
            kernels::quant_ref::q8_gemv(ref.data(), s.N, x.data(), s.K, s.M, s.K, w.q8.data(), w.scale.data(), bias, a,
                                        e);
          }
        }
        check_close(y, ref, x, w, bias, s.M);
      }
  }
}

void check_dequant(bool int4) {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    uint64_t seed = 100;
    const std::vector<std::pair<int64_t, int64_t>> kg =
        int4 ? std::vector<std::pair<int64_t, int64_t>>{{32, 32}, {96, 32}, {64, 64}, {320, 64}}
             : std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {15, 0}, {16, 0}, {17, 0}, {33, 0}, {100, 0}};
    for (const auto& kg_pair : kg)
      for (int64_t N : {1, 4, 7}) {
        const int64_t Kd = kg_pair.first, G = kg_pair.second;
        CAPTURE(Kd);
        CAPTURE(N);
        const QW w(N, Kd, G, ++seed);
        // rows [1, N) only (row 0 skipped when N > 1): n0 and the output offset agree
        const int64_t n0 = N > 1 ? 1 : 0;
        std::vector<float> out(size_t((N - n0) * Kd), 3.f), ref(size_t((N - n0) * Kd), -3.f);
        if (int4) {
          kernels::q4_dequant_rows.get(level)(out.data(), w.q4.data(), w.scale.data(), Kd, G, n0, N);
          kernels::quant_ref::q4_dequant_rows(ref.data(), w.q4.data(), w.scale.data(), Kd, G, n0, N);
        } else {
          kernels::q8_dequant_rows.get(level)(out.data(), w.q8.data(), w.scale.data(), Kd, n0, N);
          kernels::quant_ref::q8_dequant_rows(ref.data(), w.q8.data(), w.scale.data(), Kd, n0, N);
        }
        CHECK(std::memcmp(out.data(), ref.data(), out.size() * sizeof(float)) == 0);
      }
  }
}

// ---- dynamic int8 (kernels/s8_gemm.h): integer sums, so every level gives the reference's bits ----
std::vector<int8_t> codes(int64_t n, uint64_t seed) {
  Generator g(seed);
  std::vector<int8_t> v(static_cast<std::size_t>(n));
  for (auto& c : v) c = static_cast<int8_t>(std::lround(std::clamp(g.normal() * 60.0, -127.0, 127.0)));
  return v;
}

// s8_gemm at `level` against the reference, bit for bit, over [0, n0) and [n0, N).
void check_s8_once(K level, int64_t M, int64_t N, int64_t Kd, const std::vector<int8_t>& xq,
                   const std::vector<int8_t>& q, bool with_bias, uint64_t seed) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(Kd);
  CAPTURE(with_bias);
  const std::vector<float> xs = normals(M, seed), ws = normals(N, seed + 1), b = normals(N, seed + 2);
  const float* bias = with_bias ? b.data() : nullptr;
  std::vector<float> y(size_t(M * N), 7.f), ref(size_t(M * N), -7.f);
  const int64_t n0 = N / 2;
  for (const auto& r : {std::pair{int64_t{0}, n0}, std::pair{n0, N}}) {
    kernels::s8_gemm.get(level)(y.data(), N, xq.data(), xs.data(), Kd, M, Kd, q.data(), ws.data(), bias, r.first,
                                r.second);
    kernels::quant_ref::s8_gemm(ref.data(), N, xq.data(), xs.data(), Kd, M, Kd, q.data(), ws.data(), bias, r.first,
                                r.second);
  }
  CHECK(std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)) == 0);
}

// Every level, and at avx512 both the VNNI (when the CPU has it) and the vpmaddwd forms:
// M 1..9 and 13, 33 (decode and blocked), N not a multiple of 4, K tails around 16/32/64,
// codes at the extremes up to kS8MaxK (the u8 offset wraps the lanes of int32).
void check_s8_gemm() {
  struct VnniGuard {
    bool saved = kernels::s8_vnni();
    ~VnniGuard() { kernels::set_s8_vnni(saved); }
  } guard;
  for (K level : kernels::available_simd_levels())
    for (bool vnni : {false, true}) {
      if (vnni && (level != K::avx512 || !kernels::s8_vnni_supported())) continue;
      kernels::set_s8_vnni(vnni);
      CAPTURE(kernels::to_string(level));
      CAPTURE(vnni);
      uint64_t seed = 500;
      for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 33})
        for (int64_t N : {1, 4, 6, 13})
          for (int64_t Kd : {1, 15, 16, 17, 33, 64, 65, 100, 257}) {
            const std::vector<int8_t> xq = codes(M * Kd, ++seed), q = codes(N * Kd, ++seed);
            check_s8_once(level, M, N, Kd, xq, q, (M + N + Kd) % 2 == 0, ++seed);
          }
      for (int8_t xv : {int8_t{-127}, int8_t{127}}) {  // |sum| = 127 * 127 * kS8MaxK < 2^31
        const int64_t M = 2, N = 5, Kd = kernels::kS8MaxK;
        const std::vector<int8_t> xq(size_t(M * Kd), xv), q(size_t(N * Kd), int8_t{-127});
        check_s8_once(level, M, N, Kd, xq, q, true, ++seed);
      }
    }
  if (!kernels::s8_vnni_supported())
    CHECK_THROWS_WITH_AS(kernels::set_s8_vnni(true), "set_s8_vnni: this CPU has no AVX-512 VNNI", ValueError);
}

const std::vector<StubCheck> kChecks{
    {"q8_gemv", [] { check_gemv(false); }},
    {"q4_gemv", [] { check_gemv(true); }},
    {"q8_dequant_rows", [] { check_dequant(false); }},
    {"q4_dequant_rows", [] { check_dequant(true); }},
    {"s8_gemm", check_s8_gemm},
};

}  // namespace

TEST_CASE("simd quant: every quantized-linear stub has a check, and each level passes it") {
  run_stub_checks("test_simd_quant", kChecks);
}

TEST_CASE("simd quant: quantize / dequantize round trip within scale / 2, codes in range") {
  for (int64_t G : {0, 32, 64}) {
    CAPTURE(G);
    const int64_t N = 9, Kd = G ? 4 * G : 101;
    std::vector<float> w = normals(N * Kd, 7 + uint64_t(G));
    for (int64_t k = 0; k < Kd; ++k) w[size_t(2 * Kd + k)] = 0.f;  // an all-zero row: scale 0
    w[5] = 1e-30f;                                                 // tiny next to large values
    QW q(N, Kd, G, 0);
    if (G == 0)
      kernels::quantize_q8(q.q8.data(), q.scale.data(), w.data(), N, Kd);
    else
      kernels::quantize_q4(q.q4.data(), q.scale.data(), w.data(), N, Kd, G);
    const std::vector<float> d = q.dequant();
    int bad = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < Kd; ++k) {
        const float s = q.scale[size_t(G ? n * (Kd / G) + k / G : n)];
        const double err = std::fabs(double(w[size_t(n * Kd + k)]) - d[size_t(n * Kd + k)]);
        if (!(err <= s / 2 * (1 + 1e-6)) && bad++ < 3) FAIL_CHECK("n " << n << " k " << k << ": error " << err);
        if (G == 0) CHECK(std::abs(int(q.q8[size_t(n * Kd + k)])) <= 127);
      }
    CHECK(q.scale[size_t(G ? 2 * (Kd / G) : 2)] == 0.f);
    if (G) {  // every nibble in [1, 15]: q in [-7, 7], -8 never produced
      for (uint8_t b : q.q4) {
        CHECK((b & 15) >= 1);
        CHECK((b >> 4) >= 1);
      }
    }
  }
}

TEST_CASE("simd quant: int8 rounds half to even; 4-bit nibble order is llama.cpp's Q4_0") {
  // max |w| = 127 -> scale 1: 2.5 -> 2, 3.5 -> 4, -0.5 -> 0, 126.5 -> 126
  const std::vector<float> w{127.f, 2.5f, 3.5f, -0.5f, 126.5f, -127.f};
  std::vector<int8_t> q(6);
  float s = 0;
  kernels::quantize_q8(q.data(), &s, w.data(), 1, 6);
  CHECK(s == 1.f);
  CHECK(q == std::vector<int8_t>{127, 2, 4, 0, 126, -127});
  // One group of 32: w[e] = e - 16 clipped to [-7, 7] -> max 7, scale 1, so q = w.
  std::vector<float> w4(32);
  for (int e = 0; e < 32; ++e) w4[size_t(e)] = float(std::clamp(e - 16, -7, 7));
  std::vector<uint8_t> p(16);
  kernels::quantize_q4(p.data(), &s, w4.data(), 1, 32, 32);
  CHECK(s == 1.f);
  for (int j = 0; j < 16; ++j) {  // byte j: element j low, element 16 + j high, stored q + 8
    CHECK((p[size_t(j)] & 15) == int(w4[size_t(j)]) + 8);
    CHECK((p[size_t(j)] >> 4) == int(w4[size_t(16 + j)]) + 8);
  }
}

TEST_CASE("simd quant: the whole product (GEMV for M <= 8, dequantize + sgemm above) at every level") {
  LevelGuard guard;
  for (K level : kernels::available_simd_levels()) {
    kernels::set_simd_level(level);
    CAPTURE(kernels::to_string(level));
    for (int64_t G : {0, 32})
      for (int64_t M : {1, 3, 17, 40})
        for (int64_t N : {1, 13, 300}) {  // 300: two dequantization tiles
          const int64_t Kd = G ? 96 : 77;
          CAPTURE(G);
          CAPTURE(M);
          CAPTURE(N);
          const QW w(N, Kd, G, uint64_t(M * 1000 + N));
          const std::vector<float> x = normals(M * Kd, 5), b = normals(N, 6);
          std::vector<float> y(size_t(M * N)), ref(size_t(M * N));
          if (G) {
            kernels::q4_linear(y.data(), x.data(), M, N, Kd, G, w.q4.data(), w.scale.data(), b.data());
            kernels::quant_ref::q4_gemv(ref.data(), N, x.data(), Kd, M, Kd, G, w.q4.data(), w.scale.data(), b.data(), 0,
                                        N);
          } else {
            kernels::q8_linear(y.data(), x.data(), M, N, Kd, w.q8.data(), w.scale.data(), b.data());
            kernels::quant_ref::q8_gemv(ref.data(), N, x.data(), Kd, M, Kd, w.q8.data(), w.scale.data(), b.data(), 0,
                                        N);
          }
          check_close(y, ref, x, w, b.data(), M);
        }
  }
}

TEST_CASE("simd quant: activation rows to int8 (round half to even, zero and non-finite rows)") {
  // max |x| = 127 -> scale 1: 2.5 -> 2, 3.5 -> 4, -0.5 -> 0, 126.5 -> 126
  const std::vector<float> x{127.f, 2.5f, 3.5f, -0.5f, 126.5f, -127.f, 0.f,    0.f,   0.f, 0.f, 0.f, 0.f,
                             1.f,   NAN,  2.f,  0.f,   0.f,    0.f,    -254.f, 127.f, 0.f, 0.f, 0.f, 0.f};
  std::vector<int8_t> q(24, 99);
  std::vector<float> s(4);
  kernels::quantize_rows_s8(q.data(), s.data(), x.data(), 4, 6);
  CHECK(s[0] == 1.f);
  CHECK(std::vector<int8_t>(q.begin(), q.begin() + 6) == std::vector<int8_t>{127, 2, 4, 0, 126, -127});
  CHECK(s[1] == 0.f);  // all zeros: scale 0, codes 0
  CHECK(std::vector<int8_t>(q.begin() + 6, q.begin() + 12) == std::vector<int8_t>(6, 0));
  CHECK(std::isnan(s[2]));  // a NaN in the row: its outputs become NaN
  CHECK(s[3] == 2.f);       // -254 -> -127, 127 -> 63.5 -> 64 (half to even)
  CHECK(std::vector<int8_t>(q.begin() + 18, q.begin() + 20) == std::vector<int8_t>{-127, 64});
}

TEST_CASE("simd quant: dynamic int8 product (quantized rows, blocks over the pool, oneDNN) at every level") {
  LevelGuard guard;
  struct DnnlGuard {
    bool saved = kernels::set_s8_dnnl(true);
    ~DnnlGuard() { kernels::set_s8_dnnl(saved); }
  } dnnl_guard;
  for (K level : kernels::available_simd_levels())
    for (bool dnnl : {true, false}) {  // M > 3: oneDNN's int8 matmul where it runs, then the blocks
      kernels::set_simd_level(level);
      kernels::set_s8_dnnl(dnnl);
      CAPTURE(kernels::to_string(level));
      CAPTURE(dnnl);
      for (int64_t M : {1, 3, 4, 8, 40})
        for (int64_t N : {1, 13, 300}) {
          const int64_t Kd = 77;
          CAPTURE(M);
          CAPTURE(N);
          const QW w(N, Kd, 0, uint64_t(M * 1000 + N));
          const std::vector<float> x = normals(M * Kd, 5), b = normals(N, 6);
          std::vector<int8_t> xq(size_t(M * Kd));
          std::vector<float> xs(static_cast<std::size_t>(M)), y(size_t(M * N)), ref(size_t(M * N));
          kernels::s8_linear(y.data(), x.data(), M, N, Kd, w.q8.data(), w.scale.data(), b.data());
          kernels::quantize_rows_s8(xq.data(), xs.data(), x.data(), M, Kd);
          kernels::quant_ref::s8_gemm(ref.data(), N, xq.data(), xs.data(), Kd, M, Kd, w.q8.data(), w.scale.data(),
                                      b.data(), 0, N);
          CHECK(std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)) == 0);
        }
    }
}
