// Dynamic int8 linear (kernels/s8_gemm.h): the scalar reference, the per-row activation
// quantizer, the VNNI switch and the whole product over the thread pool. The vector
// blocks are in isa/s8_gemm.cpp.
#include "kernels/s8_gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attograd/detail/parallel.h"
#include "attograd/error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ag::kernels {

namespace quant_ref {
void s8_gemm(float* y, int64_t ldy, const int8_t* xq, const float* xs, int64_t ldx, int64_t M, int64_t K,
             const int8_t* q, const float* ws, const float* bias, int64_t n0, int64_t n1) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = n0; n < n1; ++n) {
      int32_t acc = 0;  // exact: K <= kS8MaxK
      for (int64_t k = 0; k < K; ++k) acc += int32_t{xq[m * ldx + k]} * int32_t{q[n * K + k]};
      const float v = static_cast<float>(acc) * xs[m] * ws[n];
      y[m * ldy + n] = bias ? v + bias[n] : v;
    }
}
}  // namespace quant_ref

// ---- VNNI switch ----
namespace {
bool detect_vnni() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}
std::atomic<bool>& vnni_flag() {
  static std::atomic<bool> on{detect_vnni()};
  return on;
}
}  // namespace

bool s8_vnni_supported() {
  static const bool has = detect_vnni();
  return has;
}
bool s8_vnni() { return vnni_flag().load(std::memory_order_relaxed); }

namespace {
std::atomic<bool> g_dnnl{true};
}  // namespace
bool set_s8_dnnl(bool on) { return g_dnnl.exchange(on); }
bool set_s8_vnni(bool on) {
  AG_CHECK(!on || s8_vnni_supported(), ValueError, "set_s8_vnni: this CPU has no AVX-512 VNNI");
  return vnni_flag().exchange(on);
}

// ---- activations: one scale per row, round half to even ----
namespace {
// round_half_even(v) for |v| <= 127 (the current rounding mode, nearest-even by default).
inline int32_t round_even(float v) {
#if defined(__SSE2__)
  return _mm_cvtss_si32(_mm_set_ss(v));
#else
  return static_cast<int32_t>(std::nearbyint(v));
#endif
}
}  // namespace

void quantize_rows_s8(int8_t* xq, float* xs, const float* x, int64_t M, int64_t K) {
  for (int64_t m = 0; m < M; ++m) {
    const float* r = x + m * K;
    float amax = 0.f;
    bool finite = true;
    for (int64_t k = 0; k < K; ++k) {
      amax = std::max(amax, std::fabs(r[k]));
      finite = finite && std::isfinite(r[k]);  // std::max drops a NaN
    }
    xs[m] = finite ? amax / 127.f : NAN;  // a non-finite row makes its outputs NaN
    const float inv = finite && amax > 0.f ? 127.f / amax : 0.f;
    for (int64_t k = 0; k < K; ++k) {
      const float v = std::clamp(r[k] * inv, -127.f, 127.f);  // inv > 0: |v| <= 127 but for rounding
      xq[m * K + k] = static_cast<int8_t>(finite ? round_even(v) : 0);
    }
  }
}

// ---- the whole product ----
void s8_linear(float* y, const float* x, int64_t M, int64_t N, int64_t K, const int8_t* q, const float* ws,
               const float* bias) {
  if (M == 0 || N == 0) return;
  std::vector<int8_t> xq(static_cast<std::size_t>(M * K));  // (M, K)
  std::vector<float> xs(static_cast<std::size_t>(M));       // (M)
  quantize_rows_s8(xq.data(), xs.data(), x, M, K);
  // ~32k weights (M <= 8) or ~256k multiply-adds per chunk, in whole blocks of 4 rows
  const int64_t grain = std::max<int64_t>(4, (M <= 8 ? 32768 : 262144 / M) / std::max<int64_t>(K, 1)) / 4 * 4;
  if (M > kS8GemvMaxRows && s8_vnni_supported() && g_dnnl.load()) {
    std::vector<int32_t> acc(static_cast<std::size_t>(M * N));  // (M, N)
    std::atomic<bool> ok{true};
    detail::parallel_for(N, std::max<int64_t>(grain, 64), [&](int64_t n0, int64_t n1) {
      if (!s8_matmul_dnnl(acc.data() + n0, N, xq.data(), M, K, q + n0 * K, n1 - n0)) ok = false;
    });
    if (ok) {  // the reference's arithmetic on the exact sums
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const float v = static_cast<float>(acc[size_t(m * N + n)]) * xs[size_t(m)] * ws[n];
          y[m * N + n] = bias ? v + bias[n] : v;
        }
      return;
    }
  }
  const auto f = s8_gemm.get();
  detail::parallel_for(N, grain,
                       [&](int64_t n0, int64_t n1) { f(y, N, xq.data(), xs.data(), K, M, K, q, ws, bias, n0, n1); });
}

}  // namespace ag::kernels
