// Weight-only quantized linear (kernels/quant_rows.h): the scalar reference, the
// quantizers and the whole product over the thread pool. The vector rows are in
// isa/quant_rows.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attograd/detail/parallel.h"
#include "gemm.h"
#include "kernels/quant_rows.h"

namespace ag::kernels {

namespace {
// Element e (< G) of a packed 4-bit group b (G / 2 bytes): low nibbles hold 0..G/2-1,
// high nibbles G/2..G-1; stored as q + 8.
inline int q4_at(const uint8_t* b, int64_t e, int64_t G) {
  const int64_t half = G / 2;
  const int nib = e < half ? (b[e] & 15) : (b[e - half] >> 4);
  return nib - 8;
}
}  // namespace

// ---- scalar reference: sums in ascending k, in float ----
namespace quant_ref {

void q8_gemv(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, const int8_t* q,
             const float* scale, const float* bias, int64_t n0, int64_t n1) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = n0; n < n1; ++n) {
      const int8_t* qr = q + n * K;
      float s = 0.f;
      for (int64_t k = 0; k < K; ++k) s += x[m * ldx + k] * static_cast<float>(qr[k]);
      s *= scale[n];
      y[m * ldy + n] = bias ? s + bias[n] : s;
    }
}

void q4_gemv(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t M, int64_t K, int64_t G, const uint8_t* q,
             const float* scale, const float* bias, int64_t n0, int64_t n1) {
  const int64_t groups = K / G;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = n0; n < n1; ++n) {
      float s = 0.f;
      for (int64_t g = 0; g < groups; ++g) {
        const uint8_t* b = q + n * (K / 2) + g * (G / 2);
        float part = 0.f;
        for (int64_t e = 0; e < G; ++e) part += x[m * ldx + g * G + e] * static_cast<float>(q4_at(b, e, G));
        s += part * scale[n * groups + g];
      }
      y[m * ldy + n] = bias ? s + bias[n] : s;
    }
}

void q8_dequant_rows(float* out, const int8_t* q, const float* scale, int64_t K, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t k = 0; k < K; ++k) out[(n - n0) * K + k] = static_cast<float>(q[n * K + k]) * scale[n];
}

void q4_dequant_rows(float* out, const uint8_t* q, const float* scale, int64_t K, int64_t G, int64_t n0, int64_t n1) {
  const int64_t groups = K / G;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* b = q + n * (K / 2) + g * (G / 2);
      for (int64_t e = 0; e < G; ++e)
        out[(n - n0) * K + g * G + e] = static_cast<float>(q4_at(b, e, G)) * scale[n * groups + g];
    }
}

}  // namespace quant_ref

// ---- quantizers: symmetric, round half to even (nearbyint in the default mode) ----
namespace {
// q = clamp(round(w / scale), -qmax, qmax) for w in [p, p + n); returns the scale.
template <class Put>
float quantize_run(const float* w, int64_t n, float qmax, Put put) {
  float amax = 0.f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
  const float scale = amax / qmax;
  for (int64_t i = 0; i < n; ++i) {
    const float r = scale == 0.f ? 0.f : std::nearbyint(w[i] / scale);
    put(i, static_cast<int>(std::clamp(r, -qmax, qmax)));
  }
  return scale;
}
}  // namespace

void quantize_q8(int8_t* q, float* scale, const float* w, int64_t N, int64_t K) {
  for (int64_t n = 0; n < N; ++n)
    scale[n] = quantize_run(w + n * K, K, 127.f, [&](int64_t k, int v) { q[n * K + k] = static_cast<int8_t>(v); });
}

void quantize_q4(uint8_t* q, float* scale, const float* w, int64_t N, int64_t K, int64_t G) {
  const int64_t groups = K / G, half = G / 2;
  std::fill(q, q + N * (K / 2), uint8_t{0});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      uint8_t* b = q + n * (K / 2) + g * half;
      scale[n * groups + g] = quantize_run(w + n * K + g * G, G, 7.f, [&](int64_t e, int v) {
        const auto nib = static_cast<uint8_t>(v + 8);
        if (e < half)
          b[e] = static_cast<uint8_t>(b[e] | nib);
        else
          b[e - half] = static_cast<uint8_t>(b[e - half] | (nib << 4));
      });
    }
}

// ---- the whole product ----
namespace {
constexpr int64_t kDequantTile = 256;  // rows of W per sgemm call (1 MB of f32 at K = 1024)

// GEMV for M <= 8: output rows split over the pool, each weight byte read once.
template <class Gemv>
void gemv_linear(int64_t N, int64_t K, Gemv gemv) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(K, 1));  // ~32k weights per chunk
  detail::parallel_for(N, grain, [&](int64_t n0, int64_t n1) { gemv(n0, n1); });
}

// Larger M: tiles of W dequantized to f32 (rows split over the pool), then one sgemm
// per tile, y[:, n0:n1] = x @ tile^T, which OpenBLAS threads itself.
template <class Dequant>
void tiled_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, const float* bias, Dequant dequant) {
  std::vector<float> tile(static_cast<std::size_t>(std::min(N, kDequantTile) * K));
  for (int64_t n0 = 0; n0 < N; n0 += kDequantTile) {
    const int64_t n1 = std::min(N, n0 + kDequantTile);
    detail::parallel_for(n1 - n0, 16, [&](int64_t a, int64_t b) { dequant(tile.data() + a * K, n0 + a, n0 + b); });
    gemm<float>(false, true, M, n1 - n0, K, 1.f, x, K, tile.data(), K, 0.f, y + n0, N);
  }
  if (bias)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) y[m * N + n] += bias[n];
}
}  // namespace

void q8_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, const int8_t* q, const float* scale,
               const float* bias) {
  if (M == 0 || N == 0) return;
  if (M <= kQuantGemvMaxRows) {
    const auto f = q8_gemv.get();
    gemv_linear(N, K, [&](int64_t n0, int64_t n1) { f(y, N, x, K, M, K, q, scale, bias, n0, n1); });
  } else {
    const auto f = q8_dequant_rows.get();
    tiled_linear(y, x, M, N, K, bias, [&](float* out, int64_t n0, int64_t n1) { f(out, q, scale, K, n0, n1); });
  }
}

void q4_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, int64_t G, const uint8_t* q,
               const float* scale, const float* bias) {
  if (M == 0 || N == 0) return;
  if (M <= kQuantGemvMaxRows) {
    const auto f = q4_gemv.get();
    gemv_linear(N, K, [&](int64_t n0, int64_t n1) { f(y, N, x, K, M, K, G, q, scale, bias, n0, n1); });
  } else {
    const auto f = q4_dequant_rows.get();
    tiled_linear(y, x, M, N, K, bias, [&](float* out, int64_t n0, int64_t n1) { f(out, q, scale, K, G, n0, n1); });
  }
}

}  // namespace ag::kernels
