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

#include "kernels/flash_attention.h"
#include "gemm.h"
#include "kernels/attention_rows.h"
#include "kernels/dropout_rows.h"
#include "kernels/strided.h"
#include "attograd/detail/parallel.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

constexpr int64_t Br = 64, Bc = 64;

// The row operations at the run-time level (attention_rows.h, dropout_rows.h), looked
// up once per batch slice.
template <class T>
struct Rows {
  SimdLevel level = simd_level();
  RowMaxFn<T> max = row_max.of<T>().get(level);
  RowExpSubSumFn<T> exp_sub_sum = row_exp_sub_sum.of<T>().get(level);
  RowExpSubFn<T> exp_sub = row_exp_sub.of<T>().get(level);
  RowScaleFn<T> scale = row_scale.of<T>().get(level);
  RowMulFn<T> mul = row_mul.of<T>().get(level);
  RowMulIntoFn<T> mul_into = row_mul_into.of<T>().get(level);
  RowDsFn<T> ds = row_ds.of<T>().get(level);
  RowDotFn<T> dot = row_dot.of<T>().get(level);
  HashRowFn hash_row = kernels::hash_row.get(level);
  KeepMaskFn<T> keep_mask = kernels::keep_mask.of<T>().get(level);
};

// One batch slice's operands: row pointers with row strides (unit column stride).
template <class T>
struct Slice {
  const T *q, *k, *v;
  int64_t qs, ks, vs;
  const void* mask;  // element (i, j) at mask + i * ml + j * mc, or null
  // K^T (d, S) and V^T (dv, S), contiguous, when the slice has enough queries to repay
  // the copy: Q K^T and dO V^T then run as NN products, for which OpenBLAS has fast
  // small-matrix kernels, while it packs both operands of an NT product (row-major NT
  // is its column-major TN) and spent a third of the L 4096 step doing so.
  const T *kt = nullptr, *vt = nullptr;
  int64_t kt_cols = 0;  // S: the row stride of kt and vt
  int64_t ml, mc;
  int64_t key_len;  // keys j >= key_len are masked for every query: never read (FlashConfig::key_len)
};

// Scores of one tile: S[r, c] = scale * q_{i0+r} . k_{j0+c}, then the masks (-inf where
// not allowed, the float mask added).
template <class T>
void score_tile(const Slice<T>& s, const FlashConfig& cfg, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                int64_t d, T* S) {
  if (s.kt)
    gemm<T>(false, false, rows, cols, d, static_cast<T>(cfg.scale), s.q + i0 * s.qs, s.qs, s.kt + j0, s.kt_cols, T(0),
            S, Bc);
  else
    gemm<T>(false, true, rows, cols, d, static_cast<T>(cfg.scale), s.q + i0 * s.qs, s.qs, s.k + j0 * s.ks, s.ks, T(0),
            S, Bc);
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    T* row = S + r * Bc;
    const int64_t i = i0 + r;
    if (s.mask) {
      for (int64_t c = 0; c < cols; ++c) {
        int64_t off = i * s.ml + (j0 + c) * s.mc;
        if (cfg.bool_mask) {
          if (!static_cast<const bool*>(s.mask)[off]) row[c] = ninf;
        } else {
          row[c] += static_cast<const T*>(s.mask)[off];
        }
      }
    }
    if (cfg.causal)
      for (int64_t c = std::max<int64_t>(0, i + cfg.causal_offset + 1 - j0); c < cols; ++c) row[c] = ninf;
  }
}

// Keys a query block [i0, i0 + rows) can see: the slice's unpadded keys, and of those
// only up to the (shifted) diagonal when causal; 0 when the whole block lies above it
// (lower_right with L > S). The tile holding the end is cut short, so no column past it
// is computed and no K/V row past it is read.
template <class T>
int64_t key_end(const Slice<T>& s, const FlashConfig& cfg, int64_t i0, int64_t rows) {
  return cfg.causal ? std::clamp<int64_t>(i0 + rows + cfg.causal_offset, 0, s.key_len) : s.key_len;
}

