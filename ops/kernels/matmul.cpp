// Batched GEMM through OpenBLAS. Each operand's last two dims are handed to BLAS as
// they are laid out: row-major, or column-major (a transposed view) with the transpose
// flag. Only a layout BLAS cannot express is copied. When b has no batch dims and a's
// batch rows are evenly strided, the batch folds into one (B*M, K) @ (K, N) call.
#include <algorithm>
#include <vector>

#include "attograd/detail/parallel.h"
#include "gemm.h"
#include "kernels/strided.h"
#include "kernels/views.h"
#include "kernels/kernels.h"
#include "kernels/half.h"
#include "kernels/gemv.h"
#include "kernels/matmul_dnnl.h"

namespace ag::kernels {
namespace {

struct MatView {
  bool trans = false;  // stored column-major
  int64_t ld = 1;
  bool ok = false;
};

// How BLAS can read a rows x cols matrix with strides (s0, s1).
MatView as_blas(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  MatView v;
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1))) {
    v.ok = true;
    v.ld = rows == 1 ? std::max<int64_t>(cols, 1) : s0;
  } else if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1))) {
    v.ok = true;
    v.trans = true;
    v.ld = cols == 1 ? std::max<int64_t>(rows, 1) : s1;
  }
  return v;
}

// Strides of the batch dims of t aligned to `batch` (0 where broadcast).
Strides batch_strides(const Tensor& t, const Shape& batch) {
  Strides st = Dims::filled(batch.size(), 0);
  int64_t tb = t.dim() - 2, lead = batch.size() - tb;
  for (int64_t i = 0; i < tb; ++i) st[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return st;
}

// A 16-bit operand in f32, keeping a transposed layout (x @ W^T reads W (N, K) as a
// column-major (K, N)): its contiguous transpose converts through the vector kernels,
// where the transposed view took a strided path about 5x slower (half_bench, decoding).
Tensor widen(const Tensor& t) {
  if (!is_half(t) || t.dim() < 2 || t.is_contiguous()) return as_f32(t);
  Tensor tt = transpose_view(t, -1, -2);
  return tt.is_contiguous() ? transpose_view(convert(tt, DType::f32), -1, -2) : as_f32(t);
}

// Decoding's x (..., M, K) @ W^T with W (N, K) contiguous, at most kGemvMaxRows rows in
// all, x and W of one dtype: gemv.h's rows, N split over the threads, f32 sums (rounded
// once for 16-bit). f32: sgemm runs such a product on one thread, and workload 8's
// weights then stream from L3; split over two cores, each keeps its half in its own L2.
// 16-bit: the rows read the weights as they are, of every size (the conversion path
// widened all of W to f32 on every call; since the rows take 8/4/2 weight rows at once,
// workload 8's 128 x 384 weights decode 1.4x faster this way too). Undefined when the
// product is not of that form (a shape mismatch reaches the path that names it).
// bias (N) of b's dtype, contiguous, or undefined: added to each row's sum inside the
// part that computes it (linear without a graph; linear_gemv below), rounded as the
// separate add would be: f32 sum + bias; 16-bit: the rounded product + bias, rounded.
Tensor gemv(const Tensor& a, const Tensor& b, const Tensor& bias = {}) {
  const bool half = is_half(b);
  if (b.dim() != 2 || a.dim() < 2 || a.dtype() != b.dtype() || !(half || b.dtype() == DType::f32)) return {};
  if (half && half_gemm() != HalfGemm::automatic) return {};
  const int64_t K = b.shape()[0], N = b.shape()[1];
  if (K == 0 || N == 0 || b.strides()[0] != 1 || b.strides()[1] != K || a.numel() == 0 || a.shape()[a.dim() - 1] != K)
    return {};
  const int64_t rows = a.numel() / K;
  if (rows > kGemvMaxRows) return {};
  Shape out_shape = a.shape();
  out_shape[out_shape.size() - 1] = N;
  Tensor y = empty(Shape{rows, N}, b.dtype(), "matmul");
  // 16-bit: x widened and the f32 sums kept in per-thread scratch (at most 8 rows), each
  // part rounding its own columns into y: a step's products then allocate only y, where
  // converting x and y as tensors took two more allocations and conversions per product.
  // The bits are those of the conversions (the same row kernels).
  thread_local std::vector<float> x_scratch, y_scratch;
  const float* px;
  Tensor x;
  if (!half) {
    x = a.is_contiguous() ? a : contiguous(a);  // (rows, K)
    px = x.data<float>();
  } else if (a.is_contiguous()) {
    x_scratch.resize(static_cast<std::size_t>(rows * K));
    widen_row(b.dtype())(x_scratch.data(), static_cast<const uint16_t*>(a.raw_data()), rows * K);
    px = x_scratch.data();
  } else {
    x = convert(a, DType::f32);
    px = x.data<float>();
  }
  if (half) y_scratch.resize(static_cast<std::size_t>(rows * N));
  float* py = half ? y_scratch.data() : y.data<float>();
  auto* out16 = half ? static_cast<uint16_t*>(y.raw_data()) : nullptr;
  const bool bf16 = b.dtype() == DType::bf16;
  auto half_fn = half_gemv_rows.get();
  auto f32_fn = f32_gemv_rows.get();
  auto round_fn = half ? round_row(b.dtype()) : nullptr;
  auto widen_fn = half ? widen_row(b.dtype()) : nullptr;
  thread_local std::vector<float> bias_scratch;
  const float* pb = nullptr;  // the bias in f32
  if (bias.defined()) {
    if (!half) {
      pb = bias.data<float>();
    } else {
      bias_scratch.resize(static_cast<std::size_t>(N));
      widen_fn(bias_scratch.data(), static_cast<const uint16_t*>(bias.raw_data()), N);
      pb = bias_scratch.data();
    }
  }
  // Parts of at least kParallelGrain weights: below that the hand-off costs more than the
  // part's own time. The split never changes a sum, so neither does the thread count.
  detail::parallel_for(N, std::max<int64_t>(1, kParallelGrain / K), [&](int64_t n0, int64_t n1) {
    const int64_t n = n1 - n0;
    if (!half) {
      f32_fn(py, N, px, K, b.data<float>(), K, rows, n0, n1);
      if (pb)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = n0; j < n1; ++j) py[i * N + j] += pb[j];
      return;
    }
    half_fn(py, N, px, K, static_cast<const uint16_t*>(b.raw_data()), K, rows, n0, n1, bf16);
    for (int64_t i = 0; i < rows; ++i) {
      uint16_t* o = out16 + i * N + n0;
      float* f = py + i * N + n0;
      round_fn(o, f, n);
      if (!pb) continue;
      widen_fn(f, o, n);  // the product as the separate add would read it
      for (int64_t j = 0; j < n; ++j) f[j] += pb[n0 + j];
      round_fn(o, f, n);
    }
  });
  return reshape_view(y, out_shape);
}

}  // namespace

