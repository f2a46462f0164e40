// The recurrence of a recurrent layer (kernels/rnn.h). Per step: the active rows' gate
// pre-activations are the step's slice of the input projection (one GEMM for all steps,
// made by the op) plus b_hh plus one GEMM h W_hh^T; then one fused pass
// (kernels/rnn_gates.h) applies the nonlinearities and updates the states. The backward
// walks the steps in the opposite order with one GEMM per step (dh_prev = dgates W_hh);
// the weights' gradients are one GEMM each over all steps at the end.
#include "kernels/rnn.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "attograd/detail/parallel.h"
#include "gemm.h"
#include "kernels/gemv.h"
#include "kernels/rnn_gates.h"
#include "kernels/strided.h"

namespace ag::kernels {
namespace {

// Step offsets into the packed rows, and the order a direction visits the steps in.
struct Steps {
  std::vector<int64_t> size, offset, order;
  Steps(const std::vector<int64_t>& bs, bool reverse) : size(bs), offset(bs.size()), order(bs.size()) {
    int64_t o = 0;
    for (size_t t = 0; t < bs.size(); ++t) offset[t] = o, o += bs[t];
    for (size_t t = 0; t < bs.size(); ++t) order[t] = reverse ? int64_t(bs.size() - 1 - t) : int64_t(t);
  }
};

// f(r0, r1) over rows [0, n) of `width` elements each, split over the pool when the rows
// hold enough elements to pay for the hand-off.
void rows_parallel(int64_t n, int64_t width, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1));
  detail::parallel_for(n, grain, f);
}

template <class T>
void copy_rows(T* dst, const T* src, int64_t rows, int64_t width) {
  if (rows > 0) std::memcpy(dst, src, sizeof(T) * rows * width);
}

// rows (n, width) of dst = src rows + bias (bias may be null).
template <class T>
void rows_plus_bias(T* dst, const T* src, const T* bias, int64_t n, int64_t width) {
  if (!bias) return copy_rows(dst, src, n, width);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < width; ++j) dst[i * width + j] = src[i * width + j] + bias[j];
}

// out (n, GH) = add (n, GH) rows [+ bias] + hp (n, P) W^T, W (GH, P): the step's hidden
// product. A few f32 rows (decoding, a batch of one) take gemv.h's rows with the columns
// split over the threads, as matmul's decode path: sgemm runs them on one thread and
// packs W every call. add may be null (then out is the product [+ bias]).
template <class T>
void hidden_product(T* out, const T* add, const T* bias, const T* hp, const T* w, int64_t n, int64_t GH, int64_t P) {
  if constexpr (std::is_same_v<T, float>) {
    if (n <= kGemvMaxRows) {
      const auto rows = f32_gemv_rows.get();
      detail::parallel_for(GH, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(P, 1)),
                           [&](int64_t c0, int64_t c1) {
                             rows(out, GH, hp, P, w, P, n, c0, c1);
                             for (int64_t i = 0; i < n; ++i)
                               for (int64_t j = c0; j < c1; ++j) {
                                 T v = out[i * GH + j];
                                 if (bias) v += bias[j];
                                 out[i * GH + j] = add ? add[i * GH + j] + v : v;
                               }
                           });
      return;
    }
  }
  if (add) {
    rows_plus_bias(out, add, bias, n, GH);
  } else if (bias) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * GH, bias, sizeof(T) * GH);
  }
  gemm<T>(false, true, n, GH, P, T(1), hp, P, w, P, (add || bias) ? T(1) : T(0), out, GH);
}

