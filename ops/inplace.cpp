// In-place ops. Outside the graph they write the result into self's storage. Inside it
// (grad mode on and self or an operand requires grad) they run the out-of-place op on a
// clone of self (so the op's saved tensors keep the old value), write the result into
// self and make self's node the op's node: self then stands for the new value, as in
// PyTorch. Refused there: a leaf that requires grad (its .grad would describe a value
// that no longer exists; optimizers write under NoGradGuard) and a view (its base would
// keep a graph that does not know of the write). Every write bumps the storage version,
// so a tensor saved for backward before the write throws VersionError when used.
// Before any write, as PyTorch's TensorIterator: self must not overlap itself (an
// expanded tensor would lose updates) and no operand may overlap self partially (ValueError,
// PyTorch's "unsupported operation" messages); an operand identical to self is fine.
#include <functional>

#include "attograd/detail/error_context.h"
#include "attograd/mem_overlap.h"
#include "op_util.h"

namespace ag {
namespace {

// A fresh contiguous copy of t (no graph): what goes into self when the value read could
// share memory with it (an op that returned its input, or an overlap too hard to decide).
Tensor fresh_copy(const Tensor& t) {
  Tensor out = K::empty(t.shape(), t.dtype());
  K::copy(t, out);
  return out;
}

// operands broadcast to self; `reads` are other tensors fn reads (any shape).
Tensor& apply_inplace(Tensor& self, const char* op, const std::vector<Tensor>& operands,
                      const std::function<Tensor(const Tensor&)>& fn, const std::vector<Tensor>& reads = {}) {
  bool in_graph = grad_enabled() && self.requires_grad();
  for (const Tensor& o : reads) {
    in_graph = in_graph || wants_grad(o);
    assert_no_partial_overlap(self, o, op);
  }
  assert_no_internal_overlap(self, op);
  for (const Tensor& o : operands) {
    in_graph = in_graph || wants_grad(o);
    AG_CHECK(broadcast_shapes(o.shape(), self.shape(), op) == self.shape(), ShapeError, op, ": shape ", o.shape(),
             " cannot be broadcast to ", self.shape());
    assert_no_partial_overlap(self, o, op);
  }
  if (in_graph) {
    AG_CHECK(!(self.is_leaf() && self.requires_grad()), AutogradError, op,
             ": in-place write to a leaf tensor that requires grad (shape ", self.shape(),
             "); wrap it in NoGradGuard (as optimizers do) or use the out-of-place op");
    AG_CHECK(!self.impl()->is_view, AutogradError, op, ": in-place write to a view (shape ", self.shape(),
             ") inside the graph is not supported (its base would not see the "
             "write); clone() it first or use the out-of-place op");
  }
  Tensor r;
  if (in_graph) {
    r = fn(ag::clone(self));
  } else {
    NoGradGuard no_grad;
    r = fn(self);
  }
  AG_CHECK(r.shape() == self.shape(), ShapeError, op, ": the result's shape ", r.shape(),
           " (operands broadcast) does not fit self's shape ", self.shape());
  // PyTorch's can_cast: a floating result does not go into an integer or bool tensor,
  // nor a number into a bool one.
  bool castable =
      !(is_floating(r.dtype()) && !is_floating(self.dtype())) && !(r.dtype() != DType::b8 && self.dtype() == DType::b8);
  AG_CHECK(castable, DTypeError, op, ": result type ", r.dtype(),
           " can't be cast to the desired "
           "output type ",
           self.dtype(), " (shape ", self.shape(), ")");
  if (r.shares_storage(self)) r = fresh_copy(r);  // the op returned (a view of) its input
  K::copy(r, self);
  self.storage()->bump_version();
  if (in_graph && r.requires_grad()) {
    // retain_grad follows the tensor to its new value, as in PyTorch; hooks registered
    // before stay with the old value's node.
    if (self.impl()->retains_grad) {
      self.grad_fn()->retains_grad.reset();
      r.grad_fn()->retains_grad = self.impl_ptr();
    }
    self.impl()->grad_fn = r.grad_fn();
    self.impl()->requires_grad = true;
  }
  return self;
}

// A 0-d true mask: where(everywhere(), value, x) is value everywhere, with a zero
// gradient to x.
Tensor everywhere() { return full(Shape{}, 1.0, DType::b8); }

}  // namespace

Tensor& Tensor::fill_(Scalar value) {
  if (!(grad_enabled() && requires_grad())) {  // the common case: a plain write
    assert_no_internal_overlap(*this, "fill_");
    if (value.is_floating_point())
      K::fill(*this, value.to_double());
    else
      K::copy(full(Shape{}, value, dtype()), *this);  // int64 exact, not via double
    storage()->bump_version();
    return *this;
  }
  // where(true, value, x): the value everywhere, zero gradient to the old value.
  return apply_inplace(*this, "fill_", {}, [value](const Tensor& x) {
    return ag::where(everywhere(), full(Shape{}, value, x.dtype()), x);
  });
}

Tensor& Tensor::copy_(const Tensor& src) {
  AG_CHECK(broadcast_shapes(src.shape(), shape(), "copy_") == shape(), ShapeError, "copy_: source shape ", src.shape(),
           " cannot be broadcast to ", shape());
  if (!(grad_enabled() && (requires_grad() || src.requires_grad()))) {
    assert_no_internal_overlap(*this, "copy_");
    const MemOverlapStatus overlap = assert_no_partial_overlap(*this, src, "copy_");
    if (overlap == MemOverlapStatus::too_hard)
      K::copy(fresh_copy(src), *this);  // may share memory: read it all before writing
    else if (!(overlap == MemOverlapStatus::full && src.dtype() == dtype()))  // full: already there
      K::copy(src, *this);                                                    // converts dtype, any layout
    storage()->bump_version();
    return *this;
  }
  return apply_inplace(*this, "copy_", {src},
                       [&src](const Tensor& x) { return ag::where(everywhere(), ag::to(src, x.dtype()), x); });
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  return apply_inplace(*this, "add_", {other}, [&other, alpha](const Tensor& x) {
    return alpha == 1.0 ? ag::add(x, other) : ag::add(x, ag::mul(other, alpha));
  });
}
Tensor& Tensor::add_(Scalar value) {
  return apply_inplace(*this, "add_", {}, [value](const Tensor& x) { return ag::add(x, value); });
}
Tensor& Tensor::sub_(const Tensor& other, double alpha) {
  return apply_inplace(*this, "sub_", {other}, [&other, alpha](const Tensor& x) {
    return alpha == 1.0 ? ag::sub(x, other) : ag::sub(x, ag::mul(other, alpha));
  });
}
Tensor& Tensor::sub_(Scalar value) {
  return apply_inplace(*this, "sub_", {}, [value](const Tensor& x) { return ag::sub(x, value); });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return apply_inplace(*this, "mul_", {other}, [&other](const Tensor& x) { return ag::mul(x, other); });
}
Tensor& Tensor::mul_(Scalar value) {
  return apply_inplace(*this, "mul_", {}, [value](const Tensor& x) { return ag::mul(x, value); });
}
Tensor& Tensor::div_(const Tensor& other) {
  return apply_inplace(*this, "div_", {other}, [&other](const Tensor& x) { return ag::div(x, other); });
}
Tensor& Tensor::div_(Scalar value) {
  return apply_inplace(*this, "div_", {}, [value](const Tensor& x) { return ag::div(x, value); });
}
Tensor& Tensor::neg_() {
  return apply_inplace(*this, "neg_", {}, [](const Tensor& x) { return ag::neg(x); });
}
Tensor& Tensor::exp_() {
  return apply_inplace(*this, "exp_", {}, [](const Tensor& x) { return ag::exp(x); });
}
Tensor& Tensor::relu_() {
  return apply_inplace(*this, "relu_", {}, [](const Tensor& x) { return ag::relu(x); });
}
Tensor& Tensor::sigmoid_() {
  return apply_inplace(*this, "sigmoid_", {}, [](const Tensor& x) { return ag::sigmoid(x); });
}
Tensor& Tensor::tanh_() {
  return apply_inplace(*this, "tanh_", {}, [](const Tensor& x) { return ag::tanh(x); });
}
Tensor& Tensor::clamp_(std::optional<double> lo, std::optional<double> hi) {
  return apply_inplace(*this, "clamp_", {}, [lo, hi](const Tensor& x) { return ag::clamp(x, lo, hi); });
}

Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  // The mask is read while self is written (not an operand: masked_fill checks its shape).
  assert_no_partial_overlap(*this, mask, "masked_fill_");
  return apply_inplace(*this, "masked_fill_", {},
                       [&mask, value](const Tensor& x) { return ag::masked_fill(x, mask, value); });
}

