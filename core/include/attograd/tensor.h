#pragma once
// Tensor: a cheap handle (one shared_ptr) to a TensorImpl = storage + layout + dtype,
// plus the autograd fields (requires_grad, the node that made it, its .grad).
// Views (reshape of contiguous, transpose, permute, slice, expand, ...) share storage.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attograd/dtype.h"
#include "attograd/scalar.h"
#include "attograd/shape.h"
#include "attograd/storage.h"

namespace ag {

struct Node;  // autograd graph node (attograd/autograd.h)
class Tensor;
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

struct TensorImpl {
  StoragePtr storage;
  Shape shape;
  Strides strides;  // in elements
  int64_t offset = 0;  // in elements
  DType dtype = DType::f32;
  bool is_view = false;  // made by a view op over another tensor's storage

  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves; never points back at this impl
  std::shared_ptr<TensorImpl> grad;
  // Leaves only: run once per backward, when every gradient for this leaf in that
  // backward has been added into .grad (Tensor::register_post_accumulate_grad_hook).
  std::vector<std::pair<int64_t, PostAccumulateGradHook>> post_accumulate_grad_hooks;
};

// Returned by Tensor::register_post_accumulate_grad_hook; remove() unregisters the hook
// (PyTorch's RemovableHandle). It does not keep the tensor alive.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<TensorImpl> t, int64_t id) : t_(std::move(t)), id_(id) {}
  void remove();

 private:
  std::weak_ptr<TensorImpl> t_;
  int64_t id_ = 0;
};

class Tensor {
 public:
  Tensor() = default;  // undefined
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  // A view or fresh tensor over `storage` with the given layout.
  Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // ---- layout ----
  const Shape& shape() const;
  const Strides& strides() const;
  int64_t offset() const;
  int64_t dim() const { return shape().size(); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return ag::numel(shape()); }
  DType dtype() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_contiguous() const;
  const StoragePtr& storage() const;
  bool shares_storage(const Tensor& other) const { return storage() == other.storage(); }

  // ---- element access ----
  // Pointer to the first element (storage + offset); T must match dtype().
  template <class T> T* data() const;
  void* raw_data() const;
  template <class T> T item() const;                // one element, converted to T
  template <class T> std::vector<T> to_vector() const;  // row-major copy, converted to T
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  template <class T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{static_cast<int64_t>(values.size())});
  }

  // ---- views and copies (differentiable; see ops/) ----
  Tensor reshape(const Shape& shape) const;  // view when strides allow, else a copy
  Tensor view(const Shape& shape) const;     // view or ShapeError
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;  // transpose of a 2-D tensor
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor expand(const Shape& shape) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor contiguous() const;  // self when already contiguous
  Tensor clone() const;       // always a fresh contiguous copy
  Tensor to(DType dtype) const;  // self when dtype matches

  // ---- reductions (differentiable; see ops/) ----
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;

  // ---- in-place (ops/inplace.cpp) ----
  // Each bumps the storage version, so tensors saved for backward notice the write.
  // Inside the graph (self, or an operand, requires grad and grad mode is on) the op is
  // recorded and self becomes its result, as in PyTorch; a leaf that requires grad and
  // a view refuse there (AutogradError). Under NoGradGuard they write plainly (how
  // optimizers update parameters).
  Tensor& fill_(Scalar value);  // converted to dtype(), as a cast
  Tensor& zero_() { return fill_(0.0); }
  Tensor& copy_(const Tensor& src);  // broadcasts src into self, converting dtype
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(Scalar value);
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  Tensor& sub_(Scalar value);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar value);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar value);
  Tensor& neg_();
  Tensor& exp_();
  Tensor& relu_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& clamp_(std::optional<double> min, std::optional<double> max);
  Tensor& masked_fill_(const Tensor& mask, Scalar value);

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);
  bool is_leaf() const;
  const std::shared_ptr<Node>& grad_fn() const;
  Tensor grad() const;  // undefined until a backward reaches this leaf
  void set_grad(const Tensor& g);
  void zero_grad();  // drops .grad
  // PyTorch's register_post_accumulate_grad_hook: on a leaf that requires grad, `hook`
  // runs during each backward (not ag::grad) right after the last gradient for this
  // leaf in that pass has been added into .grad, with the leaf as argument: the moment
  // DistributedDataParallel starts reducing it while the rest of backward goes on.
  RemovableHandle register_post_accumulate_grad_hook(PostAccumulateGradHook hook);
  Tensor detach() const;  // shares storage, no graph
  // Backpropagates from this tensor. `grad` defaults to 1 for a one-element tensor.
  // create_graph records the backward pass (for gradients of gradients); retain_graph
  // defaults to create_graph. As in PyTorch, a leaf's .grad made that way holds a graph
  // that holds the leaf (a reference cycle): call zero_grad() when done with it, or
  // prefer ag::grad(..., create_graph = true), which touches no .grad.
  void backward(const Tensor& grad = {}, std::optional<bool> retain_graph = {},
                bool create_graph = false) const;

  std::string to_string() const;

 private:
  const TensorImpl& checked() const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// torch.allclose: a and b broadcast (ShapeError otherwise) and everywhere a == b or
// |a - b| <= atol + rtol * |b| with |a - b| finite (so infinities equal only themselves);
// NaNs are equal only with equal_nan. Mixed or integer dtypes compare in f64 (PyTorch
// requires one dtype). Defined in ops/math.cpp beside isclose.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

}  // namespace ag
