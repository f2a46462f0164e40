// Tensor handle: layout access, element access and autograd fields. The methods that
// compute (views, reductions, to_vector, in-place writes) are defined by the ops layer
// (ops/tensor_methods.cpp, ops/inplace.cpp), backward() by the engine
// (core/autograd/engine.cpp), as PyTorch defines Tensor's methods in ATen.
#include "attograd/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "attograd/tape.h"

namespace ag {

namespace {

// PyTorch's as_strided / setStorage checks, for every tensor made from raw parts (views
// included): sizes >= 0 with an int64 element count, strides and offset >= 0 (negative
// strides are not supported), and the last reachable element inside the storage. An
// empty tensor reads nothing, so any storage holds it (as in PyTorch); its offset, when
// beyond the storage, becomes the storage's end, so that data() (offset * itemsize) is
// neither an overflow nor a pointer far past the buffer. Overflow-safe: a reach beyond
// int64 is out of bounds too. Returns the offset to keep.
int64_t check_layout(const Storage* storage, const Shape& shape, const Strides& strides, int64_t offset, DType dtype) {
  AG_CHECK(shape.size() == strides.size(), ShapeError, "Tensor: shape ", shape, " and strides ", strides,
           " have different numbers of dims");
  const int64_t n = numel(shape, "Tensor");
  AG_CHECK(offset >= 0, ValueError, "Tensor: invalid storage offset ", offset, " (shape ", shape, ", strides ", strides,
           ")");
  for (int64_t st : strides)
    AG_CHECK(st >= 0, ValueError, "Tensor: negative strides are not supported, got strides ", strides, " (shape ",
             shape, ", storage offset ", offset, ")");
  AG_CHECK(storage != nullptr, ValueError, "Tensor: null storage for shape ", shape);
  const int64_t item = static_cast<int64_t>(itemsize(dtype));
  const int64_t have = static_cast<int64_t>(storage->nbytes());
  if (n == 0) return std::min(offset, have / item);
  int64_t last = offset, step = 0, need = 0;  // last reachable element, then bytes needed
  bool overflow = false;
  for (int64_t i = 0; i < shape.size(); ++i)
    overflow = overflow || __builtin_mul_overflow(shape[i] - 1, strides[i], &step) ||
               __builtin_add_overflow(last, step, &last);
  overflow = overflow || __builtin_add_overflow(last, 1, &need) || __builtin_mul_overflow(need, item, &need);
  AG_CHECK(!overflow && need <= have, IndexError, "Tensor: sizes ", shape, ", strides ", strides, ", storage offset ",
           offset, " and itemsize ", item, " (", dtype, ") requiring a storage size of ",
           overflow ? std::string("more than int64 bytes") : detail::cat(need, " bytes"),
           " are out of bounds for storage of size ", have, " bytes");
  return offset;
}

}  // namespace

Tensor::Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype)
    : impl_(std::make_shared<TensorImpl>()) {
  offset = check_layout(storage.get(), shape, strides, offset, dtype);
  impl_->storage = std::move(storage);
  impl_->shape = std::move(shape);
  impl_->strides = std::move(strides);
  impl_->offset = offset;
  impl_->dtype = dtype;
}

void Tensor::throw_undefined() { throw ValueError("Tensor: the tensor is undefined (default-constructed)"); }

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }

bool Tensor::is_contiguous() const {
  const auto& s = shape();
  if (ag::numel(s) == 0) return true;  // no element to misplace, as PyTorch (any strides)
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
  AG_CHECK(dtype() == dtype_v<T>, DTypeError, "data: tensor has dtype ", dtype(), ", requested ", dtype_v<T>);
  return static_cast<T*>(raw_data());
}

#define AG_INSTANTIATE(T) template T* Tensor::data<T>() const;
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

// ---- autograd fields ----

Tensor& Tensor::requires_grad_(bool on) {
  AG_CHECK(!on || is_floating_point(), DTypeError, "requires_grad_: only floating tensors can require grad, got dtype ",
           dtype());
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
    AG_CHECK(g.shape() == shape() && g.dtype() == dtype(), ShapeError, "set_grad: gradient ", g.shape(), " ", g.dtype(),
             " does not match tensor ", shape(), " ", dtype());
  impl_->grad = g.impl_ptr();
}

void Tensor::zero_grad() { checked(), impl_->grad.reset(); }

int64_t detail::next_hook_id() {
  static std::atomic<int64_t> next_id{0};  // threads may register hooks on their own models
  return ++next_id;
}

RemovableHandle Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) {
  checked();
  AG_CHECK(is_leaf() && requires_grad(), AutogradError,
           "register_post_accumulate_grad_hook: the tensor of "
           "shape ",
           shape(), " is not a leaf that requires grad");
  AG_CHECK(hook != nullptr, ValueError, "register_post_accumulate_grad_hook: empty hook");
  const int64_t id = detail::next_hook_id();
  impl_->post_accumulate_grad_hooks.emplace_back(id, std::move(hook));
  return RemovableHandle(impl_, id);
}

RemovableHandle Tensor::register_hook(TensorHook hook) {
  checked();
  AG_CHECK(requires_grad(), AutogradError,
           "register_hook: cannot register a hook on a tensor that doesn't require gradient (shape ", shape(), ")");
  AG_CHECK(hook != nullptr, ValueError, "register_hook: empty hook");
  const int64_t id = detail::next_hook_id();
  if (is_leaf()) {
    impl_->hooks.emplace_back(id, std::move(hook));
    return RemovableHandle(impl_, id);
  }
  // A non-leaf's hooks sit on the node that made it, as PyTorch's tensor pre-hooks: the
  // engine sees nodes, and every handle to this value (a Saved one too) shares it.
  grad_fn()->tensor_pre_hooks.emplace_back(id, std::move(hook));
  return RemovableHandle([node = std::weak_ptr<Node>(grad_fn()), id] {
    if (auto n = node.lock()) std::erase_if(n->tensor_pre_hooks, [&](const auto& h) { return h.first == id; });
  });
}

void Tensor::retain_grad() const {
  checked();
  AG_CHECK(requires_grad(), AutogradError,
           "retain_grad: can't retain_grad on Tensor that has requires_grad=False (shape ", shape(), ")");
  if (is_leaf()) return;  // a leaf's .grad is kept anyway
  impl_->retains_grad = true;
  grad_fn()->retains_grad = impl_;
}

RemovableHandle::RemovableHandle(std::weak_ptr<TensorImpl> t, int64_t id)
    : remover_([t = std::move(t), id] {
        if (auto p = t.lock()) {
          std::erase_if(p->post_accumulate_grad_hooks, [&](const auto& h) { return h.first == id; });
          std::erase_if(p->hooks, [&](const auto& h) { return h.first == id; });
        }
      }) {}

void RemovableHandle::remove() {
  if (remover_) std::exchange(remover_, nullptr)();
}

Tensor Tensor::detach() const {
  const auto& t = checked();
  return Tensor(t.storage, t.shape, t.strides, t.offset, t.dtype);
}

}  // namespace ag