template <class T>
bool any_nan(const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(x[i])) return true;
  return false;
}

// Per-thread scratch, reused across the batch slices of a chunk (allocating it per
// slice cost more than the math when decoding: thousands of 1-query slices).
template <class T>
struct Scratch {
  std::vector<T> tile = std::vector<T>(Br * Bc), dp = std::vector<T>(Br * Bc), z = std::vector<T>(Br * Bc),
                 pz = std::vector<T>(Br * Bc), m = std::vector<T>(Br), l = std::vector<T>(Br), D, kt, vt;
};

// Dropout factors Z of one tile (0 or 1/(1-p)), a pure function of (seed, slice, i, j):
// a keyed 32-bit integer hash of the element's flat index (hash_row, dropout_rows.h).
template <class T>
void dropout_tile(const FlashConfig& cfg, const Rows<T>& R, uint64_t slice, int64_t L, int64_t S, int64_t i0,
                  int64_t rows, int64_t j0, int64_t cols, T* z) {
  const uint32_t k0 = static_cast<uint32_t>(cfg.seed), k1 = static_cast<uint32_t>(cfg.seed >> 32);
  const uint64_t keep = static_cast<uint64_t>((1.0 - cfg.dropout_p) * 4294967296.0);
  const T scale = static_cast<T>(1.0 / (1.0 - cfg.dropout_p));
  uint32_t h[Bc];
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t idx0 =
        (slice * static_cast<uint64_t>(L) + static_cast<uint64_t>(i0 + r)) * static_cast<uint64_t>(S) +
        static_cast<uint64_t>(j0);
    // hash_row keeps the high word fixed: split the row where the low word wraps.
    for (int64_t c0 = 0; c0 < cols;) {
      const uint64_t idx = idx0 + static_cast<uint64_t>(c0);
      const int64_t n = std::min<int64_t>(cols - c0, static_cast<int64_t>(0x100000000ull - (idx & 0xffffffffull)));
      R.hash_row(h + c0, n, static_cast<uint32_t>(idx), k0, k1 ^ static_cast<uint32_t>(idx >> 32) * 0x9e3779b9U);
      c0 += n;
    }
    R.keep_mask(z + r * Bc, h, cols, keep, scale);
  }
}

// Fills s.kt (and s.vt when `with_v`) from s.k, s.v into the scratch buffers, when the
// slice has at least kTransposeRows queries (each K/V tile is then read by several
// query blocks; a decode step's single query is cheaper with the NT product).
constexpr int64_t kTransposeRows = 16;

template <class T>
void transpose_kv(Slice<T>& s, int64_t L, int64_t S, int64_t d, int64_t dv, bool with_v, Scratch<T>& sc) {
  if (L < kTransposeRows) return;
  auto fill = [S, n = s.key_len](const T* x, int64_t xs, int64_t cols, std::vector<T>& buf) {
    buf.resize(static_cast<std::size_t>(cols * S));
    for (int64_t j = 0; j < n; ++j)  // keys past key_len are never read
      for (int64_t c = 0; c < cols; ++c) buf[c * S + j] = x[j * xs + c];
    return buf.data();
  };
  s.kt = fill(s.k, s.ks, d, sc.kt);
  if (with_v) s.vt = fill(s.v, s.vs, dv, sc.vt);
  s.kt_cols = S;
}

