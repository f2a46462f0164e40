// Indexing kernels: index_select / index_add (rows along a dim) and gather /
// scatter_add (PyTorch's elementwise indexing along a dim). Every index is checked.
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/views.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

// Indices are never wrapped (ops/indexing.h): -1 is out of bounds, as in PyTorch's
// index_select and gather; the wording is check_index_range's (scatter.cpp).
int64_t checked_index(int64_t i, int64_t size, const char* op, int64_t dim) {
  AG_CHECK(i >= 0 && i < size, IndexError, op, ": index ", i, " is out of bounds for dimension ", dim, " with size ",
           size);
  return i;
}

// Visits every element of `shape` in row-major order, passing its multi-index.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  int64_t n = numel(shape);
  Dims idx = Dims::filled(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx, k);
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

void check_gather_shapes(const Shape& x, int64_t dim, const Tensor& index, const char* op) {
  AG_CHECK(index.dtype() == DType::i64, DTypeError, op, ": index must be i64, got ", index.dtype());
  AG_CHECK(index.dim() == x.size(), ShapeError, op, ": index shape ", index.shape(),
           " must have as many dims as the input shape ", x);
  for (int64_t d = 0; d < x.size(); ++d)
    AG_CHECK(d == dim || index.shape()[d] <= x[d], ShapeError, op, ": index shape ", index.shape(),
             " is larger than input shape ", x, " at dim ", d);
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (is_half(x)) return to_half(index_select(as_f32(x), dim, index), x.dtype());
  AG_CHECK(index.dtype() == DType::i64, DTypeError, "index_select: index must be a 1-D i64 tensor, got shape ",
           index.shape(), " ", index.dtype());
  AG_CHECK(index.dim() <= 1, ShapeError, "index_select: index must be a 1-D i64 tensor, got shape ", index.shape(), " ",
           index.dtype());
  std::vector<int64_t> ids = values<int64_t>(index);
  const int64_t size = x.shape()[dim];
  for (auto& i : ids) i = checked_index(i, size, "index_select", dim);
  Shape s = x.shape();
  s[dim] = static_cast<int64_t>(ids.size());
  Tensor out = empty(s, x.dtype());
  if (dim == 0 && x.is_contiguous()) {  // whole rows (embedding lookups)
    const std::size_t row = static_cast<std::size_t>(x.numel() / std::max<int64_t>(size, 1)) * itemsize(x.dtype());
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    for (std::size_t j = 0; j < ids.size(); ++j) std::memcpy(dst + j * row, src + ids[j] * row, row);
    return out;
  }
  Shape one = x.shape();  // one slice along dim
  one[dim] = 1;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    Tensor from(x.storage(), one, x.strides(), x.offset() + ids[j] * x.strides()[dim], x.dtype());
    Tensor to(out.storage(), one, out.strides(), static_cast<int64_t>(j) * out.strides()[dim], x.dtype());
    copy(from, to);
  }
  return out;
}

Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src, std::optional<int64_t> skip) {
  if (is_half(src)) return to_half(index_add(shape, dim, index, as_f32(src), skip), src.dtype());
  std::vector<int64_t> ids = values<int64_t>(index);
  Tensor out = empty(shape, src.dtype());
  fill(out, 0);
  Tensor s = contiguous(src);
  // shape viewed as (outer, shape[dim], inner); src as (outer, n, inner).
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (int64_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = static_cast<int64_t>(ids.size());
  dispatch_float(src.dtype(), "index_add", [&]<class T>() {
    const T* ps = s.data<T>();
    T* po = out.data<T>();
    for (int64_t j = 0; j < n; ++j) {
      int64_t i = checked_index(ids[j], shape[dim], "index_add", dim);
      if (skip && ids[j] == *skip) continue;
      for (int64_t o = 0; o < outer; ++o) {
        T* dst = po + (o * shape[dim] + i) * inner;
        const T* from = ps + (o * n + j) * inner;
        for (int64_t k = 0; k < inner; ++k) dst[k] += from[k];
      }
    }
  });
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  if (is_half(x)) return to_half(gather(as_f32(x), dim, index), x.dtype());
  check_gather_shapes(x.shape(), dim, index, "gather");
  Tensor idx = contiguous(index);
  const int64_t* pi = idx.data<int64_t>();
  Tensor out = empty(index.shape(), x.dtype());
  dispatch_all(x.dtype(), "gather", [&]<class T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for_each_index(index.shape(), [&](const Dims& at, int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < at.size(); ++d)
        off += (d == dim ? checked_index(pi[k], x.shape()[dim], "gather", dim) : at[d]) * x.strides()[d];
      po[k] = px[off];
    });
  });
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  if (is_half(src)) return to_half(scatter_add(shape, dim, index, as_f32(src)), src.dtype());
  check_gather_shapes(shape, dim, index, "scatter_add");
  Tensor idx = contiguous(index), s = contiguous(src);
  const int64_t* pi = idx.data<int64_t>();
  Tensor out = empty(shape, src.dtype());
  fill(out, 0);
  Strides st = contiguous_strides(shape);
  dispatch_float(src.dtype(), "scatter_add", [&]<class T>() {
    const T* ps = s.data<T>();
    T* po = out.data<T>();
    for_each_index(index.shape(), [&](const Dims& at, int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < at.size(); ++d)
        off += (d == dim ? checked_index(pi[k], shape[dim], "scatter_add", dim) : at[d]) * st[d];
      po[off] += ps[k];
    });
  });
  return out;
}

}  // namespace ag::kernels
