// Columns for convolution (im2col / col2im) and max pooling over (N, C) planes. The
// threads split the planes (n, c); each plane's windows are independent, so no two
// threads write the same element and results do not depend on the thread count.
#include "kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attograd/detail/parallel.h"
#include "kernels/half.h"
#include "kernels/kernels.h"

namespace ag::kernels {
namespace {

// The output positions [lo, hi) of window offset j whose input o * stride + off lies in
// [0, in), off = j * dilation - pad.
std::pair<int64_t, int64_t> valid_range(const Window& d, int64_t off) {
  // o * s + off >= 0  <=>  o >= ceil(-off / s);   o * s + off <= in - 1  <=>  o <= floor((in - 1 - off) / s)
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  int64_t lo = std::max<int64_t>(0, -floor_div(off, d.stride));
  int64_t hi = std::min<int64_t>(d.out, floor_div(d.in - 1 - off, d.stride) + 1);
  return {lo, std::max(lo, hi)};
}

// Bytes are copied as they are, so one instantiation per element size serves every dtype
// (0 is all-zero bits in each).
// One (n, c) plane into its K rows of L columns, `row_stride` apart.
template <class T>
void im2col_plane(const T* plane, T* rows, int64_t row_stride, const Window& h, const Window& w) {
  const int64_t L = h.out * w.out;
  for (int64_t i = 0; i < h.kernel; ++i) {
    const int64_t offh = i * h.dilation - h.pad;
    const auto [h_lo, h_hi] = valid_range(h, offh);
    for (int64_t j = 0; j < w.kernel; ++j, rows += row_stride) {
      const int64_t offw = j * w.dilation - w.pad;
      const auto [w_lo, w_hi] = valid_range(w, offw);
      std::fill(rows, rows + h_lo * w.out, T(0));
      std::fill(rows + h_hi * w.out, rows + L, T(0));
      for (int64_t oh = h_lo; oh < h_hi; ++oh) {
        T* dst = rows + oh * w.out;
        const T* src = plane + (oh * h.stride + offh) * w.in + offw;
        std::fill(dst, dst + w_lo, T(0));
        std::fill(dst + w_hi, dst + w.out, T(0));
        if (w.stride == 1) {
          if (w_hi > w_lo) std::memcpy(dst + w_lo, src + w_lo, sizeof(T) * static_cast<std::size_t>(w_hi - w_lo));
        } else {
          for (int64_t ow = w_lo; ow < w_hi; ++ow) dst[ow] = src[ow * w.stride];
        }
      }
    }
  }
}

template <class T>
void col2im_plane(const T* rows, int64_t row_stride, T* plane, const Window& h, const Window& w) {
  std::fill(plane, plane + h.in * w.in, T(0));
  for (int64_t i = 0; i < h.kernel; ++i) {
    const int64_t offh = i * h.dilation - h.pad;
    const auto [h_lo, h_hi] = valid_range(h, offh);
    for (int64_t j = 0; j < w.kernel; ++j, rows += row_stride) {
      const int64_t offw = j * w.dilation - w.pad;
      const auto [w_lo, w_hi] = valid_range(w, offw);
      for (int64_t oh = h_lo; oh < h_hi; ++oh) {
        const T* src = rows + oh * w.out;
        T* dst = plane + (oh * h.stride + offh) * w.in + offw;
        for (int64_t ow = w_lo; ow < w_hi; ++ow) dst[ow * w.stride] += src[ow];
      }
    }
  }
}

// Planes per parallel_for chunk: enough work (elements touched) to pay for a hand-off.
int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work_per_plane));
}

// Where plane (n, c)'s first row starts, and the distance between its rows.
struct RowPlace {
  int64_t sample, channel, row;
};
RowPlace row_place(ColLayout layout, int64_t N, int64_t C, int64_t K, int64_t L) {
  if (layout == ColLayout::per_sample) return {C * K * L, K * L, L};
  return {L, K * N * L, N * L};  // (C K, N L): row (c, k) is N L long, sample n at column n L
}

}  // namespace

