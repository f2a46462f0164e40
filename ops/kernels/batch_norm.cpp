// Fused batch norm (PyTorch's batch_norm_cpu_* kernels, contiguous NCHW): the training
// forward is two passes over each channel's values (sum, then the sum of squared
// deviations from the rounded mean) and one normalizing pass y = x * a + b'; the
// backward is one pass for sum g and sum (x - mean) g, one for dx. Channels run on the
// thread pool; each channel's sums are accumulated in double by one thread, so the
// results do not depend on the thread count. Long rows (one sample's channel, S values)
// run through the vector row kernels of binary.cpp and the float sums of reduce.cpp.
//
// N batch, C channels, S spatial size (prod of the dims after C), M = N * S.
#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "attograd/detail/parallel.h"
#include "kernels/elementwise_rows.h"
#include "kernels/half.h"
#include "kernels/strided.h"
#include "kernels/sum_rows.h"

namespace ag::kernels {

// Named (in an anonymous namespace) so that a unity build, which compiles several kernel
// sources as one, does not mix these helpers with other files' (flash_slices.h has a Rows).
namespace {
namespace bn {

struct Dims {
  int64_t n, c, s;  // x viewed as (N, C, S)
};

Dims dims_of(const Tensor& x) {
  const Shape& s = x.shape();
  int64_t spatial = 1;
  for (int64_t d = 2; d < s.size(); ++d) spatial *= s[d];
  return {s[0], s[1], spatial};
}

// Channels per parallel_for chunk: about kParallelGrain elements of work.
int64_t channel_grain(const Dims& d) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(d.n * d.s, 1)); }

// A (C) tensor in dtype t, contiguous, or undefined.
Tensor channel_param(const Tensor& p, DType t) {
  if (!p.defined()) return {};
  return contiguous(p.dtype() == t ? p : convert(p, t));
}

// The work on one row of S contiguous values (one sample, one channel). Rows of at
// least kVectorRow values go through the vector rows at the run-time SIMD level
// (elementwise_rows.h, sum_rows.h: the library is built for SSE2 and these pick AVX2 /
// AVX-512 where the CPU has them), in pieces of kPiece through a scratch row that stays
// in L1; shorter ones (a 7 x 7 feature map) run as one plain loop, where a call per
// operation would cost more than it saves. The same IEEE operations in the same order
// either way; only the float sums' order of additions (in double) differs.
constexpr int64_t kVectorRow = 128, kPiece = 2048;
constexpr int kAdd = 0, kSub = 1, kMul = 2;  // kernels::Binary's order, as arith_row takes it

// The plain loops, each a function of its own: inlined beside the vector calls, GCC
// keeps their scalars on the stack (every xmm register is clobbered by a call), which
// made them 2-3x slower.
template <class T>
[[gnu::noinline]] double sum_plain(const T* x, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) s0 += x[i], s1 += x[i + 1], s2 += x[i + 2], s3 += x[i + 3];
  for (; i < n; ++i) s0 += x[i];
  return (s0 + s1) + (s2 + s3);
}
template <class T>
[[gnu::noinline]] double dot_centred_plain(const T* x, T mu, const T* g, int64_t n) {
  auto at = [&](int64_t i) {
    const T d = x[i] - mu;
    return static_cast<double>(d * (g ? g[i] : d));
  };
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) s0 += at(i), s1 += at(i + 1), s2 += at(i + 2), s3 += at(i + 3);
  for (; i < n; ++i) s0 += at(i);
  return (s0 + s1) + (s2 + s3);
}
template <class T>
[[gnu::noinline]] void affine_plain(T* out, const T* x, T a, T b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * a + b;
}
template <class T>
[[gnu::noinline]] void dx_training_plain(T* out, const T* g, const T* x, T mu, T gm, T k, T scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ((g[i] - gm) - (x[i] - mu) * k) * scale;
}

template <class T>
struct RowOps {
  ArithRowFn<T> arith = arith_row.of<T>().get();
  SumRowFn sum_f32 = sum_row.get();
  T* tmp;  // kPiece scratch values

  void op(int o, T* out, const T* a, T s, int64_t n) const { arith(o, 1, out, a, &s, n); }        // out = a o s
  void op(int o, T* out, const T* a, const T* b, int64_t n) const { arith(o, 0, out, a, b, n); }  // out = a o b

