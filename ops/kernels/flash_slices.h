#pragma once
// The per-slice machinery shared by the fused attention's forward (flash_attention.cpp)
// and backward (flash_attention_backward.cpp): tiles, scratch, dropout factors, and how
// a flattened batch slice finds its Q, K, V rows and mask. Internal header.
//
// Legend (per batch slice): L queries, S keys, d head dim, dv value dim;
// Br x Bc is one tile of scores.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/flash_attention.h"
#include "gemm.h"
#include "kernels/attention_rows.h"
#include "kernels/dropout_rows.h"
#include "kernels/strided.h"
#include "attograd/detail/parallel.h"
#include "attograd/mem_overlap.h"
#include "kernels/half.h"

namespace ag::kernels::flash {

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
// slice cost more than the math when decoding: thousands of 1-query slices). Tiles
// have min(L, Br) rows, and only the kernels that use dp (the backward) and z, pz
// (dropout) get them: a decode step's single query needs 64 scores, and zeroing four
// 64 x 64 tiles per attention call was 2% of workload 8's step.
template <class T>
struct Scratch {
  Scratch(int64_t L, bool backward, bool dropout) {
    const auto n = static_cast<std::size_t>(std::min(L, Br) * Bc);
    tile.resize(n);
    if (backward) dp.resize(n);
    if (dropout) z.resize(n);
    if (backward && dropout) pz.resize(n);
  }
  std::vector<T> tile, dp, z, pz, m = std::vector<T>(Br), l = std::vector<T>(Br), D, kt, vt;
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

// Slices per thread so that a part holds at least kParallelGrain multiply-adds (a forward
// slice costs about L * S * (d + dv), a backward task `times` that): a decode step's
// slices (L = 1, S <= context) are each well under a microsecond, and handing 4 of them
// to a second thread cost more than it saved (workload 8 decoded slower at 2 threads
// than at 1).
inline int64_t slice_grain(int64_t L, int64_t S, int64_t d, int64_t dv, int64_t times = 1) {
  const int64_t work = std::max<int64_t>(1, L * S * (d + dv) * times);
  return std::max<int64_t>(1, kParallelGrain / work);
}

// Batch slice b's element offset for a tensor with batch strides `st` over `batch`.
inline int64_t batch_offset(int64_t b, const Shape& batch, const Strides& st) {
  int64_t off = 0;
  for (int64_t i = batch.size() - 1; i >= 0; --i) {
    off += (b % batch[i]) * st[i];
    b /= batch[i];
  }
  return off;
}

inline Strides batch_part(const Tensor& t, int64_t nbatch) {
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
  // T is the element type (float, double), or uint16_t for a 16-bit slice's raw rows.
  s.q = static_cast<const T*>(q.raw_data()) + batch_offset(b, batch, batch_part(q, nb));
  s.k = static_cast<const T*>(k.raw_data()) + batch_offset(kb, kv_batch, batch_part(k, nb));
  s.v = static_cast<const T*>(v.raw_data()) + batch_offset(kb, kv_batch, batch_part(v, nb));
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

inline Shape batch_of(const Tensor& t) { return Shape(std::vector<int64_t>(t.shape().begin(), t.shape().end() - 2)); }

inline Heads heads_of(const Tensor& q, const FlashConfig& cfg) {
  Heads hd;
  hd.group = cfg.group;
  if (cfg.group > 1) hd.h = q.size(-3);
  return hd;
}

// Rows BLAS can take as an operand or a result: a unit column stride and a row stride of
// at least a row; a copy otherwise. q, k, v, O and dO all pass through it: OpenBLAS
// rejects a leading dimension below the row length ("parameter 10 had an illegal value")
// and leaves its result unwritten, which q expanded along L (row stride 0) or dO of sum()
// would give.
inline Tensor blas_rows(const Tensor& t) {
  const int64_t n = t.dim();
  const bool ok = (t.strides()[n - 1] == 1 || t.size(-1) == 1) && (t.size(-2) == 1 || t.strides()[n - 2] >= t.size(-1));
  return ok ? t : contiguous(t);
}

// An empty tensor of `shape` whose dims are laid out in the order of `like`'s strides, as
// PyTorch's empty_like (its CPU flash attention allocates its output and gradients so):
// q is usually a (B, H, L, d) view of a (B, L, H, d) projection, and an output or
// gradient laid out the same way merges its heads back with a view instead of a copy.
// Contiguous when `like` is not dense (expanded or overlapping), of another rank, or its
// last dim is not the innermost.
inline Tensor empty_in_layout_of(const Tensor& like, const Shape& shape, DType dt) {
  const int64_t n = like.dim();
  if (static_cast<int64_t>(shape.size()) != n) return empty(shape, dt);
  std::vector<int64_t> order(static_cast<std::size_t>(n));  // outermost first
  for (int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return like.strides()[a] > like.strides()[b]; });
  // the kernels write unit-stride rows
  if (order.back() != n - 1 || !is_non_overlapping_and_dense(like)) return empty(shape, dt);
  Shape laid_out;  // shape's sizes, outermost first: empty() checks their product
  for (int64_t i : order) laid_out.push_back(shape[static_cast<std::size_t>(i)]);
  Tensor buf = empty(laid_out, dt);
  Strides st(std::vector<int64_t>(static_cast<std::size_t>(n), 0));
  for (int64_t k = 0; k < n; ++k) st[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = buf.strides()[k];
  return Tensor(buf.storage(), shape, st, 0, dt);
}

// Slice b's first row in t, a tensor with batch dims `batch` before its (rows, cols).
template <class T>
T* slice_rows(const Tensor& t, int64_t b, const Shape& batch) {
  return static_cast<T*>(t.raw_data()) + batch_offset(b, batch, batch_part(t, static_cast<int64_t>(batch.size())));
}
// The stride between t's rows (dim -2).
inline int64_t row_stride(const Tensor& t) { return t.strides()[t.dim() - 2]; }

}  // namespace ag::kernels::flash
