#pragma once
// The one strided loop behind every elementwise kernel. Operands are described by
// strides over a common shape (0 on broadcast dims); adjacent dims that are laid out
// contiguously for every operand are merged, so a contiguous tensor is one row.
#include <algorithm>
#include <array>

#include "attograd/shape.h"
#include "attograd/tensor.h"
#include "attograd/detail/parallel.h"

namespace ag::kernels {

// Strides of t viewed at `shape` (t's shape must broadcast to it): 0 on broadcast dims.
inline Strides broadcast_strides(const Tensor& t, const Shape& shape) {
  Strides st = Dims::filled(shape.size(), 0);
  const int64_t lead = shape.size() - t.dim();
  const int64_t *ts = t.shape().data(), *tst = t.strides().data(), *s = shape.data();
  int64_t* out = st.begin();
  for (int64_t i = 0; i < t.dim(); ++i) out[lead + i] = ts[i] == 1 && s[lead + i] != 1 ? 0 : tst[i];
  return st;
}

// Calls row(offsets, n, inner_strides) for every innermost row; offsets are in elements
// from each operand's first element.
template <std::size_t N, class F>
void for_each_row(const Shape& shape_in, const std::array<Strides, N>& st_in, F&& row) {
  // No rows when empty; checked first, since an empty tensor's strides are unbounded
  // (stride * size below would overflow for one of INT64_MAX on a dim before the 0).
  const int64_t nd_in = shape_in.size();
  const int64_t* in_shape = shape_in.data();
  for (int64_t d = 0; d < nd_in; ++d)
    if (in_shape[d] == 0) return;
  // The merged layout, in plain arrays (a Dims per operand cost a copy and an indirection
  // per access on the small tensors whose overhead this loop is).
  int64_t shape[kMaxDims], st[N][kMaxDims];
  const int64_t* in_st[N];
  for (std::size_t k = 0; k < N; ++k) in_st[k] = st_in[k].data();
  int64_t nd = 0;
  for (int64_t d = 0; d < nd_in; ++d) {
    if (in_shape[d] == 1) continue;
    if (nd > 0) {
      const int64_t p = nd - 1;
      bool merge = true;
      for (std::size_t k = 0; k < N; ++k) merge = merge && st[k][p] == in_st[k][d] * in_shape[d];
      if (merge) {
        shape[p] *= in_shape[d];
        for (std::size_t k = 0; k < N; ++k) st[k][p] = in_st[k][d];
        continue;
      }
    }
    shape[nd] = in_shape[d];
    for (std::size_t k = 0; k < N; ++k) st[k][nd] = in_st[k][d];
    ++nd;
  }
  std::array<int64_t, N> off{};
  std::array<int64_t, N> inner_st{};
  if (nd == 0) {
    row(off, int64_t{1}, inner_st);
    return;
  }
  const int64_t inner = shape[nd - 1];
  for (std::size_t k = 0; k < N; ++k) inner_st[k] = st[k][nd - 1];
  int64_t outer = 1;
  for (int64_t d = 0; d + 1 < nd; ++d) outer *= shape[d];  // numel / inner: checked by the caller's tensors
  int64_t counter[kMaxDims];
  std::fill_n(counter, nd, int64_t{0});
  for (int64_t o = 0; o < outer; ++o) {
    row(off, inner, inner_st);
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++counter[d] < shape[d]) {
        for (std::size_t k = 0; k < N; ++k) off[k] += st[k][d];
        break;
      }
      for (std::size_t k = 0; k < N; ++k) off[k] -= st[k][d] * (shape[d] - 1);
      counter[d] = 0;
    }
  }
}

// Elements per thread below which a kernel stays on one thread: handing work to the
// pool costs a few microseconds, more than small tensors take.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

// for_each_row, except that when every operand is laid out contiguously over `shape`
// (the whole tensor is one row) and it is large, chunks of it run on the thread pool.
// Rows never overlap, so results do not depend on the number of threads.
template <std::size_t N, class F>
void for_each_row_parallel(const Shape& shape, const std::array<Strides, N>& st, F&& row) {
  const int64_t n = numel(shape);
  bool flat = n >= 2 * kParallelGrain;
  const Strides cs = contiguous_strides(shape);
  for (std::size_t k = 0; flat && k < N; ++k)
    for (int64_t d = 0; flat && d < shape.size(); ++d) flat = shape[d] == 1 || st[k][d] == cs[d];
  if (!flat) {
    for_each_row<N>(shape, st, row);
    return;
  }
  detail::parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    std::array<int64_t, N> off, inc;
    off.fill(b);
    inc.fill(1);
    row(off, e - b, inc);
  });
}

}  // namespace ag::kernels
