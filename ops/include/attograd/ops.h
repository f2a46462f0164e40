#pragma once
/// \file
/// Differentiable ops. Each is defined with its backward beside it in ops/*.cpp;
/// composite ops (softmax-free ones like var, logsumexp, layer_norm, attention) are
/// built from primitives and get their gradients for free.
///
/// Binary ops broadcast NumPy-style and promote their operands' dtypes as PyTorch does
/// (result_type below): i64 tensor * 0.5 is f32, i32 tensor + 2 stays i32, f32 + f64
/// tensors are f64. Mixed operands are converted with the differentiable to(), so each
/// input's gradient comes back in its own dtype. Float ops accept f32 and f64.
#include <optional>
#include <utility>
#include <vector>

#include "attograd/tape.h"
#include "attograd/factory.h"
#include "attograd/tensor.h"

namespace ag {

// ---- type promotion (ops/promotion.cpp), PyTorch's torch.result_type ----
/// Categories bool < integral < floating; priority dimensioned tensors (dim >= 1) > 0-d
/// tensors > scalars. The result is the highest category present; its dtype comes from the
/// highest-priority class holding an operand of that category (promote_types among them),
/// and a scalar that raises the category gives i64 or get_default_dtype().
/// promote_types(DType, DType) is in attograd/dtype.h.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);  ///< \overload
DType result_type(Scalar a, const Tensor& b);  ///< \overload

// ---- elementwise: binary (ops/elementwise.cpp) ----
Tensor add(const Tensor& a, const Tensor& b);  ///< a + b, broadcast shape
Tensor sub(const Tensor& a, const Tensor& b);  ///< a - b, broadcast shape
Tensor mul(const Tensor& a, const Tensor& b);  ///< a * b, broadcast shape
/// a / b, broadcast shape; true division: integer and bool operands divide in the default
/// float dtype.
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);  ///< a ** b, broadcast shape; d/db needs a > 0
Tensor maximum(const Tensor& a, const Tensor& b);  ///< ties split the gradient (g/2 each)
Tensor minimum(const Tensor& a, const Tensor& b);  ///< ties split the gradient (g/2 each)
Tensor add(const Tensor& a, Scalar b);  ///< a + b, a's shape; the dtype as result_type
Tensor sub(const Tensor& a, Scalar b);  ///< a - b, a's shape
Tensor mul(const Tensor& a, Scalar b);  ///< a * b, a's shape
Tensor div(const Tensor& a, Scalar b);  ///< a / b, a's shape; true division
Tensor pow(const Tensor& a, Scalar exponent);  ///< a ** exponent, a's shape
Tensor rsub(Scalar a, const Tensor& b);  ///< a - b
Tensor rdiv(Scalar a, const Tensor& b);  ///< a / b
/// floor(a / b) (PyTorch 1.13's floor_divide: rounds toward -inf); integer inputs give an
/// integer result, and integer division by zero throws ValueError. No gradient.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);  ///< \overload

// ---- elementwise: unary ----
Tensor neg(const Tensor& x);  ///< same shape: -x
Tensor exp(const Tensor& x);  ///< same shape: e^x
Tensor log(const Tensor& x);  ///< same shape: natural log; -inf at 0, NaN below
Tensor sqrt(const Tensor& x);  ///< same shape: NaN below 0
Tensor rsqrt(const Tensor& x);  ///< same shape: 1 / sqrt(x)
Tensor abs(const Tensor& x);  ///< same shape: |x|; gradient sign(x), 0 at 0
Tensor sign(const Tensor& x);  ///< no gradient (zero)
Tensor tanh(const Tensor& x);  ///< same shape: gradient 1 - tanh^2
Tensor sigmoid(const Tensor& x);  ///< same shape: 1 / (1 + e^-x), computed without overflow
Tensor relu(const Tensor& x);  ///< same shape: max(x, 0); gradient 0 at 0
Tensor erf(const Tensor& x);  ///< same shape: the Gauss error function
Tensor sin(const Tensor& x);  ///< same shape: sine
Tensor cos(const Tensor& x);  ///< same shape: cosine
Tensor square(const Tensor& x);  ///< same shape: x * x
/// GELU's form: none = exact x * Phi(x) with erf; tanh = the tanh approximation.
enum class GeluApprox { none, tanh };
Tensor gelu(const Tensor& x, GeluApprox approximate = GeluApprox::none);  ///< same shape
/// grad_output * gelu'(x) (LibTorch's torch::gelu_backward): gelu's gradient as an op of
/// its own, so that it is differentiable again. grad_output has x's shape and dtype.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& x, GeluApprox approximate = GeluApprox::none);
/// Same shape, limited to [min, max] (either may be absent); no gradient outside.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);

// ---- comparisons and logic (no gradient; results are bool) ----
/// a == b, broadcast shape, bool. Comparisons run in the promoted dtype: an f32 tensor
/// == 0.1 compares with float(0.1).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);  ///< a != b, broadcast shape, bool
Tensor lt(const Tensor& a, const Tensor& b);  ///< a < b, broadcast shape, bool
Tensor le(const Tensor& a, const Tensor& b);  ///< a <= b, broadcast shape, bool
Tensor gt(const Tensor& a, const Tensor& b);  ///< a > b, broadcast shape, bool
Tensor ge(const Tensor& a, const Tensor& b);  ///< a >= b, broadcast shape, bool
Tensor eq(const Tensor& a, Scalar b);  ///< a == b, a's shape, bool
Tensor ne(const Tensor& a, Scalar b);  ///< a != b, a's shape, bool
Tensor lt(const Tensor& a, Scalar b);  ///< a < b, a's shape, bool
Tensor le(const Tensor& a, Scalar b);  ///< a <= b, a's shape, bool
Tensor gt(const Tensor& a, Scalar b);  ///< a > b, a's shape, bool
Tensor ge(const Tensor& a, Scalar b);  ///< a >= b, a's shape, bool
Tensor logical_and(const Tensor& a, const Tensor& b);  ///< bool, broadcast; nonzero is true
Tensor logical_or(const Tensor& a, const Tensor& b);   ///< bool, broadcast; nonzero is true
Tensor logical_not(const Tensor& a);  ///< bool, a's shape: true where a is zero
Tensor isfinite(const Tensor& a);     ///< bool, a's shape: false for NaN and +-inf

