// The fused attention's backward (design notes in FLASH_ATTENTION.md): each score tile
// recomputed from the forward's logsumexp, then dV, dP, dS, dQ and dK tile by tile.
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

// Rows of a matrix: row i at p + i * ld (out, dO and the gradients keep their tensors'
// layouts: a (B, H, L, d) view of (B, L, H, d) rows is read and written in place).
template <class T>
struct Mat {
  T* p;
  int64_t ld;
  T* row(int64_t i) const { return p + i * ld; }
};

template <class T>
void backward_slice(Slice<T> s, const FlashConfig& cfg, int64_t L, int64_t S, int64_t d, int64_t dv, Mat<const T> out,
                    const T* lse, Mat<const T> dout, Mat<T> dq, Mat<T> dk, Mat<T> dvv, Scratch<T>& sc,
                    uint64_t slice) {  // adds this query slice's dK, dV into dk, dvv
  transpose_kv(s, L, S, d, dv, true, sc);
  std::vector<T>&tile = sc.tile, &dp = sc.dp, &D = sc.D;
  const Rows<T> R;
  D.resize(static_cast<std::size_t>(L));
  for (int64_t i = 0; i < L; ++i) D[i] = R.dot(dout.row(i), out.row(i), dv);  // D_i = dO_i . O_i
  for (int64_t i = 0; i < L; ++i)  // dk, dvv accumulate: the caller zeroes them once per K/V head
    std::fill(dq.row(i), dq.row(i) + d, T(0));
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
      gemm<T>(true, false, cols, dv, rows, T(1), drop ? sc.pz.data() : tile.data(), Bc, dout.row(i0), dout.ld, T(1),
              dvv.row(j0), dvv.ld);
      // dP = dO_i V_j^T (times Z with dropout)
      if (s.vt)
        gemm<T>(false, false, rows, cols, dv, T(1), dout.row(i0), dout.ld, s.vt + j0, S, T(0), dp.data(), Bc);
      else
        gemm<T>(false, true, rows, cols, dv, T(1), dout.row(i0), dout.ld, s.v + j0 * s.vs, s.vs, T(0), dp.data(), Bc);
      if (drop)
        for (int64_t r = 0; r < rows; ++r) R.mul(dp.data() + r * Bc, sc.z.data() + r * Bc, cols);
      for (int64_t r = 0; r < rows; ++r)  // dS = P * (dP - D_i), into dp
        R.ds(dp.data() + r * Bc, tile.data() + r * Bc, cols, D[i0 + r]);
      // dQ_i += scale dS K_j;  dK_j += scale dS^T Q_i
      gemm<T>(false, false, rows, d, cols, scale, dp.data(), Bc, s.k + j0 * s.ks, s.ks, T(1), dq.row(i0), dq.ld);
      gemm<T>(true, false, cols, d, rows, scale, dp.data(), Bc, s.q + i0 * s.qs, s.qs, T(1), dk.row(j0), dk.ld);
    }
  }
}

// q, k, v all bf16 or all f16 (out and dout in that dtype, lse f32): each task widens
// its K/V slice and each query slice's Q, O and dO rows into its own f32 scratch, runs the
// f32 slice above, and rounds dQ per query slice and dK, dV once their group is summed.
// The f32 kernel sees the values it would see if the whole tensors were widened first,
// and each gradient is rounded once, as before, so the bits are the same (checked in
// test_flash_attention); but a training step's backward no longer makes five f32 copies
// of its inputs and three f32 gradients per attention layer.
FlashGrads backward_16bit(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask_in,
                          const FlashConfig& cfg, const Tensor& out_in, const Tensor& lse_in, const Tensor& dout_in) {
  const DType dt = q_in.dtype();
  Tensor q = blas_rows(q_in), k = blas_rows(k_in), v = blas_rows(v_in), mask = as_f32(mask_in);
  Tensor out = blas_rows(out_in), dout = blas_rows(dout_in), lse = contiguous(as_f32(lse_in));
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  const Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  auto shaped = [&](const Tensor& like, Shape s, int64_t a, int64_t b) {
    s.push_back(a), s.push_back(b);
    return empty_in_layout_of(like, s, dt);
  };
  FlashGrads g{shaped(q, batch, L, d), shaped(k, kv_batch, S, d), shaped(v, kv_batch, S, dv)};
  const auto widen = widen_row(dt);
  const auto round = round_row(dt);
  const int64_t ldo = row_stride(out), ldd = row_stride(dout), ldq = row_stride(g.dq), ldk = row_stride(g.dk),
                ldv = row_stride(g.dv);
  const float* pl = lse.data<float>();
  detail::parallel_for(numel(kv_batch), slice_grain(L, S, d, dv, 2 * heads.group), [&](int64_t k0, int64_t k1) {
    Scratch<float> sc(L, true, cfg.dropout_p > 0);
    std::vector<float> qf(L * d), kf(S * d), vf(S * dv), of(L * dv), dof(L * dv), dqf(L * d), dkf(S * d), dvf(S * dv);
    for (int64_t kb = k0; kb < k1; ++kb) {
      std::fill(dkf.begin(), dkf.end(), 0.0f);
      std::fill(dvf.begin(), dvf.end(), 0.0f);
      for (int64_t r = 0; r < heads.group; ++r) {
        const int64_t b = heads.first_q(kb) + r;
        const Slice<uint16_t> h = slice_at<uint16_t>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg);
        if (r == 0)  // the group's shared K/V slice, every row (as widening the whole tensors did)
          for (int64_t j = 0; j < S; ++j) {
            widen(kf.data() + j * d, h.k + j * h.ks, d);
            widen(vf.data() + j * dv, h.v + j * h.vs, dv);
          }
        for (int64_t i = 0; i < L; ++i) widen(qf.data() + i * d, h.q + i * h.qs, d);
        const uint16_t *po = slice_rows<const uint16_t>(out, b, batch),
                       *pd = slice_rows<const uint16_t>(dout, b, batch);
        for (int64_t i = 0; i < L; ++i) {
          widen(of.data() + i * dv, po + i * ldo, dv);
          widen(dof.data() + i * dv, pd + i * ldd, dv);
        }
        Slice<float> s{};
        s.q = qf.data(), s.k = kf.data(), s.v = vf.data(), s.qs = d, s.ks = d, s.vs = dv;
        s.mask = h.mask, s.ml = h.ml, s.mc = h.mc, s.key_len = h.key_len;
        backward_slice<float>(s, cfg, L, S, d, dv, {of.data(), dv}, pl + b * L, {dof.data(), dv}, {dqf.data(), d},
                              {dkf.data(), d}, {dvf.data(), dv}, sc, static_cast<uint64_t>(b));
        uint16_t* gq = slice_rows<uint16_t>(g.dq, b, batch);
        for (int64_t i = 0; i < L; ++i) round(gq + i * ldq, dqf.data() + i * d, d);
      }
      uint16_t *gk = slice_rows<uint16_t>(g.dk, kb, kv_batch), *gv = slice_rows<uint16_t>(g.dv, kb, kv_batch);
      for (int64_t j = 0; j < S; ++j) {
        round(gk + j * ldk, dkf.data() + j * d, d);
        round(gv + j * ldv, dvf.data() + j * dv, dv);
      }
    }
  });
  return g;
}

}  // namespace

