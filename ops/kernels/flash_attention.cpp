// Fused scaled dot-product attention on the CPU (the flash-attention idea; design notes
// in FLASH_ATTENTION.md beside this file): for each block of queries, walk the keys tile by tile with an online
// softmax (running row max m and sum l), so the (L, S) score matrix never exists.
// The forward saves only the output and each row's logsumexp; the backward recomputes
// every score tile from them.
//
// Legend (per batch slice): L queries, S keys, d head dim, dv value dim;
// Br x Bc is one tile of scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "flash_slices.h"

namespace ag::kernels {
namespace {

using namespace flash;

template <class T>
void forward_slice(Slice<T> s, const FlashConfig& cfg, int64_t L, int64_t S, int64_t d, int64_t dv, T* out, int64_t ldo,
                   T* lse, Scratch<T>& sc, uint64_t slice) {  // out: L rows of dv, ldo apart
  transpose_kv(s, L, S, d, dv, false, sc);
  const T ninf = -std::numeric_limits<T>::infinity();
  const Rows<T> R;
  std::vector<T>&tile = sc.tile, &m = sc.m, &l = sc.l;
  for (int64_t i0 = 0; i0 < L; i0 += Br) {
    const int64_t rows = std::min(Br, L - i0);
    T* acc = out + i0 * ldo;  // (rows, dv), accumulated in place
    for (int64_t r = 0; r < rows; ++r) std::fill(acc + r * ldo, acc + r * ldo + dv, T(0));
    std::fill(m.begin(), m.end(), ninf);
    std::fill(l.begin(), l.end(), T(0));
    const int64_t kend = key_end(s, cfg, i0, rows);
    for (int64_t j0 = 0; j0 < kend; j0 += Bc) {
      const int64_t cols = std::min(Bc, kend - j0);
      score_tile(s, cfg, i0, rows, j0, cols, d, tile.data());
      for (int64_t r = 0; r < rows; ++r) {
        T* row = tile.data() + r * Bc;
        // R.max skips NaN scores (its comparisons are false); a NaN score still reaches
        // the sum through exp (l, then out and lse, become NaN), and a row that is
        // NaN once keeps m NaN (std::max returns its first argument).
        T m_new = std::max(m[r], R.max(row, cols));
        if (m_new == ninf) {  // nothing visible yet in this row, unless a NaN score is
          if (!any_nan(row, cols)) {
            std::fill(row, row + cols, T(0));
            continue;
          }
          m_new = std::numeric_limits<T>::quiet_NaN();
        }
        const T sum = R.exp_sub_sum(row, cols, m_new);
        const T alpha = std::exp(m[r] - m_new);  // 0 when m was -inf
        if (alpha != T(1)) R.scale(acc + r * ldo, dv, alpha);
        l[r] = alpha * l[r] + sum;
        m[r] = m_new;
      }
      if (cfg.dropout_p > 0) {  // the softmax statistics above use the weights before dropout
        dropout_tile(cfg, R, slice, L, S, i0, rows, j0, cols, sc.z.data());
        for (int64_t r = 0; r < rows; ++r) R.mul(tile.data() + r * Bc, sc.z.data() + r * Bc, cols);
      }
      gemm<T>(false, false, rows, dv, cols, T(1), tile.data(), Bc, s.v + j0 * s.vs, s.vs, T(1), acc, ldo);
    }
    for (int64_t r = 0; r < rows; ++r) {  // a row with no visible key: zeros, lse -inf; NaN l: NaN
      R.scale(acc + r * ldo, dv, l[r] == T(0) ? T(0) : T(1) / l[r]);
      lse[i0 + r] = l[r] == T(0) ? ninf : m[r] + std::log(l[r]);
    }
  }
}

// q, k, v all bf16 or all f16: f32 scores and softmax statistics (lse is f32), the output
// rounded once. Each slice's rows are widened into the thread's scratch just before its
// tiles run, and its output rounded from there: the f32 kernel sees the values it would
// see if the whole tensors were widened first, so the bits are the same (checked in
// test_flash_attention), but a decode step no longer converts its whole K/V cache into
// new f32 tensors on every token (14% of workload 9's bf16 step), and no K/V row past a
// slice's visible keys is read.
FlashForward forward_16bit(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask_in,
                           const FlashConfig& cfg) {
  const bool bf16 = q_in.dtype() == DType::bf16;
  Tensor q = blas_rows(q_in), k = blas_rows(k_in), v = blas_rows(v_in), mask = as_f32(mask_in);
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape out_shape = batch, lse_shape = batch;
  out_shape.push_back(L), out_shape.push_back(dv), lse_shape.push_back(L);
  FlashForward r{empty_in_layout_of(q, out_shape, q.dtype()), empty(lse_shape, DType::f32)};
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  const Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  const auto widen = bf16 ? bf16_to_f32_row.get() : f16_to_f32_row.get();
  const auto round = bf16 ? f32_to_bf16_row.get() : f32_to_f16_row.get();
  const int64_t ldo = row_stride(r.out);
  float* lse = r.lse.data<float>();
  detail::parallel_for(numel(batch), slice_grain(L, S, d, dv), [&](int64_t b0, int64_t b1) {
    Scratch<float> sc(L, false, cfg.dropout_p > 0);
    std::vector<float> qf(L * d), kf(S * d), vf(S * dv), of(L * dv);
    int64_t kv_slice = -1, kv_rows = 0;  // rows [0, kv_rows) of K/V slice kv_slice are in kf, vf
    for (int64_t b = b0; b < b1; ++b) {
      const Slice<uint16_t> h = slice_at<uint16_t>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg);
      Slice<float> s{};
      s.q = qf.data(), s.k = kf.data(), s.v = vf.data(), s.qs = d, s.ks = d, s.vs = dv;
      s.mask = h.mask, s.ml = h.ml, s.mc = h.mc, s.key_len = h.key_len;
      for (int64_t i = 0; i < L; ++i) widen(qf.data() + i * d, h.q + i * h.qs, d);
      // The query heads of a group share their K/V slice (and come one after another).
      if (heads.kv_of(b) != kv_slice) kv_slice = heads.kv_of(b), kv_rows = 0;
      for (; kv_rows < s.key_len; ++kv_rows) {
        widen(kf.data() + kv_rows * d, h.k + kv_rows * h.ks, d);
        widen(vf.data() + kv_rows * dv, h.v + kv_rows * h.vs, dv);
      }
      forward_slice(s, cfg, L, S, d, dv, of.data(), dv, lse + b * L, sc, static_cast<uint64_t>(b));
      uint16_t* o = slice_rows<uint16_t>(r.out, b, batch);
      for (int64_t i = 0; i < L; ++i) round(o + i * ldo, of.data() + i * dv, dv);
    }
  });
  return r;
}

}  // namespace

