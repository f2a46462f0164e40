#pragma once
/// \file
/// Tensor: a cheap handle (one shared_ptr) to a TensorImpl = storage + layout + dtype,
/// plus the autograd fields (requires_grad, the node that made it, its .grad).
/// Views (reshape of contiguous, transpose, permute, slice, expand, ...) share storage.
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <string_view>
#include <utility>
#include <vector>

#include "attograd/dtype.h"
#include "attograd/scalar.h"
#include "attograd/shape.h"
#include "attograd/storage.h"

namespace ag {

struct Node;  ///< autograd graph node (attograd/autograd.h)
class Tensor;
namespace indexing {
class TensorIndex;  ///< attograd/tensor_indexing.h
}
class Generator;  ///< a random stream (attograd/generator.h)

namespace detail {
/// One dim where LibTorch takes an IntArrayRef (x.sum(0)): any integer but bool. A
/// template, so that a braced list (x.sum({}), x.var({0})) still picks the vector form.
template <class T>
concept SingleDim = std::integral<T> && !std::same_as<T, bool>;
}  // namespace detail

/// Called with the leaf once its .grad holds the whole gradient of a backward.
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;
/// Tensor::register_hook: called with a tensor's whole gradient of a backward; returns
/// a replacement, or an undefined Tensor to keep it (PyTorch's hook returning None).
using TensorHook = std::function<Tensor(const Tensor& grad)>;

/// What a Tensor handle points at: storage + layout + dtype, and the autograd fields.
struct TensorImpl {
  /// The shared flat buffer.
  StoragePtr storage;
  /// Sizes per dim.
  Shape shape;
  Strides strides;     ///< in elements
  int64_t offset = 0;  ///< in elements
  /// The element type of the storage.
  DType dtype = DType::f32;
  bool is_view = false;  ///< made by a view op over another tensor's storage

  /// Whether backward computes a gradient for this tensor.
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  ///< null for leaves; never points back at this impl
  /// The accumulated gradient (leaves), or null.
  std::shared_ptr<TensorImpl> grad;
  /// Leaves only: run once per backward, when every gradient for this leaf in that
  /// backward has been added into .grad (Tensor::register_post_accumulate_grad_hook).
  std::vector<std::pair<int64_t, PostAccumulateGradHook>> post_accumulate_grad_hooks;
  /// Leaves only: Tensor::register_hook's hooks, run on the leaf's whole gradient of a
  /// pass before it is added into .grad (or returned by ag::grad). A non-leaf's hooks
  /// live on its grad_fn (Node::tensor_pre_hooks), as in PyTorch.
  std::vector<std::pair<int64_t, TensorHook>> hooks;
  /// Non-leaves: retain_grad() was called (its grad_fn stores the gradient here).
  bool retains_grad = false;
};

/// Returned by the register_*hook functions (tensors and modules); remove() unregisters
/// the hook (PyTorch's RemovableHandle). It does not keep the tensor or module alive.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  /// A handle whose remove() calls `remover` once (it must hold only weak references).
  explicit RemovableHandle(std::function<void()> remover) : remover_(std::move(remover)) {}
  /// The post-accumulate-grad or tensor hook `id` of tensor t.
  RemovableHandle(std::weak_ptr<TensorImpl> t, int64_t id);
  /// Unregisters the hook; a no-op when already removed or the tensor is gone.
  void remove();

 private:
  std::function<void()> remover_;
};

namespace detail {
/// A process-wide unique id for a hook (threads may register hooks on their own models).
int64_t next_hook_id();
}  // namespace detail

