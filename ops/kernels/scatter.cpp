// Scatter, masked and one-hot kernels. Inputs are made contiguous first: these ops
// run on index-sized data where a plain loop is clear and fast enough.
#include "kernels/scatter.h"

#include "kernels/kernels.h"
#include "kernels/half.h"

namespace ag::kernels {

void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  Tensor idx = convert(index, DType::i64);  // contiguous; index itself when it already is
  const int64_t* p = idx.data<int64_t>();
  for (int64_t k = 0; k < idx.numel(); ++k)
    AG_CHECK(p[k] >= 0 && p[k] < size, IndexError, op, ": index ", p[k], " is out of bounds for dimension ", dim,
             " with size ", size, " (index shape ", index.shape(), ")");
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, double value) {
  if (is_half(x)) return to_half(scatter(as_f32(x), dim, index, as_f32(src), value), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  copy(x, out);
  if (index.numel() == 0) return out;
  Tensor idx = contiguous(index);
  Tensor s = src.defined() ? contiguous(src) : Tensor{};
  const int64_t* pi = idx.data<int64_t>();
  const Strides st = out.strides();
  const Shape& is = index.shape();
  dispatch_all(x.dtype(), "scatter", [&]<class T>() {
    T* po = out.data<T>();
    const T* ps = s.defined() ? s.data<T>() : nullptr;
    const T v = static_cast<T>(value);
    Dims at = Dims::filled(is.size(), 0);
    for (int64_t k = 0; k < index.numel(); ++k) {
      int64_t off = 0;
      for (int64_t d = 0; d < is.size(); ++d) off += (d == dim ? pi[k] : at[d]) * st[d];
      po[off] = ps ? ps[k] : v;
      for (int64_t d = is.size() - 1; d >= 0; --d) {
        if (++at[d] < is[d]) break;
        at[d] = 0;
      }
    }
  });
  return out;
}

int64_t count_true(const Tensor& mask) {
  Tensor m = contiguous(mask);
  const bool* pm = m.data<bool>();
  int64_t n = 0;
  for (int64_t k = 0; k < m.numel(); ++k) n += pm[k] ? 1 : 0;
  return n;
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  if (is_half(x)) return to_half(masked_select(as_f32(x), mask), x.dtype());
  Tensor xc = contiguous(x), m = contiguous(mask);
  const bool* pm = m.data<bool>();
  Tensor out = empty(Shape{count_true(m)}, x.dtype());
  dispatch_all(x.dtype(), "masked_select", [&]<class T>() {
    const T* px = xc.data<T>();
    T* po = out.data<T>();
    for (int64_t k = 0, j = 0; k < m.numel(); ++k)
      if (pm[k]) po[j++] = px[k];
  });
  return out;
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  if (is_half(x)) return to_half(masked_scatter(as_f32(x), mask, as_f32(source)), x.dtype());
  Tensor out = empty(x.shape(), x.dtype());
  copy(x, out);
  Tensor m = contiguous(mask), s = contiguous(source);
  const bool* pm = m.data<bool>();
  dispatch_all(x.dtype(), "masked_scatter", [&]<class T>() {
    T* po = out.data<T>();
    const T* ps = s.data<T>();
    for (int64_t k = 0, j = 0; k < m.numel(); ++k)
      if (pm[k]) po[k] = ps[j++];
  });
  return out;
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  Shape s = indices.shape();
  s.push_back(num_classes);
  Tensor out = empty(s, DType::i64);
  fill(out, 0);
  Tensor idx = contiguous(indices);
  const int64_t* pi = idx.data<int64_t>();
  int64_t* po = out.data<int64_t>();
  for (int64_t k = 0; k < idx.numel(); ++k) po[k * num_classes + pi[k]] = 1;
  return out;
}

}  // namespace ag::kernels
