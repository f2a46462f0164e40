// Sorting along one dim. x is made contiguous and viewed as (outer, len, inner); each
// (outer, inner) line is copied into (value, index) pairs, ordered, and its indices
// written back. NaN compares as larger than every number (PyTorch and NumPy).
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/scan_sort.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// a before b in ascending (or descending) order, NaN largest: PyTorch's comparators.
template <class T>
struct Less {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    return (!is_nan(a.first) && is_nan(b.first)) || a.first < b.first;
  }
};
template <class T>
struct Greater {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    return (is_nan(a.first) && !is_nan(b.first)) || a.first > b.first;
  }
};

struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const Tensor& x, int64_t dim) {
    if (x.dim() == 0) return;
    len = x.shape()[dim];
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (d < dim) outer *= x.shape()[d];
      if (d > dim) inner *= x.shape()[d];
    }
  }
};

// Calls order(pairs) on every line of x and writes the first out_len indices to out.
template <class T, class F>
void for_each_line(const Tensor& x, int64_t dim, int64_t out_len, Tensor& out, F&& order) {
  Lines l(x, dim);
  Tensor xc = contiguous(x);
  const T* p = xc.data<T>();
  int64_t* o = out.data<int64_t>();
  std::vector<std::pair<T, int64_t>> line(static_cast<std::size_t>(l.len));
  for (int64_t a = 0; a < l.outer; ++a)
    for (int64_t c = 0; c < l.inner; ++c) {
      for (int64_t i = 0; i < l.len; ++i) line[std::size_t(i)] = {p[(a * l.len + i) * l.inner + c], i};
      order(line);
      for (int64_t i = 0; i < out_len; ++i) o[(a * out_len + i) * l.inner + c] = line[std::size_t(i)].second;
    }
}

}  // namespace

Tensor sort_indices(const Tensor& x, int64_t dim, bool descending) {
  if (is_half(x)) return sort_indices(as_f32(x), dim, descending);
  Tensor out = empty(x.shape(), DType::i64);
  if (x.numel() == 0) return out;
  const int64_t len = x.dim() == 0 ? 1 : x.shape()[dim];
  dispatch_all(x.dtype(), "sort", [&]<class T>() {
    for_each_line<T>(x, dim, len, out, [&](auto& line) {
      if (descending)
        std::stable_sort(line.begin(), line.end(), Greater<T>());
      else
        std::stable_sort(line.begin(), line.end(), Less<T>());
    });
  });
  return out;
}

// PyTorch 1.13 aten/src/ATen/native/cpu/TopKImpl.h (topk_impl_loop), same algorithm and
// comparators, so that ties come out in the same order.
Tensor topk_indices(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  if (is_half(x)) return topk_indices(as_f32(x), k, dim, largest, sorted);
  Shape s = x.shape();
  if (x.dim() > 0) s[dim] = k;
  Tensor out = empty(s, DType::i64);
  if (numel(s) == 0) return out;
  const int64_t len = x.dim() == 0 ? 1 : x.shape()[dim];
  const bool partial = k * 64 <= len;
  dispatch_all(x.dtype(), "topk", [&]<class T>() {
    auto run = [&](auto cmp) {
      for_each_line<T>(x, dim, k, out, [&](auto& line) {
        if (partial) {
          std::partial_sort(line.begin(), line.begin() + k, line.end(), cmp);
        } else {
          std::nth_element(line.begin(), line.begin() + k - 1, line.end(), cmp);
          if (sorted) std::sort(line.begin(), line.begin() + k - 1, cmp);
        }
      });
    };
    if (largest)
      run(Greater<T>());
    else
      run(Less<T>());
  });
  return out;
}

// PyTorch 1.13 aten/src/ATen/native/ReduceOps.cpp (cummax_cummin_helper): the running
// index moves to i when x_i >= (cummax) or <= (cummin) the running value, so a tie takes
// the later index; a NaN takes the index and keeps the value NaN, a later NaN the index.
Tensor cum_extreme_indices(const Tensor& x, int64_t dim, bool max) {
  if (is_half(x)) return cum_extreme_indices(as_f32(x), dim, max);
  Tensor out = empty(x.shape(), DType::i64);
  if (x.numel() == 0) return out;
  const Lines l(x, dim);
  dispatch_all(x.dtype(), max ? "cummax" : "cummin", [&]<class T>() {
    Tensor xc = contiguous(x);
    const T* p = xc.data<T>();
    int64_t* o = out.data<int64_t>();
    for (int64_t a = 0; a < l.outer; ++a)
      for (int64_t c = 0; c < l.inner; ++c) {
        const int64_t base = a * l.len * l.inner + c;
        T best = p[base];
        int64_t idx = 0;
        for (int64_t i = 0; i < l.len; ++i) {
          const T v = p[base + i * l.inner];
          if (is_nan(v) || (!is_nan(best) && (max ? v >= best : v <= best))) best = v, idx = i;
          o[base + i * l.inner] = idx;
        }
      }
  });
  return out;
}

}  // namespace ag::kernels