Tensor im2col(const Tensor& x_in, const Window& h, const Window& w, ColLayout layout) {
  const Tensor x = contiguous(x_in);
  const int64_t N = x.shape()[0], C = x.shape()[1], K = h.kernel * w.kernel, L = h.out * w.out;
  Tensor cols = layout == ColLayout::per_sample ? empty({N, C * K, L}, x.dtype(), "im2col")
                                                : empty({C * K, N * L}, x.dtype(), "im2col");
  if (cols.numel() == 0) return cols;
  const RowPlace at = row_place(layout, N, C, K, L);
  auto run = [&]<class T>() {
    const T* src = static_cast<const T*>(x.raw_data());
    T* dst = static_cast<T*>(cols.raw_data());
    detail::parallel_for(N * C, plane_grain(K * L), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        im2col_plane<T>(src + p * h.in * w.in, dst + (p / C) * at.sample + (p % C) * at.channel, at.row, h, w);
    });
  };
  switch (itemsize(x.dtype())) {
    case 2: run.template operator()<uint16_t>(); break;
    case 4: run.template operator()<uint32_t>(); break;
    case 8: run.template operator()<uint64_t>(); break;
    default: run.template operator()<uint8_t>(); break;
  }
  return cols;
}

Tensor col2im(const Tensor& cols_in, int64_t C, const Window& h, const Window& w, ColLayout layout, int64_t batch) {
  if (is_half(cols_in)) return to_half(col2im(as_f32(cols_in), C, h, w, layout, batch), cols_in.dtype());
  const Tensor cols = contiguous(cols_in);
  const int64_t N = layout == ColLayout::per_sample ? cols.shape()[0] : batch;
  const int64_t K = h.kernel * w.kernel, L = h.out * w.out;
  Tensor out = empty({N, C, h.in, w.in}, cols.dtype(), "col2im");
  if (out.numel() == 0) return out;
  const RowPlace at = row_place(layout, N, C, K, L);
  dispatch_float(cols.dtype(), "col2im", [&]<class T>() {
    const T* src = cols.data<T>();
    T* dst = out.data<T>();
    detail::parallel_for(N * C, plane_grain(K * L), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        col2im_plane<T>(src + (p / C) * at.sample + (p % C) * at.channel, at.row, dst + p * h.in * w.in, h, w);
    });
  });
  return out;
}

// ---- max pooling ----------------------------------------------------------------
Taps taps_of(const PoolWindows& d) {
  Taps t;
  t.step = d.adaptive ? 1 : d.dilation;
  t.first.reserve(std::size_t(d.out));
  t.count.reserve(std::size_t(d.out));
  for (int64_t o = 0; o < d.out; ++o) {
    if (d.adaptive) {  // PyTorch's start_index / end_index, in integers
      const int64_t start = (o / d.out) * d.in + ((o % d.out) * d.in) / d.out, end = 1 + ((o + 1) * d.in - 1) / d.out;
      t.first.push_back(start);
      t.count.push_back(end - start);
      continue;
    }
    int64_t start = o * d.stride - d.pad;
    const int64_t end = std::min(start + (d.kernel - 1) * d.dilation + 1, d.in);
    if (start < 0) start += ((-start + d.dilation - 1) / d.dilation) * d.dilation;  // the first tap inside
    t.first.push_back(start);
    t.count.push_back(end > start ? (end - start + d.dilation - 1) / d.dilation : 0);
  }
  return t;
}