/// A cheap handle to a strided view of shared storage, with its autograd state; copies
/// share the tensor (like torch.Tensor). Tensor{} is undefined.
class Tensor {
 public:
  Tensor() = default;  ///< undefined
  /// Wraps an existing impl (shares it).
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  /// A view or fresh tensor over `storage` with the given layout.
  Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }  ///< false for Tensor{} (an absent optional input or gradient)
  TensorImpl* impl() const { return impl_.get(); }   ///< the shared state; null when undefined
  const std::shared_ptr<TensorImpl>& impl_ptr() const {
    return impl_;
  }  ///< the owning pointer (for hooks and weak references)

  // ---- layout ----
  // The accessors are inline (every kernel and op calls them several times); an
  // undefined tensor throws ValueError from each.
  const Shape& shape() const { return checked().shape; }        ///< sizes per dim
  const Strides& strides() const { return checked().strides; }  ///< steps per dim, in elements; 0 on broadcast dims
  int64_t offset() const { return checked().offset; }           ///< first element's index in the storage, in elements
  int64_t dim() const { return shape().size(); }                ///< number of dims; 0 for a scalar tensor
  int64_t size(int64_t d) const;                                ///< size of dim d (negative d counts from the end)
  int64_t stride(int64_t d) const;                      ///< stride of dim d in elements (negative d from the end)
  int64_t numel() const { return ag::numel(shape()); }  ///< product of the sizes; 1 for shape []
  DType dtype() const { return checked().dtype; }       ///< the element type
  bool is_floating_point() const { return is_floating(dtype()); }  ///< f32 or f64
  bool is_contiguous() const;  ///< row-major with no gaps (strides of a fresh tensor)
  const StoragePtr& storage() const { return checked().storage; }  ///< the buffer, shared with every view
  bool shares_storage(const Tensor& other) const {
    return storage() == other.storage();
  }  ///< same buffer (one is a view of the other)

  // ---- element access ----
  /// Pointer to the first element (storage + offset); T must match dtype().
  template <class T>
  T* data() const;
  /// data() without a dtype check.
  void* raw_data() const {
    const TensorImpl& t = checked();
    return static_cast<char*>(t.storage->data()) + t.offset * static_cast<int64_t>(itemsize(t.dtype));
  }
  template <class T>
  T item() const;  ///< one element, converted to T
  template <class T>
  std::vector<T> to_vector() const;  ///< row-major copy, converted to T
  /// A copy of values with the given shape (numel must match) and dtype_of<T>.
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  /// A 1-D copy of values, dtype_of<T>.
  template <class T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{static_cast<int64_t>(values.size())});
  }

  // ---- views and copies (differentiable; see ops/) ----
  Tensor reshape(const Shape& shape) const;                ///< view when strides allow, else a copy
  Tensor view(const Shape& shape) const;                   ///< view or ShapeError
  Tensor transpose(int64_t d0, int64_t d1) const;          ///< view with d0 and d1 swapped
  Tensor t() const;                                        ///< transpose of a 2-D tensor
  Tensor permute(const std::vector<int64_t>& dims) const;  ///< view: dim i is old dim dims[i]
  Tensor unsqueeze(int64_t d) const;                       ///< view with a size-1 dim inserted at d
  Tensor squeeze() const;                                  ///< view without any size-1 dim
  Tensor squeeze(int64_t d) const;                         ///< view without dim d when its size is 1, else self
  /// View broadcast to shape (stride 0 on new or size-1 dims); -1 keeps a dim.
  Tensor expand(const Shape& shape) const;
  /// View of [start, end) by step along dim.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  /// View at index along dim, dim removed.
  Tensor select(int64_t dim, int64_t index) const;
  /// View of [start, start + length) along dim.
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  /// Dims start_dim..end_dim merged into one.
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor contiguous() const;     ///< self when already contiguous
  Tensor clone() const;          ///< always a fresh contiguous copy
  Tensor to(DType dtype) const;  ///< self when dtype matches

  // ---- reductions (differentiable; see ops/) ----
  /// ag::sum: over all elements (shape []) or over dims.
  Tensor sum() const;
  /// ag::sum: over all elements (shape []) or over dims.
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  /// ag::mean: over all elements (shape []) or over dims.
  Tensor mean() const;
  /// ag::mean: over all elements (shape []) or over dims.
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;

  // ---- indexing (ops/tensor_index.cpp; the index types and rules: tensor_indexing.h) ----
  /// LibTorch's Tensor::index, Python's x[...]: x.index({Slice(), None, 0, Ellipsis, idx}).
  /// A view without tensor indices, else a copy; differentiable.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  /// The same with the index list as a vector.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  /// LibTorch's x[i]: the i-th entry along dim 0, a view (index({i}); negative i counts
  /// from the end; IndexError when out of range).
  Tensor operator[](int64_t i) const;
  /// LibTorch's x[idx] with a tensor index: index({idx}) (integer: those rows, bool: a mask).
  Tensor operator[](const Tensor& idx) const;
  /// Python's x[...] = values: values broadcast to the indexed shape (a Scalar fills it).
  /// Tensor indices need values of self's dtype (DTypeError, as PyTorch); a basic index
  /// converts them, as copy_. In-place rules as the ops below.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values);
  /// x[...] = value.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value);
  /// x[...] = values, the index list as a vector.
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values);
  /// x[...] = value, the index list as a vector.
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value);
  /// torch's index_put_(indices, values, accumulate): one index tensor per leading dim (an
  /// undefined one takes the whole dim); accumulate adds, repeated indices adding up.
  Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);
  /// ag::index_put: the out-of-place form.
  Tensor index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false) const;
  Tensor nonzero() const;   ///< ag::nonzero
  Tensor argwhere() const;  ///< ag::argwhere

  // ---- math methods (ops/tensor_methods_math.cpp, ops/tensor_methods_shape.cpp) ----
  // LibTorch's Tensor methods for the pointwise, activation, reduction, shape, comparison
  // and indexing ops (x.exp(), x.sum(0), x.max(1), x.softmax(-1), ...), each forwarding
  // to ag::<name>; declared in a file of their own to keep this one short. (Doxygen cannot
  // follow an include inside a class: the reference skips them; the .inl documents them.)