  // sum x, in double
  double sum(const T* x, int64_t n) const {
    if constexpr (std::is_same_v<T, float>)
      if (n >= kVectorRow) return sum_f32(x, n);
    return sum_plain(x, n);
  }
  // sum (x - mu) * (g, or x - mu when g is null): each product rounded to T, the sum in double
  double dot_centred(const T* x, T mu, const T* g, int64_t n) const {
    if (n < kVectorRow) return dot_centred_plain(x, mu, g, n);
    double s = 0;
    for (int64_t j = 0; j < n; j += kPiece) {
      const int64_t len = std::min(kPiece, n - j);
      op(kSub, tmp, x + j, mu, len);
      op(kMul, tmp, tmp, g ? g + j : tmp, len);
      s += sum(tmp, len);
    }
    return s;
  }
  // out = x * a + b
  void affine(T* out, const T* x, T a, T b, int64_t n) const {
    if (n < kVectorRow) return affine_plain(out, x, a, b, n);
    op(kMul, out, x, a, n);
    op(kAdd, out, out, b, n);
  }
  // out = ((g - gm) - (x - mu) * k) * scale
  void dx_training(T* out, const T* g, const T* x, T mu, T gm, T k, T scale, int64_t n) const {
    if (n < kVectorRow) return dx_training_plain(out, g, x, mu, gm, k, scale, n);
    op(kSub, out, g, gm, n);
    for (int64_t j = 0; j < n; j += kPiece) {
      const int64_t len = std::min(kPiece, n - j);
      op(kSub, tmp, x + j, mu, len);
      op(kMul, tmp, tmp, k, len);
      op(kSub, out + j, out + j, tmp, len);
    }
    op(kMul, out, out, scale, n);
  }
};

// Channels [c0, c1) of x (N, C, S) per parallel_for chunk: the statistics (training)
// and y = x * a + shift, a = invstd * w, shift = b - mean * a. PyTorch's rounding steps:
// the mean rounded to T, (x - mean)^2 in T summed in double, var_sum rounded to T before
// 1 / sqrt(var_sum / M + eps) in double; eval's invstd in T.
template <class T>
void forward_typed(const Tensor& x, const Tensor& w_in, const Tensor& b_in, const Tensor& rm_in, const Tensor& rv_in,
                   bool training, double eps, BatchNormForward& r) {
  const Dims d = dims_of(x);
  const DType t = x.dtype();
  const Tensor wc = channel_param(w_in, t), bc = channel_param(b_in, t);
  const Tensor rmc = training ? Tensor{} : channel_param(rm_in, t), rvc = training ? Tensor{} : channel_param(rv_in, t);
  const T* px = x.data<T>();
  T* py = r.y.data<T>();
  const T* w = wc.defined() ? wc.data<T>() : nullptr;
  const T* b = bc.defined() ? bc.data<T>() : nullptr;
  T *mean = r.mean.data<T>(), *invstd = r.invstd.data<T>();
  T* var_sum = training ? r.unbiased_var.data<T>() : nullptr;
  const double m = static_cast<double>(d.n * d.s);
  detail::parallel_for(d.c, channel_grain(d), [&](int64_t c0, int64_t c1) {
    std::vector<T> scratch(static_cast<std::size_t>(std::min(d.s, kPiece)));
    const RowOps<T> R{.tmp = scratch.data()};
    for (int64_t c = c0; c < c1; ++c) {
      T mu, is;
      if (training) {
        double sum = 0;
        for (int64_t n = 0; n < d.n; ++n) sum += R.sum(px + (n * d.c + c) * d.s, d.s);
        mu = static_cast<T>(sum / m);
        double vs = 0;
        for (int64_t n = 0; n < d.n; ++n) vs += R.dot_centred(px + (n * d.c + c) * d.s, mu, nullptr, d.s);
        const T vs_t = static_cast<T>(vs);
        var_sum[c] = vs_t;
        is = static_cast<T>(1.0 / std::sqrt(static_cast<double>(vs_t) / m + eps));
      } else {
        mu = rmc.data<T>()[c];
        is = static_cast<T>(1) / std::sqrt(rvc.data<T>()[c] + static_cast<T>(eps));
      }
      mean[c] = mu;
      invstd[c] = is;
      const T a = is * (w ? w[c] : static_cast<T>(1));
      const T shift = (b ? b[c] : static_cast<T>(0)) - mu * a;
      for (int64_t n = 0; n < d.n; ++n) {
        const int64_t off = (n * d.c + c) * d.s;
        R.affine(py + off, px + off, a, shift, d.s);
      }
    }
  });
}

