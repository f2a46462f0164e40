// Tensor's methods that compute (declared in attograd/tensor.h, core): conversion to and
// from vectors through the kernels, and the view and reduction methods, which forward to
// the differentiable ops. They live in the ops layer, as PyTorch's Tensor methods live in
// ATen, so that core never reaches up into the ops.
#include "attograd/ops.h"
#include "kernels/kernels.h"
#include "kernels/views.h"

namespace ag {

template <class T>
std::vector<T> Tensor::to_vector() const {
  return kernels::values<T>(*this);
}

template <class T>
T Tensor::item() const {
  AG_CHECK(numel() == 1, ValueError, "item: expected a tensor with one element, got shape ", shape());
  return to_vector<T>()[0];
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  const int64_t n = ag::numel(shape, "from_vector");  // negative dims throw here
  AG_CHECK(static_cast<int64_t>(values.size()) == n, ShapeError, "from_vector: ", values.size(),
           " values cannot fill shape ", shape, " (", n, " elements)");
  Tensor t = kernels::empty(shape, dtype_v<T>);
  T* p = t.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

#define AG_INSTANTIATE(T) \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const; \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&);
AG_INSTANTIATE(float)
AG_INSTANTIATE(double)
AG_INSTANTIATE(int32_t)
AG_INSTANTIATE(int64_t)
AG_INSTANTIATE(bool)
AG_INSTANTIATE(BFloat16)
AG_INSTANTIATE(Half)
AG_INSTANTIATE(int8_t)
AG_INSTANTIATE(uint8_t)
#undef AG_INSTANTIATE

// ---- forwarding methods ----
Tensor Tensor::reshape(const Shape& s) const { return ag::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return ag::view(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ag::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
  AG_CHECK(dim() == 2, ShapeError, "t: expected a 2-D tensor, got shape ", shape());
  return ag::transpose(*this, 0, 1);
}
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return ag::permute(*this, dims); }
Tensor Tensor::unsqueeze(int64_t d) const { return ag::unsqueeze(*this, d); }
Tensor Tensor::squeeze() const { return ag::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return ag::squeeze(*this, d); }
Tensor Tensor::expand(const Shape& s) const { return ag::expand(*this, s); }
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return ag::slice(*this, d, start, end, step);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return ag::select(*this, d, i); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t len) const { return ag::narrow(*this, d, start, len); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ag::flatten(*this, s, e); }
Tensor Tensor::contiguous() const { return ag::contiguous(*this); }
Tensor Tensor::clone() const { return ag::clone(*this); }
Tensor Tensor::to(DType t) const { return ag::to(*this, t); }
Tensor Tensor::sum() const { return ag::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& d, bool k) const { return ag::sum(*this, d, k); }
Tensor Tensor::mean() const { return ag::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& d, bool k) const { return ag::mean(*this, d, k); }

}  // namespace ag
