// Fused kernels for the ops that training calls most after GEMM: layer norm (one pass
// forward, one pass backward, instead of ~10 and ~20 elementwise ops; the row work is
// layer_norm_rows.h at the run-time level) and dropout (mask drawn and applied in one
// pass, dropout_rows.h). Rows are the normalized trailing dims.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attograd/generator.h"
#include "kernels/attention_rows.h"
#include "kernels/dropout_rows.h"
#include "kernels/fused.h"
#include "kernels/layer_norm_rows.h"
#include "attograd/detail/parallel.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {

namespace {

// 16-bit x: f32 statistics (mean, rstd stay f32), y rounded once. Blocks of rows (about
// 4096 elements) are widened into per-part scratch, the f32 rows run there and y is
// rounded into the output: the bits of widening all of x first, without the f32 copies
// of x and y (a bf16 decode step's norms spent most of their time making those).
LayerNormForward layer_norm_forward_16bit(const Tensor& x_in, const Tensor& weight, const Tensor& bias, int64_t n,
                                          double eps) {
  const Tensor x = contiguous(x_in);
  const Tensor w = weight.defined() ? contiguous(as_f32(weight)) : Tensor{};
  const Tensor b = bias.defined() ? contiguous(as_f32(bias)) : Tensor{};
  const int64_t rows = n ? x.numel() / n : 0;
  LayerNormForward r{empty(x.shape(), x.dtype()), empty(Shape{rows}, DType::f32), empty(Shape{rows}, DType::f32)};
  const auto forward_rows = layer_norm_rows.of<float>().get();
  const auto widen = widen_row(x.dtype());
  const auto round = round_row(x.dtype());
  const auto* px = static_cast<const uint16_t*>(x.raw_data());
  auto* py = static_cast<uint16_t*>(r.y.raw_data());
  const float* pw = w.defined() ? w.data<float>() : nullptr;
  const float* pb = b.defined() ? b.data<float>() : nullptr;
  float *mean = r.mean.data<float>(), *rstd = r.rstd.data<float>();
  const int64_t block = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  detail::parallel_for(rows, grain, [&](int64_t i0, int64_t i1) {
    const auto size = static_cast<std::size_t>(std::min(block, i1 - i0) * n);
    std::vector<float> xs(size), ys(size);
    for (int64_t i = i0; i < i1; i += block) {
      const int64_t m = std::min(block, i1 - i);
      widen(xs.data(), px + i * n, m * n);
      forward_rows(xs.data(), pw, pb, ys.data(), mean + i, rstd + i, m, n, eps);
      round(py + i * n, ys.data(), m * n);
    }
  });
  return r;
}

}  // namespace

LayerNormForward layer_norm_forward(const Tensor& x_in, const Tensor& weight, const Tensor& bias, int64_t n,
                                    double eps) {
  if (is_half(x_in)) return layer_norm_forward_16bit(x_in, weight, bias, n, eps);
  Tensor x = contiguous(x_in);
  Tensor wc = weight.defined() ? contiguous(weight) : Tensor{}, bc = bias.defined() ? contiguous(bias) : Tensor{};
  const int64_t rows = n ? x.numel() / n : 0;
  LayerNormForward r{empty(x.shape(), x.dtype()), empty(Shape{rows}, x.dtype()), empty(Shape{rows}, x.dtype())};
  dispatch_float(x.dtype(), "layer_norm", [&]<class T>() {
    const T* w = wc.defined() ? wc.data<T>() : nullptr;
    const T* b = bc.defined() ? bc.data<T>() : nullptr;
    const auto forward_rows = layer_norm_rows.of<T>().get();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
    detail::parallel_for(rows, grain, [&](int64_t i0, int64_t i1) {
      forward_rows(x.data<T>() + i0 * n, w, b, r.y.data<T>() + i0 * n, r.mean.data<T>() + i0, r.rstd.data<T>() + i0,
                   i1 - i0, n, eps);
    });
  });
  return r;
}

