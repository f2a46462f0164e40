// The fused gate rows of rnn_gates.h for one level (isa.h: compiled once per level, Arch
// its xsimd arch). Every element, body or tail, takes the vector path: a row's last
// partial batch is staged through a zero-padded buffer, so a value computes the same
// wherever it sits in the row.
#include "isa.h"

#include <algorithm>
#include <cstdint>

#include "kernels/rnn_gates.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct RnnGates {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  // m (<= W) elements at p: a whole batch, or a padded copy.
  static V load(const T* p, int64_t m) {
    if (m == W) return V::load_unaligned(p);
    alignas(64) T buf[W] = {};
    std::copy(p, p + m, buf);
    return V::load_aligned(buf);
  }
  static void store(const V& v, T* p, int64_t m) {
    if (m == W) return v.store_unaligned(p);
    alignas(64) T buf[W];
    v.store_aligned(buf);
    std::copy(buf, buf + m, p);
  }

  static V sigmoid(const V& x) { return V(T(1)) / (V(T(1)) + exp_guarded<A>(-x)); }
  // xsimd's tanh on +-30 at most (tanh is +-1 there in double; xsimd's double exp is
  // not defined for inf lanes on SSE2 / AVX2), NaN passed through.
  static V tanh(const V& x) {
    const V t = xsimd::tanh(xsimd::min(xsimd::max(x, V(T(-30))), V(T(30))));
    return xsimd::select(xsimd::isnan(x), x, t);
  }

  // f(j, m) for each batch of each row: j the column, m the batch's width (W or the tail).
  template <class F>
  static void columns(int64_t H, F f) {
    for (int64_t j = 0; j < H; j += W) f(j, std::min(W, H - j));
  }

  static void lstm(T* acts, T* c, T* tanh_c, T* r, int64_t n, int64_t H) {
    for (int64_t b = 0; b < n; ++b) {
      T *a = acts + b * 4 * H, *cb = c + b * H, *tb = tanh_c + b * H, *rb = r + b * H;
      columns(H, [&](int64_t j, int64_t m) {
        const V i = sigmoid(load(a + j, m)), f = sigmoid(load(a + H + j, m)), g = tanh(load(a + 2 * H + j, m)),
                o = sigmoid(load(a + 3 * H + j, m));
        const V cy = f * load(cb + j, m) + i * g, tc = tanh(cy);  // PyTorch: (f * cx) + (i * g)
        store(i, a + j, m), store(f, a + H + j, m), store(g, a + 2 * H + j, m), store(o, a + 3 * H + j, m);
        store(cy, cb + j, m), store(tc, tb + j, m), store(o * tc, rb + j, m);
      });
    }
  }

  static void lstm_backward(const T* acts, const T* tanh_c, const T* c_prev, const T* dr, T* dc, T* dgates, int64_t n,
                            int64_t H) {
    const V one(T(1));
    for (int64_t b = 0; b < n; ++b) {
      const T *a = acts + b * 4 * H, *tb = tanh_c + b * H, *cp = c_prev + b * H, *drb = dr + b * H;
      T *dcb = dc + b * H, *dg = dgates + b * 4 * H;
      columns(H, [&](int64_t j, int64_t m) {
        const V i = load(a + j, m), f = load(a + H + j, m), g = load(a + 2 * H + j, m), o = load(a + 3 * H + j, m);
        const V tc = load(tb + j, m), d = load(drb + j, m);
        const V dcy = load(dcb + j, m) + d * o * (one - tc * tc);
        store(dcy * g * i * (one - i), dg + j, m);
        store(dcy * load(cp + j, m) * f * (one - f), dg + H + j, m);
        store(dcy * i * (one - g * g), dg + 2 * H + j, m);
        store(d * tc * o * (one - o), dg + 3 * H + j, m);
        store(dcy * f, dcb + j, m);
      });
    }
  }

  static void gru(const T* xg, const T* hg, const T* h_prev, T* acts, T* h, int64_t n, int64_t H) {
    for (int64_t b = 0; b < n; ++b) {
      const T *x = xg + b * 3 * H, *hh = hg + b * 3 * H, *hp = h_prev + b * H;
      T *a = acts + b * 3 * H, *hb = h + b * H;
      columns(H, [&](int64_t j, int64_t m) {
        const V r = sigmoid(load(hh + j, m) + load(x + j, m));
        const V z = sigmoid(load(hh + H + j, m) + load(x + H + j, m));
        const V nn = tanh(load(x + 2 * H + j, m) + load(hh + 2 * H + j, m) * r);
        store(r, a + j, m), store(z, a + H + j, m), store(nn, a + 2 * H + j, m);
        store((load(hp + j, m) - nn) * z + nn, hb + j, m);  // PyTorch: (hx - n) * z + n
      });
    }
  }

  static void gru_backward(const T* acts, const T* hg, const T* h_prev, const T* dh, T* dxg, T* dhg, T* dh_prev,
                           int64_t n, int64_t H) {
    const V one(T(1));
    for (int64_t b = 0; b < n; ++b) {
      const T *a = acts + b * 3 * H, *hh = hg + b * 3 * H, *hp = h_prev + b * H, *d = dh + b * H;
      T *dx = dxg + b * 3 * H, *dhh = dhg + b * 3 * H, *dp = dh_prev + b * H;
      columns(H, [&](int64_t j, int64_t m) {
        const V r = load(a + j, m), z = load(a + H + j, m), nn = load(a + 2 * H + j, m), g = load(d + j, m);
        const V dan = g * (one - z) * (one - nn * nn);
        const V dar = dan * load(hh + 2 * H + j, m) * r * (one - r);
        const V daz = g * (load(hp + j, m) - nn) * z * (one - z);
        store(dar, dx + j, m), store(daz, dx + H + j, m), store(dan, dx + 2 * H + j, m);
        store(dar, dhh + j, m), store(daz, dhh + H + j, m), store(dan * r, dhh + 2 * H + j, m);
        store(g * z, dp + j, m);
      });
    }
  }

  static void rnn(T* a, int64_t count, bool relu) {
    columns(count, [&](int64_t j, int64_t m) {
      const V x = load(a + j, m);
      store(relu ? xsimd::select(x < V(T(0)), V(T(0)), x) : tanh(x), a + j, m);
    });
  }

  static void rnn_backward(const T* h, const T* dh, T* da, int64_t count, bool relu) {
    columns(count, [&](int64_t j, int64_t m) {
      const V y = load(h + j, m), g = load(dh + j, m);
      store(relu ? xsimd::select(y > V(T(0)), g, V(T(0))) : g * (V(T(1)) - y * y), da + j, m);
    });
  }
};

}  // namespace