Tensor linear_gemv(const Tensor& x, const Tensor& weight_t, const Tensor& bias) {
  if (!bias.defined() || bias.dim() != 1 || bias.dtype() != weight_t.dtype() || !bias.is_contiguous() ||
      weight_t.dim() != 2 || bias.numel() != weight_t.shape()[1])
    return {};
  return gemv(x, weight_t, bias);
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  if (Tensor r = gemv(a_in, b_in); r.defined()) return r;
  if (is_half(a_in) || is_half(b_in)) {
    // (A few rows by a transposed weight took gemv above.) bf16 on CPUs with AMX: oneDNN
    // (kernels/matmul_dnnl.h says why); otherwise, and for f16, f32 around sgemm,
    // rounded once. Empty products take the f32 path's shortcuts.
    if (a_in.numel() > 0 && b_in.numel() > 0)
      if (Tensor r = matmul_dnnl(a_in, b_in); r.defined()) return r;
    return to_half(matmul(widen(a_in), widen(b_in)), a_in.dtype());
  }
  // a (..., M, K), b (..., K, N): both at least 2-D here (ops/linalg.cpp handles 1-D).
  Tensor a = a_in, b = b_in;
  const int64_t M = a.shape()[a.dim() - 2], K = a.shape()[a.dim() - 1];
  const int64_t N = b.shape()[b.dim() - 1];
  Shape abatch, bbatch;
  for (int64_t i = 0; i + 2 < a.dim(); ++i) abatch.push_back(a.shape()[i]);
  for (int64_t i = 0; i + 2 < b.dim(); ++i) bbatch.push_back(b.shape()[i]);
  Shape batch = broadcast_shapes(abatch, bbatch, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(out_shape, a.dtype(), "matmul");  // checks numel and bytes of (..., M, N)
  if (out.numel() == 0) return out;
  if (K == 0) {
    fill(out, 0);
    return out;
  }

  MatView va = as_blas(M, K, a.strides()[a.dim() - 2], a.strides()[a.dim() - 1]);
  if (!va.ok) a = contiguous(a), va = as_blas(M, K, K, 1);
  MatView vb = as_blas(K, N, b.strides()[b.dim() - 2], b.strides()[b.dim() - 1]);
  if (!vb.ok) b = contiguous(b), vb = as_blas(K, N, N, 1);

  Strides sa = batch_strides(a, batch), sb = batch_strides(b, batch);
  const int64_t nb = numel(batch);

  dispatch_float(a.dtype(), "matmul", [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    // Fold: b shared by every batch, a's rows evenly spaced through the batch.
    bool b_shared = true;
    for (int64_t s : sb) b_shared = b_shared && s == 0;
    if (b_shared && !va.trans && nb > 1) {
      bool even = true;
      int64_t row = va.ld;
      int64_t expect = row * M;
      for (int64_t i = batch.size() - 1; i >= 0; --i) {
        if (batch[i] == 1) continue;
        even = even && sa[i] == expect;
        expect *= batch[i];
      }
      if (even) {
        gemm<T>(false, vb.trans, nb * M, N, K, T(1), pa, va.ld, pb, vb.ld, T(0), pc, N);
        return;
      }
    }
    Dims idx = Dims::filled(batch.size(), 0);
    for (int64_t i = 0; i < nb; ++i) {
      int64_t oa = 0, ob = 0;
      for (int64_t d = 0; d < batch.size(); ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
      gemm<T>(va.trans, vb.trans, M, N, K, T(1), pa + oa, va.ld, pb + ob, vb.ld, T(0), pc + i * M * N, N);
      for (int64_t d = batch.size() - 1; d >= 0; --d) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

}  // namespace ag::kernels