// dx = rstd * (g w - mean(g w) - xhat * mean(g w * xhat));  dw = sum g xhat;  db = sum g.
// Rows run in blocks of kBlock on the thread pool; each block sums its own dw, db in
// double, and the blocks' sums are added in block order, so the result does not depend
// on the thread count.
LayerNormGrads layer_norm_backward(const Tensor& x_in, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                   const Tensor& g_in, const Shape& normalized_shape, bool need_x, bool need_w,
                                   bool need_b) {
  if (is_half(x_in)) {  // mean, rstd are f32 already (the forward's)
    LayerNormGrads r = layer_norm_backward(as_f32(x_in), as_f32(mean), as_f32(rstd), as_f32(weight), as_f32(g_in),
                                           normalized_shape, need_x, need_w, need_b);
    return {to_half(r.dx, x_in.dtype()), to_half(r.dw, weight.defined() ? weight.dtype() : x_in.dtype()),
            to_half(r.db, x_in.dtype())};
  }
  constexpr int64_t kBlock = 64;
  Tensor x = contiguous(x_in), g = contiguous(g_in);
  Tensor wc = weight.defined() ? contiguous(weight) : Tensor{};
  const int64_t n = numel(normalized_shape);
  const int64_t rows = n ? x.numel() / n : 0, blocks = (rows + kBlock - 1) / kBlock;
  LayerNormGrads r;
  if (need_x) r.dx = empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "layer_norm_backward", [&]<class T>() {
    const T *px = x.data<T>(), *pg = g.data<T>(), *pm = mean.data<T>(), *pr = rstd.data<T>();
    const T* w = wc.defined() ? wc.data<T>() : nullptr;
    const std::size_t part = static_cast<std::size_t>(blocks * n);
    std::vector<double> dw(need_w ? part : 0, 0.0), db(need_b ? part : 0, 0.0);
    T* dx = need_x ? r.dx.data<T>() : nullptr;
    const auto backward_rows = layer_norm_backward_rows.of<T>().get();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n * kBlock, 1));
    detail::parallel_for(blocks, grain, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t i0 = k * kBlock, len = std::min(kBlock, rows - i0);
        backward_rows(px + i0 * n, pg + i0 * n, w, pm + i0, pr + i0, dx ? dx + i0 * n : nullptr,
                      need_w ? dw.data() + k * n : nullptr, need_b ? db.data() + k * n : nullptr, len, n);
      }
    });
    auto to_tensor = [&](const std::vector<double>& v) {
      Tensor t = empty(normalized_shape, x.dtype());
      T* p = t.data<T>();
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < blocks; ++k) sum += v[static_cast<std::size_t>(k * n + j)];
        p[j] = static_cast<T>(sum);
      }
      return t;
    };
    if (need_w) r.dw = to_tensor(dw);
    if (need_b) r.db = to_tensor(db);
  });
  return r;
}

// Element i is kept when word i % 4 of Philox block i / 4, under a key drawn once per
// dropout call, is below (1 - p) 2^32: a counter-based stream (PyTorch's GPU dropout
// draws from Philox the same way), so chunks run on any thread, at any vector width, and
// give the same mask, in forward and again in backward.
Tensor dropout_apply(const Tensor& x_in, double p, uint64_t key, bool rounded_mask) {
  Tensor x = contiguous(x_in);
  Tensor y = empty(x.shape(), x.dtype());
  const uint64_t threshold = static_cast<uint64_t>((1.0 - p) * 4294967296.0);  // keep when below
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const auto philox = philox_blocks.get();
  constexpr int64_t kChunk = 1024;  // elements per Philox call: a multiple of 4
  const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  if (is_half(x)) {
    // The f32 path chunk by chunk: the same draws, x widened, the product rounded once into
    // the 16-bit output, without f32 tensors.
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    const auto mask = keep_mask.of<float>().get();
    const auto mul_into = row_mul_into.of<float>().get();
    const auto widen = widen_row(x.dtype());
    const auto round = round_row(x.dtype());
    const auto* px = static_cast<const uint16_t*>(x.raw_data());
    auto* py = static_cast<uint16_t*>(y.raw_data());
    detail::parallel_for(chunks, 64, [&](int64_t c0, int64_t c1) {
      uint32_t bits[kChunk];
      alignas(64) float xf[kChunk], mf[kChunk];
      alignas(64) uint16_t m16[kChunk];
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
        philox(bits, (len + 3) / 4, static_cast<uint64_t>(i0 / 4), k0, k1);
        mask(mf, bits, len, threshold, scale);
        if (rounded_mask) {
          round(m16, mf, len);
          widen(mf, m16, len);
        }
        widen(xf, px + i0, len);
        mul_into(xf, xf, mf, len);
        round(py + i0, xf, len);
      }
    });
    return y;
  }
  dispatch_float(x.dtype(), "dropout", [&]<class T>() {
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const auto mask = keep_mask.of<T>().get();
    const auto mul_into = row_mul_into.of<T>().get();
    detail::parallel_for(chunks, 64, [&](int64_t c0, int64_t c1) {
      uint32_t bits[kChunk];
      alignas(64) T m[kChunk];
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
        philox(bits, (len + 3) / 4, static_cast<uint64_t>(i0 / 4), k0, k1);
        mask(m, bits, len, threshold, scale);
        mul_into(py + i0, px + i0, m, len);
      }
    });
  });
  return y;
}

}  // namespace ag::kernels