template <class T>
void forward_slice(Slice<T> s, const FlashConfig& cfg, int64_t L, int64_t S, int64_t d, int64_t dv, T* out, T* lse,
                   Scratch<T>& sc, uint64_t slice) {
  transpose_kv(s, L, S, d, dv, false, sc);
  const T ninf = -std::numeric_limits<T>::infinity();
  const Rows<T> R;
  std::vector<T>&tile = sc.tile, &m = sc.m, &l = sc.l;
  for (int64_t i0 = 0; i0 < L; i0 += Br) {
    const int64_t rows = std::min(Br, L - i0);
    T* acc = out + i0 * dv;  // (rows, dv), accumulated in place
    std::fill(acc, acc + rows * dv, T(0));
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
        if (alpha != T(1)) R.scale(acc + r * dv, dv, alpha);
        l[r] = alpha * l[r] + sum;
        m[r] = m_new;
      }
      if (cfg.dropout_p > 0) {  // the softmax statistics above use the weights before dropout
        dropout_tile(cfg, R, slice, L, S, i0, rows, j0, cols, sc.z.data());
        for (int64_t r = 0; r < rows; ++r) R.mul(tile.data() + r * Bc, sc.z.data() + r * Bc, cols);
      }
      gemm<T>(false, false, rows, dv, cols, T(1), tile.data(), Bc, s.v + j0 * s.vs, s.vs, T(1), acc, dv);
    }
    for (int64_t r = 0; r < rows; ++r) {  // a row with no visible key: zeros, lse -inf; NaN l: NaN
      R.scale(acc + r * dv, dv, l[r] == T(0) ? T(0) : T(1) / l[r]);
      lse[i0 + r] = l[r] == T(0) ? ninf : m[r] + std::log(l[r]);
    }
  }
}

template <class T>
void backward_slice(Slice<T> s, const FlashConfig& cfg, int64_t L, int64_t S, int64_t d, int64_t dv, const T* out,
                    const T* lse, const T* dout, T* dq, T* dk, T* dvv, Scratch<T>& sc,
                    uint64_t slice) {  // adds this query slice's dK, dV into dk, dvv
  transpose_kv(s, L, S, d, dv, true, sc);
  std::vector<T>&tile = sc.tile, &dp = sc.dp, &D = sc.D;
  const Rows<T> R;
  D.resize(static_cast<std::size_t>(L));
  for (int64_t i = 0; i < L; ++i) D[i] = R.dot(dout + i * dv, out + i * dv, dv);  // D_i = dO_i . O_i
  std::fill(dq, dq + L * d, T(0));  // dk, dvv accumulate: the caller zeroes them once per K/V head
  const T scale = static_cast<T>(cfg.scale);
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t i0 = 0; i0 < L; i0 += Br) {
    const int64_t rows = std::min(Br, L - i0);
    const int64_t kend = key_end(s, cfg, i0, rows);
    for (int64_t j0 = 0; j0 < kend; j0 += Bc) {
      const int64_t cols = std::min(Bc, kend - j0);
      score_tile(s, cfg, i0, rows, j0, cols, d, tile.data());
      for (int64_t r = 0; r < rows; ++r) {  // P = exp(S - lse): the softmax, recomputed
        T* row = tile.data() + r * Bc;
        const T z = lse[i0 + r];
        if (z == ninf)
          std::fill(row, row + cols, T(0));  // a row with no visible key
        else
          R.exp_sub(row, cols, z);  // exp(-inf - z) = 0 where masked
      }
      // With dropout Z: O = (P Z) V, so dV_j += (P Z)^T dO_i and dP = Z (dO_i V_j^T); the
      // identity D_i = sum_j P_ij dP_ij = dO_i . O_i still holds.
      const bool drop = cfg.dropout_p > 0;
      if (drop) {
        dropout_tile(cfg, R, slice, L, S, i0, rows, j0, cols, sc.z.data());
        for (int64_t r = 0; r < rows; ++r)
          R.mul_into(sc.pz.data() + r * Bc, tile.data() + r * Bc, sc.z.data() + r * Bc, cols);
      }
      // dV_j += (P Z)^T dO_i
      gemm<T>(true, false, cols, dv, rows, T(1), drop ? sc.pz.data() : tile.data(), Bc, dout + i0 * dv, dv, T(1),
              dvv + j0 * dv, dv);
      // dP = dO_i V_j^T (times Z with dropout)
      if (s.vt)
        gemm<T>(false, false, rows, cols, dv, T(1), dout + i0 * dv, dv, s.vt + j0, S, T(0), dp.data(), Bc);
      else
        gemm<T>(false, true, rows, cols, dv, T(1), dout + i0 * dv, dv, s.v + j0 * s.vs, s.vs, T(0), dp.data(), Bc);
      if (drop)
        for (int64_t r = 0; r < rows; ++r) R.mul(dp.data() + r * Bc, sc.z.data() + r * Bc, cols);
      for (int64_t r = 0; r < rows; ++r)  // dS = P * (dP - D_i), into dp
        R.ds(dp.data() + r * Bc, tile.data() + r * Bc, cols, D[i0 + r]);
      // dQ_i += scale dS K_j;  dK_j += scale dS^T Q_i
      gemm<T>(false, false, rows, d, cols, scale, dp.data(), Bc, s.k + j0 * s.ks, s.ks, T(1), dq + i0 * d, d);
      gemm<T>(true, false, cols, d, rows, scale, dp.data(), Bc, s.q + i0 * s.qs, s.qs, T(1), dk + j0 * d, d);
    }
  }
}