AG_ISA_KERNEL(lstm_cell_rows_f32, &RnnGates<float, Arch>::lstm);
AG_ISA_KERNEL(lstm_cell_rows_f64, &RnnGates<double, Arch>::lstm);
AG_ISA_KERNEL(lstm_cell_backward_rows_f32, &RnnGates<float, Arch>::lstm_backward);
AG_ISA_KERNEL(lstm_cell_backward_rows_f64, &RnnGates<double, Arch>::lstm_backward);
AG_ISA_KERNEL(gru_cell_rows_f32, &RnnGates<float, Arch>::gru);
AG_ISA_KERNEL(gru_cell_rows_f64, &RnnGates<double, Arch>::gru);
AG_ISA_KERNEL(gru_cell_backward_rows_f32, &RnnGates<float, Arch>::gru_backward);
AG_ISA_KERNEL(gru_cell_backward_rows_f64, &RnnGates<double, Arch>::gru_backward);
AG_ISA_KERNEL(rnn_cell_rows_f32, &RnnGates<float, Arch>::rnn);
AG_ISA_KERNEL(rnn_cell_rows_f64, &RnnGates<double, Arch>::rnn);
AG_ISA_KERNEL(rnn_cell_backward_rows_f32, &RnnGates<float, Arch>::rnn_backward);
AG_ISA_KERNEL(rnn_cell_backward_rows_f64, &RnnGates<double, Arch>::rnn_backward);

}  // namespace ag::kernels