// Channels [c0, c1): sum g and dotp = sum (x - mean) g (products in T, sums in double),
// then dx = ((g - sum / M) - (x - mean) k) * invstd w with k = dotp invstd^2 / M
// (training), or g * invstd w (eval): PyTorch's formula and order of operations.
template <class T>
void backward_typed(const Tensor& x, const Tensor& g, const Tensor& mean_in, const Tensor& invstd_in,
                    const Tensor& w_in, bool training, BatchNormGrads& r) {
  const Dims d = dims_of(x);
  const DType t = x.dtype();
  const Tensor wc = channel_param(w_in, t), mc = channel_param(mean_in, t), ic = channel_param(invstd_in, t);
  const T *px = x.data<T>(), *pg = g.data<T>(), *pm = mc.data<T>(), *pi = ic.data<T>();
  const T* w = wc.defined() ? wc.data<T>() : nullptr;
  T* dx = r.dx.defined() ? r.dx.data<T>() : nullptr;
  T* dw = r.dw.defined() ? r.dw.data<T>() : nullptr;
  T* db = r.db.defined() ? r.db.data<T>() : nullptr;
  const T m = static_cast<T>(d.n * d.s);
  const bool need_sums = dw || db || (dx && training);
  detail::parallel_for(d.c, channel_grain(d), [&](int64_t c0, int64_t c1) {
    std::vector<T> scratch(static_cast<std::size_t>(std::min(d.s, kPiece)));
    const RowOps<T> R{.tmp = scratch.data()};
    for (int64_t c = c0; c < c1; ++c) {
      const T mu = pm[c], is = pi[c];
      double sum = 0, dotp = 0;
      for (int64_t n = 0; need_sums && n < d.n; ++n) {
        const int64_t off = (n * d.c + c) * d.s;
        sum += R.sum(pg + off, d.s);
        dotp += R.dot_centred(px + off, mu, pg + off, d.s);
      }
      if (db) db[c] = static_cast<T>(sum);
      if (dw) dw[c] = static_cast<T>(dotp) * is;
      if (!dx) continue;
      const T scale = is * (w ? w[c] : static_cast<T>(1));
      const T k = static_cast<T>(dotp) * is * is / m, gm = static_cast<T>(sum) / m;
      for (int64_t n = 0; n < d.n; ++n) {
        const int64_t off = (n * d.c + c) * d.s;
        if (training)
          R.dx_training(dx + off, pg + off, px + off, mu, gm, k, scale, d.s);
        else
          R.affine(dx + off, pg + off, scale, static_cast<T>(0), d.s);  // g * scale + 0: exact
      }
    }
  });
}

}  // namespace bn
}  // namespace

BatchNormForward batch_norm_forward(const Tensor& x_in, const Tensor& weight, const Tensor& bias,
                                    const Tensor& running_mean, const Tensor& running_var, bool training, double eps) {
  if (is_half(x_in)) {  // f32 compute, y rounded once; the statistics stay f32
    BatchNormForward r =
        batch_norm_forward(convert(x_in, DType::f32), weight, bias, running_mean, running_var, training, eps);
    r.y = convert(r.y, x_in.dtype());
    return r;
  }
  const Tensor x = contiguous(x_in);
  const bn::Dims d = bn::dims_of(x);
  const DType t = x.dtype();
  BatchNormForward r{empty(x.shape(), t, "batch_norm"), empty(Shape{d.c}, t), empty(Shape{d.c}, t),
                     training ? empty(Shape{d.c}, t) : Tensor{}};
  dispatch_float(t, "batch_norm", [&]<class T>() {
    bn::forward_typed<T>(x, weight, bias, running_mean, running_var, training, eps, r);
  });
  // The kernel leaves the variance sum; the unbiased variance is what the running
  // statistics take (M > 1 in training: the op checks it).
  if (training) {
    const double m = static_cast<double>(d.n * d.s);
    dispatch_float(t, "batch_norm", [&]<class T>() {
      T* v = r.unbiased_var.data<T>();
      for (int64_t c = 0; c < d.c; ++c) v[c] = static_cast<T>(static_cast<double>(v[c]) / (m - 1));
    });
  }
  return r;
}

BatchNormGrads batch_norm_backward(const Tensor& x_in, const Tensor& g_in, const Tensor& mean, const Tensor& invstd,
                                   const Tensor& weight, bool training, bool need_x, bool need_w, bool need_b) {
  if (is_half(x_in)) {  // mean and invstd are f32 already (the forward's)
    BatchNormGrads r = batch_norm_backward(convert(x_in, DType::f32), as_f32(g_in), mean, invstd, weight, training,
                                           need_x, need_w, need_b);
    const DType pd = weight.defined() ? weight.dtype() : x_in.dtype();
    return {to_half(r.dx, x_in.dtype()), to_half(r.dw, pd), to_half(r.db, pd)};
  }
  const Tensor x = contiguous(x_in), g = contiguous(g_in.dtype() == x_in.dtype() ? g_in : convert(g_in, x_in.dtype()));
  const bn::Dims d = bn::dims_of(x);
  const DType t = x.dtype();
  BatchNormGrads r;
  if (need_x) r.dx = empty(x.shape(), t, "batch_norm_backward");
  if (need_w) r.dw = empty(Shape{d.c}, t);
  if (need_b) r.db = empty(Shape{d.c}, t);
  if (!need_x && !need_w && !need_b) return r;
  dispatch_float(t, "batch_norm_backward",
                 [&]<class T>() { bn::backward_typed<T>(x, g, mean, invstd, weight, training, r); });
  return r;
}

}  // namespace ag::kernels