// Slices per thread so that a part holds at least kParallelGrain multiply-adds (a forward
// slice costs about L * S * (d + dv), a backward task `times` that): a decode step's
// slices (L = 1, S <= context) are each well under a microsecond, and handing 4 of them
// to a second thread cost more than it saved (workload 8 decoded slower at 2 threads
// than at 1).
int64_t slice_grain(int64_t L, int64_t S, int64_t d, int64_t dv, int64_t times = 1) {
  const int64_t work = std::max<int64_t>(1, L * S * (d + dv) * times);
  return std::max<int64_t>(1, kParallelGrain / work);
}

// Batch slice b's element offset for a tensor with batch strides `st` over `batch`.
int64_t batch_offset(int64_t b, const Shape& batch, const Strides& st) {
  int64_t off = 0;
  for (int64_t i = batch.size() - 1; i >= 0; --i) {
    off += (b % batch[i]) * st[i];
    b /= batch[i];
  }
  return off;
}

Strides batch_part(const Tensor& t, int64_t nbatch) {
  Strides st;
  for (int64_t i = 0; i < nbatch; ++i) st.push_back(t.strides()[i]);
  return st;
}

// Query batch slice b (over q's batch dims) -> its key/value slice: the same index
// without grouping; with group > 1, query head hq of h uses key/value head hq / group.
struct Heads {
  int64_t h = 1, group = 1;
  int64_t kv_of(int64_t b) const { return group == 1 ? b : (b / h) * (h / group) + (b % h) / group; }
  // The query slices that share key/value slice kb: first(kb) + r for r < group.
  int64_t first_q(int64_t kb) const { return group == 1 ? kb : (kb / (h / group)) * h + (kb % (h / group)) * group; }
};

template <class T>
Slice<T> slice_at(int64_t b, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Shape& batch,
                  const Shape& kv_batch, const Heads& heads, const Strides& mst, const FlashConfig& cfg) {
  const int64_t nb = batch.size(), kb = heads.kv_of(b);
  Slice<T> s{};
  s.q = q.data<T>() + batch_offset(b, batch, batch_part(q, nb));
  s.k = k.data<T>() + batch_offset(kb, kv_batch, batch_part(k, nb));
  s.v = v.data<T>() + batch_offset(kb, kv_batch, batch_part(v, nb));
  s.qs = q.strides()[nb], s.ks = k.strides()[nb], s.vs = v.strides()[nb];
  s.key_len = cfg.key_len.defined() ? cfg.key_len.data<int64_t>()[b] : k.size(-2);
  if (mask.defined()) {
    Strides mb;
    for (int64_t i = 0; i < nb; ++i) mb.push_back(mst[i]);
    int64_t off = batch_offset(b, batch, mb);
    s.mask = static_cast<const char*>(mask.raw_data()) + off * static_cast<int64_t>(itemsize(mask.dtype()));
    s.ml = mst[nb], s.mc = mst[nb + 1];
  }
  return s;
}

Shape batch_of(const Tensor& t) { return Shape(std::vector<int64_t>(t.shape().begin(), t.shape().end() - 2)); }

Heads heads_of(const Tensor& q, const FlashConfig& cfg) {
  Heads hd;
  hd.group = cfg.group;
  if (cfg.group > 1) hd.h = q.size(-3);
  return hd;
}