FlashGrads flash_attention_backward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask,
                                    const FlashConfig& cfg, const Tensor& out_in, const Tensor& lse,
                                    const Tensor& dout_in) {
  if (is_half(q_in)) {
    if (k_in.dtype() == q_in.dtype() && v_in.dtype() == q_in.dtype() && out_in.dtype() == q_in.dtype() &&
        dout_in.dtype() == q_in.dtype())
      return backward_16bit(q_in, k_in, v_in, mask, cfg, out_in, lse, dout_in);
    FlashGrads r = flash_attention_backward(as_f32(q_in), as_f32(k_in), as_f32(v_in), as_f32(mask), cfg, as_f32(out_in),
                                            as_f32(lse), as_f32(dout_in));
    return {to_half(r.dq, q_in.dtype()), to_half(r.dk, k_in.dtype()), to_half(r.dv, v_in.dtype())};
  }
  Tensor q = blas_rows(q_in), k = blas_rows(k_in), v = blas_rows(v_in), out = blas_rows(out_in),
         dout = blas_rows(dout_in);
  const int64_t L = q.size(-2), S = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Shape batch = batch_of(q), kv_batch = batch_of(k);
  const Heads heads = heads_of(q, cfg);
  Shape full = batch;
  full.push_back(L), full.push_back(S);
  Strides mst = mask.defined() ? broadcast_strides(mask, full) : Strides{};
  auto shaped = [&](const Tensor& like, Shape s, int64_t a, int64_t b) {
    s.push_back(a), s.push_back(b);
    return empty_in_layout_of(like, s, q.dtype());
  };
  FlashGrads g{shaped(q, batch, L, d), shaped(k, kv_batch, S, d), shaped(v, kv_batch, S, dv)};
  // One task per key/value slice: it owns that slice's dK, dV and sums them over the
  // `group` query slices that share it (no two threads write the same dK).
  const int64_t n_kv = numel(kv_batch);
  dispatch_float(q.dtype(), "flash_attention_backward", [&]<class T>() {
    const T* pl = lse.data<T>();
    const int64_t ldo = row_stride(out), ldd = row_stride(dout), ldq = row_stride(g.dq), ldk = row_stride(g.dk),
                  ldv = row_stride(g.dv);
    detail::parallel_for(n_kv, slice_grain(L, S, d, dv, 2 * heads.group), [&](int64_t k0, int64_t k1) {
      Scratch<T> sc(L, true, cfg.dropout_p > 0);
      for (int64_t kb = k0; kb < k1; ++kb) {
        const Mat<T> dk{slice_rows<T>(g.dk, kb, kv_batch), ldk}, dvv{slice_rows<T>(g.dv, kb, kv_batch), ldv};
        for (int64_t j = 0; j < S; ++j) {
          std::fill(dk.row(j), dk.row(j) + d, T(0));
          std::fill(dvv.row(j), dvv.row(j) + dv, T(0));
        }
        for (int64_t r = 0; r < heads.group; ++r) {
          const int64_t b = heads.first_q(kb) + r;
          backward_slice<T>(slice_at<T>(b, q, k, v, mask, batch, kv_batch, heads, mst, cfg), cfg, L, S, d, dv,
                            {slice_rows<const T>(out, b, batch), ldo}, pl + b * L,
                            {slice_rows<const T>(dout, b, batch), ldd}, {slice_rows<T>(g.dq, b, batch), ldq}, dk, dvv,
                            sc, static_cast<uint64_t>(b));
        }
      }
    });
  });
  return g;
}

}  // namespace ag::kernels