template <class T>
RnnForward forward(RnnKind kind, const Tensor& xproj_in, const std::vector<int64_t>& bs, const Tensor& w_hh_in,
                   const Tensor& b_hh_in, const Tensor& h0, const Tensor& c0, const Tensor& w_hr_in, bool reverse,
                   bool save) {
  const Tensor x = contiguous(xproj_in), w_hh = contiguous(w_hh_in);
  const Tensor b_hh = b_hh_in.defined() ? contiguous(b_hh_in) : Tensor{};
  const Tensor w_hr = w_hr_in.defined() ? contiguous(w_hr_in) : Tensor{};
  const bool lstm = kind == RnnKind::lstm, gru = kind == RnnKind::gru, proj = w_hr.defined();
  const int64_t N = x.size(0), GH = x.size(1), G = rnn_gates(kind), H = GH / G, P = w_hh.size(1), B = h0.size(0);
  const DType dt = x.dtype();
  const Steps steps(bs, reverse);

  RnnForward fw;
  fw.y = empty(Shape{N * P + B * P + (lstm ? B * H : 0)}, dt, "rnn");
  T* out = fw.y.data<T>();
  T* hs = out + N * P;  // the state buffers are h_n's and c_n's own slots
  T* cs = hs + B * P;
  copy_rows(hs, contiguous(h0).data<T>(), B, P);
  if (lstm) copy_rows(cs, contiguous(c0).data<T>(), B, H);
  const int64_t rows = save ? N : B;  // per-step buffers: all steps' when saved, one step's otherwise
  fw.hprev = empty(Shape{save ? N : 0, P}, dt, "rnn");
  if (lstm || gru) fw.acts = empty(Shape{rows, GH}, dt, "rnn");
  if (lstm) fw.cprev = empty(Shape{save ? N : 0, H}, dt, "rnn"), fw.aux = empty(Shape{rows, H}, dt, "rnn");
  if (gru) fw.aux = empty(Shape{rows, GH}, dt, "rnn");
  if (proj) fw.r = empty(Shape{rows, H}, dt, "rnn");
  const T *px = x.data<T>(), *whh = w_hh.data<T>(), *bhh = b_hh.defined() ? b_hh.data<T>() : nullptr;
  const T* whr = proj ? w_hr.data<T>() : nullptr;
  const bool relu = kind == RnnKind::rnn_relu;

  for (int64_t t : steps.order) {
    const int64_t n = steps.size[t], o = steps.offset[t], so = save ? o : 0;
    T* hp = hs;  // the rows' previous hidden state
    if (save) copy_rows(fw.hprev.data<T>() + o * P, hs, n, P), hp = fw.hprev.data<T>() + o * P;
    T* ho = out + o * P;  // this step's output rows
    if (lstm) {
      T* g = fw.acts.data<T>() + so * GH;
      hidden_product(g, px + o * GH, bhh, hp, whh, n, GH, P);
      if (save) copy_rows(fw.cprev.data<T>() + o * H, cs, n, H);
      T* tc = fw.aux.data<T>() + so * H;
      T* r = proj ? fw.r.data<T>() + so * H : ho;
      const auto cell = lstm_cell_rows.of<T>();
      rows_parallel(n, 4 * H, [&](int64_t r0, int64_t r1) {
        cell(g + r0 * GH, cs + r0 * H, tc + r0 * H, r + r0 * H, r1 - r0, H);
      });
      if (proj) gemm<T>(false, true, n, P, H, T(1), r, H, whr, H, T(0), ho, P);
    } else if (gru) {
      T* hg = fw.aux.data<T>() + so * GH;
      hidden_product(hg, static_cast<const T*>(nullptr), bhh, hp, whh, n, GH, P);
      T* a = fw.acts.data<T>() + so * GH;
      const T* xg = px + o * GH;
      const auto cell = gru_cell_rows.of<T>();
      rows_parallel(n, 3 * H, [&](int64_t r0, int64_t r1) {
        cell(xg + r0 * GH, hg + r0 * GH, hp + r0 * P, a + r0 * GH, ho + r0 * P, r1 - r0, H);
      });
    } else {
      hidden_product(ho, px + o * GH, bhh, hp, whh, n, GH, P);
      rnn_cell_rows.of<T>()(ho, n * H, relu);
    }
    copy_rows(hs, ho, n, P);
  }
  return fw;
}

// sum over the N rows of d (N, width) into out (width), in double.
template <class T>
void column_sums(const T* d, int64_t N, int64_t width, T* out) {
  std::vector<double> acc(width, 0.0);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < width; ++j) acc[j] += d[i * width + j];
  for (int64_t j = 0; j < width; ++j) out[j] = static_cast<T>(acc[j]);
}