std::pair<Tensor, Tensor> max_pool(const Tensor& x_in, const PoolWindows& wh, const PoolWindows& ww) {
  if (is_half(x_in)) {  // a selection: exact in f32
    auto [v, i] = max_pool(as_f32(x_in), wh, ww);
    return {to_half(v, x_in.dtype()), i};
  }
  const Tensor x = contiguous(x_in);
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t oH = wh.out, oW = ww.out;
  Tensor values = empty({N, C, oH, oW}, x.dtype(), "max_pool");
  Tensor indices = empty({N, C, oH, oW}, DType::i64, "max_pool");
  if (values.numel() == 0) return {values, indices};
  const Taps th = taps_of(wh), tw = taps_of(ww);  // oH + oW entries: below the outputs' size
  for (const Taps* t : {&th, &tw})
    for (int64_t c : t->count)
      AG_CHECK(c > 0, ShapeError, "max_pool: a pooling window covers no input element (input shape ", x.shape(), ")");
  dispatch_float(x.dtype(), "max_pool", [&]<class T>() {
    const T* src = x.data<T>();
    T* val = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    // The tap tables as plain pointers, loaded once: read through the vectors they would be
    // reloaded on every tap (the stores to val / idx might alias them).
    const int64_t *fh = th.first.data(), *ch = th.count.data(), *fw = tw.first.data(), *cw = tw.count.data();
    const int64_t sh = th.step, sw = tw.step;
    detail::parallel_for(N * C, plane_grain(H * W + oH * oW), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* plane = src + p * H * W;
        T* vrow = val + p * oH * oW;
        int64_t* irow = idx + p * oH * oW;
        for (int64_t oh = 0; oh < oH; ++oh, vrow += oW, irow += oW) {
          const int64_t h0 = fh[oh], hn = ch[oh];
          for (int64_t ow = 0; ow < oW; ++ow) {
            const int64_t w0 = fw[ow], wn = cw[ow];
            int64_t best_i = h0 * W + w0;
            T best = -std::numeric_limits<T>::infinity();
            for (int64_t a = 0; a < hn; ++a) {
              const int64_t row = (h0 + a * sh) * W + w0;
              for (int64_t c = 0; c < wn; ++c) {
                // Selects, not branches: the maximum of real data is unpredictable. v != v: NaN.
                const T v = plane[row + c * sw];
                const bool take = (v > best) | (v != v);
                best = take ? v : best;
                best_i = take ? row + c * sw : best_i;
              }
            }
            vrow[ow] = best;
            irow[ow] = best_i;
          }
        }
      }
    });
  });
  return {values, indices};
}

Tensor max_pool_backward(const Tensor& g_in, const Tensor& indices_in, int64_t H, int64_t W) {
  if (is_half(g_in)) return to_half(max_pool_backward(as_f32(g_in), indices_in, H, W), g_in.dtype());
  const Tensor g = contiguous(g_in), indices = contiguous(indices_in);
  const int64_t N = g.shape()[0], C = g.shape()[1], L = g.shape()[2] * g.shape()[3];
  Tensor out = empty({N, C, H, W}, g.dtype(), "max_pool_backward");
  if (out.numel() == 0) return out;
  dispatch_float(g.dtype(), "max_pool_backward", [&]<class T>() {
    const T* src = g.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = out.data<T>();
    detail::parallel_for(N * C, plane_grain(H * W + L), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        T* plane = dst + p * H * W;
        std::fill(plane, plane + H * W, T(0));
        for (int64_t o = 0; o < L; ++o) plane[idx[p * L + o]] += src[p * L + o];
      }
    });
  });
  return out;
}

Tensor gather_planes(const Tensor& gg_in, const Tensor& indices_in) {
  if (is_half(gg_in)) return to_half(gather_planes(as_f32(gg_in), indices_in), gg_in.dtype());
  const Tensor gg = contiguous(gg_in), indices = contiguous(indices_in);
  const int64_t HW = gg.shape()[2] * gg.shape()[3], L = indices.shape()[2] * indices.shape()[3];
  const int64_t P = indices.shape()[0] * indices.shape()[1];
  Tensor out = empty(indices.shape(), gg.dtype(), "max_pool_double_backward");
  if (out.numel() == 0) return out;
  dispatch_float(gg.dtype(), "max_pool_double_backward", [&]<class T>() {
    const T* src = gg.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = out.data<T>();
    detail::parallel_for(P, plane_grain(L), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        for (int64_t o = 0; o < L; ++o) dst[p * L + o] = src[p * HW + idx[p * L + o]];
    });
  });
  return out;
}

}  // namespace ag::kernels
