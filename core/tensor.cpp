// Tensor handle: layout access, element access, in-place writes and autograd fields.
// View and math methods forward to the differentiable ops in ops/.
#include "attograd/tensor.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "attograd/autograd.h"
#include "attograd/ops.h"
#include "kernels/kernels.h"

namespace ag {

Tensor::Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype)
    : impl_(std::make_shared<TensorImpl>()) {
  AG_ASSERT(shape.size() == strides.size(), "Tensor: shape ", shape, " and strides ", strides);
  impl_->storage = std::move(storage);
  impl_->shape = shape;
  impl_->strides = strides;
  impl_->offset = offset;
  impl_->dtype = dtype;
}

void Tensor::throw_undefined() {
  throw ValueError("Tensor: the tensor is undefined (default-constructed)");
}

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim(), "size")]; }

bool Tensor::is_contiguous() const {
  const auto& s = shape();
  const auto& st = strides();
  int64_t expected = 1;
  for (int64_t i = s.size() - 1; i >= 0; --i) {
    if (s[i] != 1 && st[i] != expected) return false;
    expected *= s[i];
  }
  return true;
}

template <class T>
T* Tensor::data() const {
  AG_CHECK(dtype() == dtype_v<T>, DTypeError, "data: tensor has dtype ", dtype(),
           ", requested ", dtype_v<T>);
  return static_cast<T*>(raw_data());
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = kernels::convert(*this, dtype_v<T>);  // contiguous, fresh or self
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

template <class T>
T Tensor::item() const {
  AG_CHECK(numel() == 1, ValueError, "item: expected a tensor with one element, got shape ",
           shape());
  return to_vector<T>()[0];
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  AG_CHECK(static_cast<int64_t>(values.size()) == ag::numel(shape), ShapeError,
           "from_vector: ", values.size(), " values cannot fill shape ", shape, " (",
           ag::numel(shape), " elements)");
  Tensor t = kernels::empty(shape, dtype_v<T>);
  T* p = t.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

#define AG_INSTANTIATE(T)                                                   \
  template T* Tensor::data<T>() const;                                      \
  template std::vector<T> Tensor::to_vector<T>() const;                     \
  template T Tensor::item<T>() const;                                       \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&);
AG_INSTANTIATE(float)
AG_INSTANTIATE(double)
AG_INSTANTIATE(int32_t)
AG_INSTANTIATE(int64_t)
AG_INSTANTIATE(bool)
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
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t len) const {
  return ag::narrow(*this, d, start, len);
}
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ag::flatten(*this, s, e); }
Tensor Tensor::contiguous() const { return ag::contiguous(*this); }
Tensor Tensor::clone() const { return ag::clone(*this); }
Tensor Tensor::to(DType t) const { return ag::to(*this, t); }
Tensor Tensor::sum() const { return ag::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& d, bool k) const { return ag::sum(*this, d, k); }
Tensor Tensor::mean() const { return ag::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& d, bool k) const { return ag::mean(*this, d, k); }

// ---- autograd fields ----

Tensor& Tensor::requires_grad_(bool on) {
  AG_CHECK(!on || is_floating_point(), DTypeError,
           "requires_grad_: only floating tensors can require grad, got dtype ", dtype());
  AG_CHECK(is_leaf() || on, AutogradError,
           "requires_grad_: cannot turn off requires_grad of a non-leaf tensor; use detach()");
  impl_->requires_grad = on;
  return *this;
}


Tensor Tensor::grad() const {
  const auto& g = checked().grad;
  return g ? Tensor(g) : Tensor();
}

void Tensor::set_grad(const Tensor& g) {
  checked();
  if (g.defined())
    AG_CHECK(g.shape() == shape() && g.dtype() == dtype(), ShapeError, "set_grad: gradient ",
             g.shape(), " ", g.dtype(), " does not match tensor ", shape(), " ", dtype());
  impl_->grad = g.impl_ptr();
}

void Tensor::zero_grad() { checked(), impl_->grad.reset(); }

RemovableHandle Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) {
  checked();
  AG_CHECK(is_leaf() && requires_grad(), AutogradError, "register_post_accumulate_grad_hook: the tensor of "
           "shape ", shape(), " is not a leaf that requires grad");
  AG_CHECK(hook != nullptr, ValueError, "register_post_accumulate_grad_hook: empty hook");
  static std::atomic<int64_t> next_id{0};  // threads may register hooks on their own models
  const int64_t id = ++next_id;
  impl_->post_accumulate_grad_hooks.emplace_back(id, std::move(hook));
  return RemovableHandle(impl_, id);
}

void RemovableHandle::remove() {
  if (auto t = t_.lock()) {
    auto& hooks = t->post_accumulate_grad_hooks;
    std::erase_if(hooks, [&](const auto& h) { return h.first == id_; });
  }
  t_.reset();
}

Tensor Tensor::detach() const {
  const auto& t = checked();
  return Tensor(t.storage, t.shape, t.strides, t.offset, t.dtype);
}

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  run_backward({*this}, {grad}, retain_graph.value_or(create_graph), create_graph);
}

}  // namespace ag