// Last dim contiguous (BLAS needs a unit column stride); a copy only when it is not.
Tensor unit_rows(const Tensor& t) { return t.strides()[t.dim() - 1] == 1 || t.size(-1) == 1 ? t : contiguous(t); }

}  // namespace

FlashForward flash_attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask,
                                     const FlashConfig& cfg) {
  if (is_half(q_in)) {  // f32 scores and softmax statistics (lse stays f32), out rounded once
    FlashForward r = flash_attention_forward(as_f32(q_in), as_f32(k_in), as_f32(v_in), as_f32(mask), cfg);
    r.out = to_half(r.out, q_in.dtype());
    return r;
  }
  Tensor q = unit_rows(q_in), k = unit_rows(k_in), v = unit_rows(v_in);
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape out_shape = batch, lse_shape = batch;
  out_shape.push_back(L), out_shape.push_back(dv), lse_shape.push_back(L);
  FlashForward r{empty(out_shape, q.dtype()), empty(lse_shape, q.dtype())};
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  const int64_t n = numel(batch);
  dispatch_float(q.dtype(), "flash_attention", [&]<class T>() {
    T* out = r.out.data<T>();
    T* lse = r.lse.data<T>();
    detail::parallel_for(n, slice_grain(L, S, d, dv), [&](int64_t b0, int64_t b1) {
      Scratch<T> sc;
      for (int64_t b = b0; b < b1; ++b)
        forward_slice(slice_at<T>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg), cfg, L, S, d, dv,
                      out + b * L * dv, lse + b * L, sc, static_cast<uint64_t>(b));
    });
  });
  return r;
}

FlashGrads flash_attention_backward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask,
                                    const FlashConfig& cfg, const Tensor& out, const Tensor& lse,
                                    const Tensor& dout_in) {
  if (is_half(q_in)) {
    FlashGrads r = flash_attention_backward(as_f32(q_in), as_f32(k_in), as_f32(v_in), as_f32(mask), cfg, as_f32(out),
                                            as_f32(lse), as_f32(dout_in));
    return {to_half(r.dq, q_in.dtype()), to_half(r.dk, k_in.dtype()), to_half(r.dv, v_in.dtype())};
  }
  Tensor q = unit_rows(q_in), k = unit_rows(k_in), v = unit_rows(v_in), dout = contiguous(dout_in);
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  auto shaped = [&](Shape s, int64_t a, int64_t b) {
    s.push_back(a), s.push_back(b);
    return empty(s, q.dtype());
  };
  FlashGrads g{shaped(batch, L, d), shaped(kv_batch, S, d), shaped(kv_batch, S, dv)};
  // One task per key/value slice: it owns that slice's dK, dV and sums them over the
  // `group` query slices that share it (no two threads write the same dK).
  const int64_t n_kv = numel(kv_batch);
  dispatch_float(q.dtype(), "flash_attention_backward", [&]<class T>() {
    const T* po = out.data<T>();
    const T* pl = lse.data<T>();
    const T* pd = dout.data<T>();
    T *gq = g.dq.data<T>(), *gk = g.dk.data<T>(), *gv = g.dv.data<T>();
    detail::parallel_for(n_kv, slice_grain(L, S, d, dv, 2 * heads.group), [&](int64_t k0, int64_t k1) {
      Scratch<T> sc;
      for (int64_t kb = k0; kb < k1; ++kb) {
        T *dk = gk + kb * S * d, *dvv = gv + kb * S * dv;
        std::fill(dk, dk + S * d, T(0));
        std::fill(dvv, dvv + S * dv, T(0));
        for (int64_t r = 0; r < heads.group; ++r) {
          const int64_t b = heads.first_q(kb) + r;
          backward_slice(slice_at<T>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg), cfg, L, S, d, dv,
                         po + b * L * dv, pl + b * L, pd + b * L * dv, gq + b * L * d, dk, dvv, sc,
                         static_cast<uint64_t>(b));
        }
      }
    });
  });
  return g;
}

}  // namespace ag::kernels