/// where(cond, a, b): a where cond is true, else b; all three broadcast; a and b promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);  ///< \overload
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);  ///< \overload
Tensor where(const Tensor& cond, Scalar a, Scalar b);  ///< dtype of the two scalars
/// Fills x with `value` where mask is true (PyTorch's masked_fill); mask broadcasts to x.
/// The result keeps x's dtype (value is cast, as in PyTorch).
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);

// ---- reductions (ops/reduce.cpp); dims may be negative; {} with keepdim=false = all ----
Tensor sum(const Tensor& x);  ///< shape []: every element; bool and integers sum in i64
/// Over dims (each dim dropped, or kept as 1 with keepdim); {} = every dim.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);  ///< shape []: every element; floating dtypes only
/// Over dims (each dim dropped, or kept as 1 with keepdim); {} = every dim.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// var with `correction` (1 = unbiased, the default as in PyTorch; 0 = biased).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1,
           bool keepdim = false);
Tensor var(const Tensor& x);  ///< over all elements, unbiased (var(x, {}, 0) for biased)
/// Values and indices (i64) along dim; the gradient goes to the arg element.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);  ///< as max
Tensor max(const Tensor& x);  ///< over all elements
Tensor min(const Tensor& x);  ///< over all elements
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  ///< i64 indices, dim removed
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);  ///< i64 indices, dim removed
/// log(sum(exp(x))) over dims, shifted by the max so that large inputs do not overflow.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// Sums g down to `shape` (undoes broadcasting): the one helper every backward uses.
Tensor sum_to(const Tensor& g, const Shape& shape);

// ---- shape (ops/shape.cpp); views share storage ----
Tensor reshape(const Tensor& x, const Shape& shape);  ///< one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);  ///< a view or ShapeError when the strides do not allow one
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);  ///< view with d0 and d1 swapped
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);  ///< view: output dim i is x's dims[i]
Tensor unsqueeze(const Tensor& x, int64_t dim);  ///< view with a size-1 dim inserted at dim
Tensor squeeze(const Tensor& x);  ///< view without any size-1 dims
Tensor squeeze(const Tensor& x, int64_t dim);  ///< view without dim when its size is 1 (else x)
Tensor expand(const Tensor& x, const Shape& shape);  ///< -1 keeps a dim
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);  ///< view of [start, end) by step
Tensor select(const Tensor& x, int64_t dim, int64_t index);  ///< view at index, dim removed
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);  ///< view of [start, start+length)
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);  ///< dims start..end merged into one
Tensor contiguous(const Tensor& x);  ///< x when already row-major, else a copy
Tensor clone(const Tensor& x);  ///< a fresh contiguous copy; gradient passes through
Tensor to(const Tensor& x, DType dtype);  ///< converted; the gradient comes back in x's dtype
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);  ///< joined along an existing dim
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);  ///< equal shapes joined along a new dim
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);  ///< views of split_size (last shorter)
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);  ///< views of these sizes
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);  ///< at most `chunks` views

// ---- indexing (ops/index.cpp) ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);  ///< index: i64 1-D
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);        ///< PyTorch's gather
/// Rows of weight (V, E) for ids (any shape, i64) -> (..., E). The row padding_idx gets
/// no gradient. Ids outside [0, V) throw IndexError naming the id and V.
Tensor embedding(const Tensor& ids, const Tensor& weight, std::optional<int64_t> padding_idx = {});

// ---- linear algebra (ops/linalg.cpp) ----
/// 1-D, 2-D and batched (..., M, K) @ (..., K, N) with broadcast batch dims. Transposed
/// views go to BLAS as transpose flags, in both directions of the pass.
Tensor matmul(const Tensor& a, const Tensor& b);
/// x (..., in) @ W^T + b with W in PyTorch's [out, in] layout.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// ---- operators ----
Tensor operator+(const Tensor& a, const Tensor& b);  ///< add(a, b)
Tensor operator-(const Tensor& a, const Tensor& b);  ///< sub(a, b)
Tensor operator*(const Tensor& a, const Tensor& b);  ///< mul(a, b)
Tensor operator/(const Tensor& a, const Tensor& b);  ///< div(a, b)
Tensor operator+(const Tensor& a, Scalar b);  ///< add(a, b)
Tensor operator-(const Tensor& a, Scalar b);  ///< sub(a, b)
Tensor operator*(const Tensor& a, Scalar b);  ///< mul(a, b)
Tensor operator/(const Tensor& a, Scalar b);  ///< div(a, b)
Tensor operator+(Scalar a, const Tensor& b);  ///< add(b, a)
Tensor operator-(Scalar a, const Tensor& b);  ///< rsub(a, b)
Tensor operator*(Scalar a, const Tensor& b);  ///< mul(b, a)
Tensor operator/(Scalar a, const Tensor& b);  ///< rdiv(a, b)
Tensor operator-(const Tensor& x);  ///< neg(x)
Tensor operator!(const Tensor& mask);  ///< logical_not
Tensor operator&&(const Tensor& a, const Tensor& b) = delete;  ///< use logical_and

}  // namespace ag
