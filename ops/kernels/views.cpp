// Views without autograd: see kernels/views.h.
#include "kernels/views.h"

#include <attograd/error.h>

#include "kernels/kernels.h"

namespace ag::kernels {

namespace {

int64_t wrap_dim(int64_t d, int64_t n, const char* fn, const Tensor& x) {
  AG_CHECK(d >= -n && d < n, IndexError, fn, ": dim ", d, " is out of range for shape ", x.shape());
  return d < 0 ? d + n : d;
}

}  // namespace

Tensor alias(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl()->storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = x.dtype();
  impl->is_view = true;
  return Tensor(std::move(impl));
}

Tensor transpose_view(const Tensor& x, int64_t d0, int64_t d1) {
  d0 = wrap_dim(d0, x.dim(), "kernels::transpose_view", x);
  d1 = wrap_dim(d1, x.dim(), "kernels::transpose_view", x);
  Shape shape = x.shape();
  Strides strides = x.strides();
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return alias(x, shape, strides, x.offset());
}

Tensor narrow_view(const Tensor& x, int64_t d, int64_t start, int64_t length) {
  d = wrap_dim(d, x.dim(), "kernels::narrow_view", x);
  AG_CHECK(start >= 0 && length >= 0 && start <= x.size(d) - length, IndexError, "kernels::narrow_view: start ", start,
           " and length ", length, " do not fit dim ", d, " of shape ", x.shape());
  Shape shape = x.shape();
  shape[d] = length;
  return alias(x, shape, x.strides(), x.offset() + start * x.stride(d));
}

Tensor select_view(const Tensor& x, int64_t d, int64_t index) {
  d = wrap_dim(d, x.dim(), "kernels::select_view", x);
  AG_CHECK(index >= 0 && index < x.size(d), IndexError, "kernels::select_view: index ", index,
           " is out of range for dim ", d, " of shape ", x.shape());
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.erase(d);
  strides.erase(d);
  return alias(x, shape, strides, x.offset() + index * x.stride(d));
}

Tensor unsqueeze_view(const Tensor& x, int64_t d) {
  d = wrap_dim(d, x.dim() + 1, "kernels::unsqueeze_view", x);
  Shape shape = x.shape();
  Strides strides = x.strides();
  // The stride of a size-1 dim is never used to step; this one keeps a contiguous x so.
  const int64_t stride = d < x.dim() ? x.stride(d) * x.size(d) : 1;
  shape.insert(d, 1);
  strides.insert(d, stride);
  return alias(x, shape, strides, x.offset());
}

Tensor reshape_view(const Tensor& x, const Shape& shape) {
  AG_CHECK(x.is_contiguous() && numel(shape, "kernels::reshape_view") == x.numel(), ShapeError,
           "kernels::reshape_view: a contiguous tensor of shape ", x.shape(), " cannot be seen as ", shape);
  return alias(x, shape, contiguous_strides(shape), x.offset());
}

template <class T>
std::vector<T> values(const Tensor& x) {
  Tensor c = convert(x, dtype_v<T>);  // contiguous, fresh or x itself
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

// Every element type Tensor::to_vector offers (it calls this).
template std::vector<float> values<float>(const Tensor&);
template std::vector<double> values<double>(const Tensor&);
template std::vector<int32_t> values<int32_t>(const Tensor&);
template std::vector<int64_t> values<int64_t>(const Tensor&);
template std::vector<bool> values<bool>(const Tensor&);
template std::vector<BFloat16> values<BFloat16>(const Tensor&);
template std::vector<Half> values<Half>(const Tensor&);
template std::vector<int8_t> values<int8_t>(const Tensor&);
template std::vector<uint8_t> values<uint8_t>(const Tensor&);

}  // namespace ag::kernels