#ifndef AG_DOXYGEN
#include "attograd/detail/tensor_method_decls.inl"
#endif
  // ---- end of math methods ----

  // ---- in-place (ops/inplace.cpp) ----
  /// Each bumps the storage version, so tensors saved for backward notice the write.
  /// Inside the graph (self, or an operand, requires grad and grad mode is on) the op is
  /// recorded and self becomes its result, as in PyTorch; a leaf that requires grad and
  /// a view refuse there (AutogradError). Under NoGradGuard they write plainly (how
  /// optimizers update parameters).
  Tensor& fill_(Scalar value);  ///< converted to dtype(), as a cast
  /// In place: every element 0.
  Tensor& zero_() { return fill_(0.0); }
  Tensor& copy_(const Tensor& src);  ///< broadcasts src into self, converting dtype
  /// In place: self += alpha * other (other broadcasts to self), or += value.
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  /// In place: self += alpha * other (other broadcasts to self), or += value.
  Tensor& add_(Scalar value);
  /// In place: self -= alpha * other, or -= value.
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  /// In place: self -= alpha * other, or -= value.
  Tensor& sub_(Scalar value);
  /// In place: self *= other (broadcast) or value.
  Tensor& mul_(const Tensor& other);
  /// In place: self *= other (broadcast) or value.
  Tensor& mul_(Scalar value);
  /// In place: self /= other (broadcast) or value.
  Tensor& div_(const Tensor& other);
  /// In place: self /= other (broadcast) or value.
  Tensor& div_(Scalar value);
  /// In place: -self.
  Tensor& neg_();
  /// In place: exp(self).
  Tensor& exp_();
  /// In place: max(self, 0).
  Tensor& relu_();
  /// In place: sigmoid(self).
  Tensor& sigmoid_();
  /// In place: tanh(self).
  Tensor& tanh_();
  /// In place: limited to [min, max].
  Tensor& clamp_(std::optional<double> min, std::optional<double> max);
  /// In place: value where mask (broadcast to self) is true.
  Tensor& masked_fill_(const Tensor& mask, Scalar value);

  // ---- autograd ----
  /// Whether backward computes a gradient for this tensor.
  bool requires_grad() const { return checked().requires_grad; }
  /// Marks a leaf as a parameter (or not); AutogradError on non-leaves.
  Tensor& requires_grad_(bool on = true);
  /// Made by the user, not by a recorded op.
  bool is_leaf() const { return checked().grad_fn == nullptr; }
  /// The node that made this tensor; null for leaves.
  const std::shared_ptr<Node>& grad_fn() const { return checked().grad_fn; }
  Tensor grad() const;  ///< undefined until a backward reaches this leaf
  /// Replaces .grad (shape-checked); an undefined g clears it.
  void set_grad(const Tensor& g);
  void zero_grad();  ///< drops .grad
  /// PyTorch's register_post_accumulate_grad_hook: on a leaf that requires grad, `hook`
  /// runs during each backward (not ag::grad) right after the last gradient for this
  /// leaf in that pass has been added into .grad, with the leaf as argument: the moment
  /// DistributedDataParallel starts reducing it while the rest of backward goes on.
  RemovableHandle register_post_accumulate_grad_hook(PostAccumulateGradHook hook);
  /// PyTorch's Tensor.register_hook, on a tensor that requires grad (AutogradError
  /// otherwise). `hook(grad)` runs once per backward / ag::grad with the tensor's whole
  /// gradient of that pass: for a non-leaf before it flows into grad_fn, for a leaf
  /// before it is added into .grad (or returned by ag::grad). It returns a replacement
  /// of the same shape and dtype, which flows on instead, or an undefined Tensor to keep
  /// the gradient; a hook returning void is accepted too. Hooks run in registration
  /// order, each on the previous one's result, in the backward's grad mode (recorded
  /// under create_graph).
  RemovableHandle register_hook(TensorHook hook);
  /// register_hook for a hook that returns nothing (it only looks at the gradient).
  template <class F>
  requires std::is_void_v<std::invoke_result_t<F&, const Tensor&>> RemovableHandle register_hook(F hook) {
    return register_hook(TensorHook([hook = std::move(hook)](const Tensor& g) mutable {
      hook(g);
      return Tensor();
    }));
  }
  /// PyTorch's retain_grad: on a non-leaf, backward (and ag::grad passes through it)
  /// stores its gradient in .grad, after its hooks, adding it to what is there (out of
  /// place); a no-op on a leaf. AutogradError when the tensor does not require grad.
  void retain_grad() const;
  /// Whether retain_grad() was called on this non-leaf (false for leaves, as PyTorch).
  bool retains_grad() const { return checked().retains_grad; }
  Tensor detach() const;  ///< shares storage, no graph
  /// Backpropagates from this tensor. `grad` defaults to 1 for a one-element tensor.
  /// create_graph records the backward pass (for gradients of gradients); retain_graph
  /// defaults to create_graph. As in PyTorch, a leaf's .grad made that way holds a graph
  /// that holds the leaf (a reference cycle): call zero_grad() when done with it, or
  /// prefer ag::grad(..., create_graph = true), which touches no .grad.
  void backward(const Tensor& grad = {}, std::optional<bool> retain_graph = {}, bool create_graph = false) const;

  /// Shape, dtype and values, as operator<< prints them.
  std::string to_string() const;

 private:
  const TensorImpl& checked() const {
    if (!impl_) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

/// Prints the value (name, tensor or module tree).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// torch.allclose: a and b broadcast (ShapeError otherwise) and everywhere a == b or
/// |a - b| <= atol + rtol * |b| with |a - b| finite (so infinities equal only themselves);
/// NaNs are equal only with equal_nan. Mixed or integer dtypes compare in f64 (PyTorch
/// requires one dtype). Defined in ops/comparison.cpp beside isclose.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

}  // namespace ag

// The index types need the complete Tensor (attograd/tensor_indexing.h includes this file).
#include "attograd/tensor_indexing.h"  // IWYU pragma: export