template <class T>
RnnGrads backward(RnnKind kind, const RnnForward& fw, const Tensor& gy_in, const std::vector<int64_t>& bs,
                  const Tensor& w_hh_in, bool has_bias, const Tensor& w_hr_in, bool reverse) {
  const Tensor gy = contiguous(gy_in), w_hh = contiguous(w_hh_in);
  const Tensor w_hr = w_hr_in.defined() ? contiguous(w_hr_in) : Tensor{};
  const bool lstm = kind == RnnKind::lstm, gru = kind == RnnKind::gru, proj = w_hr.defined();
  const int64_t G = rnn_gates(kind), GH = w_hh.size(0), H = GH / G, P = w_hh.size(1), N = fw.hprev.size(0);
  const int64_t B = (fw.y.numel() - N * P) / (lstm ? P + H : P);
  const DType dt = gy.dtype();
  const Steps steps(bs, reverse);
  const T* g_out = gy.data<T>();

  RnnGrads r;
  r.dh0 = empty(Shape{B, P}, dt, "rnn_backward");
  T* dh = r.dh0.data<T>();  // dL/dh of the rows' current step, then of h0
  copy_rows(dh, g_out + N * P, B, P);
  T* dc = nullptr;
  if (lstm) {
    r.dc0 = empty(Shape{B, H}, dt, "rnn_backward");
    dc = r.dc0.data<T>();
    copy_rows(dc, g_out + N * P + B * P, B, H);
  }
  r.dxproj = empty(Shape{N, GH}, dt, "rnn_backward");
  T* dx = r.dxproj.data<T>();
  Tensor dhg_t = gru ? empty(Shape{N, GH}, dt, "rnn_backward") : Tensor{};
  T* dhg = gru ? dhg_t.data<T>() : dx;  // the gradient of h W_hh^T + b_hh (LSTM, RNN: dx itself)
  Tensor dh_all = proj ? empty(Shape{N, P}, dt, "rnn_backward") : Tensor{};
  Tensor dr_t = proj ? empty(Shape{B, H}, dt, "rnn_backward") : Tensor{};
  const T *whh = w_hh.data<T>(), *whr = proj ? w_hr.data<T>() : nullptr, *out = fw.y.data<T>();
  const bool relu = kind == RnnKind::rnn_relu;

  for (auto it = steps.order.rbegin(); it != steps.order.rend(); ++it) {
    const int64_t t = *it, n = steps.size[t], o = steps.offset[t];
    const T* go = g_out + o * P;
    for (int64_t i = 0; i < n * P; ++i) dh[i] += go[i];
    if (lstm) {
      const T* dr = dh;
      if (proj) {
        copy_rows(dh_all.data<T>() + o * P, dh, n, P);
        gemm<T>(false, false, n, H, P, T(1), dh, P, whr, H, T(0), dr_t.data<T>(), H);
        dr = dr_t.data<T>();
      }
      const T *a = fw.acts.data<T>() + o * GH, *tc = fw.aux.data<T>() + o * H, *cp = fw.cprev.data<T>() + o * H;
      T* dg = dx + o * GH;
      const auto cell = lstm_cell_backward_rows.of<T>();
      rows_parallel(n, 4 * H, [&](int64_t r0, int64_t r1) {
        cell(a + r0 * GH, tc + r0 * H, cp + r0 * H, dr + r0 * H, dc + r0 * H, dg + r0 * GH, r1 - r0, H);
      });
      gemm<T>(false, false, n, P, GH, T(1), dg, GH, whh, P, T(0), dh, P);
    } else if (gru) {
      const T *a = fw.acts.data<T>() + o * GH, *hg = fw.aux.data<T>() + o * GH, *hp = fw.hprev.data<T>() + o * P;
      T *dxg = dx + o * GH, *dhgo = dhg + o * GH;
      const auto cell = gru_cell_backward_rows.of<T>();
      rows_parallel(n, 3 * H, [&](int64_t r0, int64_t r1) {  // dh_prev's direct part replaces dh in place
        cell(a + r0 * GH, hg + r0 * GH, hp + r0 * P, dh + r0 * P, dxg + r0 * GH, dhgo + r0 * GH, dh + r0 * P, r1 - r0,
             H);
      });
      gemm<T>(false, false, n, P, GH, T(1), dhgo, GH, whh, P, T(1), dh, P);
    } else {
      T* da = dx + o * GH;
      rnn_cell_backward_rows.of<T>()(out + o * P, dh, da, n * H, relu);
      gemm<T>(false, false, n, P, GH, T(1), da, GH, whh, P, T(0), dh, P);
    }
  }
  // The weights' gradients over all steps at once: dW_hh = dgates^T h_prev, dW_hr = dh^T r.
  r.dw_hh = empty(w_hh.shape(), dt, "rnn_backward");
  gemm<T>(true, false, GH, P, N, T(1), dhg, GH, fw.hprev.data<T>(), P, T(0), r.dw_hh.data<T>(), P);
  if (N == 0) fill(r.dw_hh, 0.0);
  if (has_bias) {
    r.db_hh = empty(Shape{GH}, dt, "rnn_backward");
    column_sums(dhg, N, GH, r.db_hh.data<T>());
  }
  if (proj) {
    r.dw_hr = empty(w_hr.shape(), dt, "rnn_backward");
    gemm<T>(true, false, P, H, N, T(1), dh_all.data<T>(), P, fw.r.data<T>(), H, T(0), r.dw_hr.data<T>(), H);
    if (N == 0) fill(r.dw_hr, 0.0);
  }
  return r;
}

}  // namespace

RnnForward rnn_forward(RnnKind kind, const Tensor& xproj, const std::vector<int64_t>& batch_sizes, const Tensor& w_hh,
                       const Tensor& b_hh, const Tensor& h0, const Tensor& c0, const Tensor& w_hr, bool reverse,
                       bool save) {
  return dispatch_float(xproj.dtype(), "rnn", [&]<class T>() {
    return forward<T>(kind, xproj, batch_sizes, w_hh, b_hh, h0, c0, w_hr, reverse, save);
  });
}

RnnGrads rnn_backward(RnnKind kind, const RnnForward& fw, const Tensor& gy, const std::vector<int64_t>& batch_sizes,
                      const Tensor& w_hh, bool has_bias, const Tensor& w_hr, bool reverse) {
  return dispatch_float(gy.dtype(), "rnn_backward", [&]<class T>() {
    return backward<T>(kind, fw, gy, batch_sizes, w_hh, has_bias, w_hr, reverse);
  });
}

}  // namespace ag::kernels
