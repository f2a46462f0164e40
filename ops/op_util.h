#pragma once
// Small helpers shared by the op files (internal).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attograd/tape.h"
#include "attograd/ops.h"
#include "kernels/kernels.h"

namespace ag {
namespace K = kernels;

// Will a graph be recorded with t as an input?
inline bool wants_grad(const Tensor& t) { return grad_enabled() && t.defined() && t.requires_grad(); }

// Save t for backward only when `needed` (saves work under NoGradGuard and for inputs
// whose partner needs no gradient).
inline Saved save_if(bool needed, const Tensor& t) { return needed ? Saved(t) : Saved(); }
// The same for the op's own output (reconnected to the op's node under create_graph).
inline Saved save_output_if(bool needed, const Tensor& y) { return needed ? Saved::output(y) : Saved(); }

inline void check_float(const Tensor& t, const char* op) {
  AG_CHECK(t.is_floating_point(), DTypeError, op, ": expected a floating tensor (f32, f64), got ", t.dtype(),
           " with shape ", t.shape());
}

// A 0-d tensor holding v in result_type(x, v): the scalar operand of a binary op or
// where (x * 0.5 for an i64 x is f32; x * 2 for an i32 x stays i32, and an integer
// beyond int32 wraps into it as PyTorch's operand cast does, where full would refuse it).
inline Tensor scalar_like(const Tensor& x, Scalar v) {
  const DType t = result_type(x, v);
  if (t == DType::i32 && v.is_integral()) v = static_cast<int32_t>(v.to_int());  // modulo 2^32 (C++20)
  return full(Shape{}, v, t);
}

// a and b converted to result_type(a, b) with the differentiable to() (a no-op for an
// operand already of that dtype). int_to_float: an integral or bool result type becomes
// the default float dtype (true division). Defined in ops/promotion.cpp.
std::pair<Tensor, Tensor> promote_pair(const Tensor& a, const Tensor& b, bool int_to_float = false);

// A new TensorImpl over x's storage with the given layout (no graph).
// Marked as a view: an in-place op inside the graph refuses it (its base would not see
// the write in its own graph).
inline Tensor alias(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset) {
  Tensor v(x.storage(), shape, strides, offset, x.dtype());
  v.impl()->is_view = true;
  return v;
}

// Records `out` (x's values already converted to out's dtype) as to(x, out.dtype()): the
// gradient goes back to x's dtype. Defined in ops/shape.cpp; autocast's shared casts use it.
Tensor record_to(const Tensor& x, Tensor out);

// Sorted, unique, wrapped dims; `all` when dims is empty.
std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op);

// x's shape with each of `dims` set to 1 (keepdim shape).
Shape keepdim_shape(const Shape& x, const std::vector<int64_t>& dims);

// "[1, 2, 3]" for error messages (a list of any length, unlike Shape).
std::string list_str(const std::vector<int64_t>& v);

// wrap_dim that rejects 0-d tensors, as PyTorch does for roll, repeat_interleave and
// unflatten ("Dimension specified as 0 but tensor has no dimensions").
int64_t wrap_dim_nonscalar(int64_t dim, int64_t ndim, const char* op);

// Differentiable running sum / product along dim (dim already wrapped), from the last
// element backwards when `reverse`. cumsum/cumprod are the forward ones; the reverse
// ones are what their backwards (and prod's) need, and are themselves differentiable.
// Defined in ops/scan_sort.cpp.
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse);
Tensor cumprod_dir(const Tensor& x, int64_t dim, bool reverse);

// zeros(shape) with g written on its diagonal (offset, d1, d2): diagonal's backward and
// diag's 1-D forward. Recorded with backward diagonal(gg), so it differentiates again.
// Defined in ops/view.cpp.
Tensor diagonal_embed(const char* name, const Tensor& g, const Shape& shape, int64_t offset, int64_t d1, int64_t d2);

// index_put_'s in-place rules (ops/inplace.cpp): outside the graph, with `view` defined
// (a basic index: self's view the values go to), values are copied into the view;
// otherwise as every in-place op, self taking put(self)'s value. (ops/tensor_index.cpp)
Tensor& inplace_index_put(Tensor& self, const Tensor& values, const Tensor& view,
                          const std::function<Tensor(const Tensor&)>& put, const char* op);

}  // namespace ag