Tensor& inplace_index_put(Tensor& self, const Tensor& values, const Tensor& view,
                          const std::function<Tensor(const Tensor&)>& put, const char* op) {
  if (view.defined() && !(grad_enabled() && (self.requires_grad() || values.requires_grad()))) {
    detail::in_op(op, [&] { Tensor(view).copy_(values); });  // a plain write through the view
    return self;
  }
  return apply_inplace(self, op, {}, put, {values});
}

// ---- the unary, pow and triangle forms (attograd/detail/tensor_method_decls.inl) ----
#define AG_INPLACE_UNARY(name) \
  Tensor& Tensor::name##_() { \
    return apply_inplace(*this, #name "_", {}, [](const Tensor& x) { return ag::name(x); }); \
  }
AG_INPLACE_UNARY(abs)
AG_INPLACE_UNARY(sign)
AG_INPLACE_UNARY(square)
AG_INPLACE_UNARY(sqrt)
AG_INPLACE_UNARY(rsqrt)
AG_INPLACE_UNARY(exp2)
AG_INPLACE_UNARY(expm1)
AG_INPLACE_UNARY(log)
AG_INPLACE_UNARY(log2)
AG_INPLACE_UNARY(log10)
AG_INPLACE_UNARY(log1p)
AG_INPLACE_UNARY(sin)
AG_INPLACE_UNARY(cos)
AG_INPLACE_UNARY(tan)
AG_INPLACE_UNARY(asin)
AG_INPLACE_UNARY(acos)
AG_INPLACE_UNARY(atan)
AG_INPLACE_UNARY(sinh)
AG_INPLACE_UNARY(cosh)
AG_INPLACE_UNARY(asinh)
AG_INPLACE_UNARY(acosh)
AG_INPLACE_UNARY(atanh)
AG_INPLACE_UNARY(erf)
AG_INPLACE_UNARY(floor)
AG_INPLACE_UNARY(ceil)
AG_INPLACE_UNARY(round)
AG_INPLACE_UNARY(trunc)
AG_INPLACE_UNARY(frac)
#undef AG_INPLACE_UNARY
Tensor& Tensor::pow_(const Tensor& e) {
  return apply_inplace(*this, "pow_", {e}, [&e](const Tensor& x) { return ag::pow(x, e); });
}
Tensor& Tensor::pow_(Scalar e) {
  return apply_inplace(*this, "pow_", {}, [e](const Tensor& x) { return ag::pow(x, e); });
}
Tensor& Tensor::tril_(int64_t diagonal) {
  return apply_inplace(*this, "tril_", {}, [diagonal](const Tensor& x) { return ag::tril(x, diagonal); });
}
Tensor& Tensor::triu_(int64_t diagonal) {
  return apply_inplace(*this, "triu_", {}, [diagonal](const Tensor& x) { return ag::triu(x, diagonal); });
}

}  // namespace ag