FlashForward flash_attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask,
                                     const FlashConfig& cfg) {
  if (is_half(q_in)) {
    if (k_in.dtype() == q_in.dtype() && v_in.dtype() == q_in.dtype()) return forward_16bit(q_in, k_in, v_in, mask, cfg);
    FlashForward r = flash_attention_forward(as_f32(q_in), as_f32(k_in), as_f32(v_in), as_f32(mask), cfg);
    r.out = to_half(r.out, q_in.dtype());
    return r;
  }
  Tensor q = blas_rows(q_in), k = blas_rows(k_in), v = blas_rows(v_in);
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape out_shape = batch, lse_shape = batch;
  out_shape.push_back(L), out_shape.push_back(dv), lse_shape.push_back(L);
  FlashForward r{empty_in_layout_of(q, out_shape, q.dtype()), empty(lse_shape, q.dtype())};
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  const int64_t n = numel(batch);
  dispatch_float(q.dtype(), "flash_attention", [&]<class T>() {
    const int64_t ldo = row_stride(r.out);
    T* lse = r.lse.data<T>();
    detail::parallel_for(n, slice_grain(L, S, d, dv), [&](int64_t b0, int64_t b1) {
      Scratch<T> sc(L, false, cfg.dropout_p > 0);
      for (int64_t b = b0; b < b1; ++b)
        forward_slice(slice_at<T>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg), cfg, L, S, d, dv,
                      slice_rows<T>(r.out, b, batch), ldo, lse + b * L, sc, static_cast<uint64_t>(b));
    });
  });
  return r;
}

}  // namespace ag::kernels
