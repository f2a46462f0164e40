#pragma once
// The one strided loop behind every elementwise kernel. Operands are described by
// strides over a common shape (0 on broadcast dims); adjacent dims that are laid out
// contiguously for every operand are merged, so a contiguous tensor is one row.
#include <array>

#include "attograd/shape.h"
#include "attograd/tensor.h"
#include "attograd/detail/parallel.h"

namespace ag::kernels {

// Strides of t viewed at `shape` (t's shape must broadcast to it): 0 on broadcast dims.
inline Strides broadcast_strides(const Tensor& t, const Shape& shape) {
  Strides st = Dims::filled(shape.size(), 0);
  int64_t lead = shape.size() - t.dim();
  for (int64_t i = 0; i < t.dim(); ++i) st[lead + i] = t.shape()[i] == 1 && shape[lead + i] != 1 ? 0 : t.strides()[i];
  return st;
}

// Calls row(offsets, n, inner_strides) for every innermost row; offsets are in elements
// from each operand's first element.
template <std::size_t N, class F>
void for_each_row(const Shape& shape_in, const std::array<Strides, N>& st_in, F&& row) {
  // No rows when empty; checked first, since an empty tensor's strides are unbounded
  // (stride * size below would overflow for one of INT64_MAX on a dim before the 0).
  for (int64_t d = 0; d < shape_in.size(); ++d)
    if (shape_in[d] == 0) return;
  Shape shape;
  std::array<Strides, N> st;
  for (int64_t d = 0; d < shape_in.size(); ++d) {
    if (shape_in[d] == 1) continue;
    if (!shape.empty()) {
      int64_t p = shape.size() - 1;
      bool merge = true;
      for (std::size_t k = 0; k < N; ++k) merge = merge && st[k][p] == st_in[k][d] * shape_in[d];
      if (merge) {
        shape[p] *= shape_in[d];
        for (std::size_t k = 0; k < N; ++k) st[k][p] = st_in[k][d];
        continue;
      }
    }
    shape.push_back(shape_in[d]);
    for (std::size_t k = 0; k < N; ++k) st[k].push_back(st_in[k][d]);
  }
  std::array<int64_t, N> off{};
  std::array<int64_t, N> inner_st{};
  if (shape.empty()) {
    row(off, int64_t{1}, inner_st);
    return;
  }
  int64_t nd = shape.size();
  int64_t inner = shape[nd - 1];
  for (std::size_t k = 0; k < N; ++k) inner_st[k] = st[k][nd - 1];
  int64_t outer = numel(shape) / inner;
  Dims counter = Dims::filled(nd - 1, 0);
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
