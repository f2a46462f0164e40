#pragma once
// Differentiable ops. Each is defined with its backward beside it in ops/*.cpp;
// composite ops (softmax-free ones like var, logsumexp, layer_norm, attention) are
// built from primitives and get their gradients for free.
//
// Binary ops broadcast NumPy-style and promote their operands' dtypes as PyTorch does
// (result_type below): i64 tensor * 0.5 is f32, i32 tensor + 2 stays i32, f32 + f64
// tensors are f64. Mixed operands are converted with the differentiable to(), so each
// input's gradient comes back in its own dtype. Float ops accept f32 and f64.
#include <optional>
#include <utility>
#include <vector>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/tensor.h"

namespace ag {

// ---- type promotion (ops/promotion.cpp), PyTorch's torch.result_type ----
// Categories bool < integral < floating; priority dimensioned tensors (dim >= 1) > 0-d
// tensors > scalars. The result is the highest category present; its dtype comes from the
// highest-priority class holding an operand of that category (promote_types among them),
// and a scalar that raises the category gives i64 or get_default_dtype().
// promote_types(DType, DType) is in attograd/dtype.h.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);
DType result_type(Scalar a, const Tensor& b);

// ---- elementwise: binary (ops/elementwise.cpp) ----
// div is true division: integer and bool operands divide in the default float dtype.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);  // ties split the gradient (g/2 each)
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& a, Scalar exponent);
Tensor rsub(Scalar a, const Tensor& b);  // a - b
Tensor rdiv(Scalar a, const Tensor& b);  // a / b
// floor(a / b) (PyTorch 1.13's floor_divide: rounds toward -inf); integer inputs give an
// integer result, and integer division by zero throws ValueError. No gradient.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);

// ---- elementwise: unary ----
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);  // no gradient (zero)
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor square(const Tensor& x);
enum class GeluApprox { none, tanh };
Tensor gelu(const Tensor& x, GeluApprox approximate = GeluApprox::none);
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);

// ---- comparisons and logic (no gradient; results are bool) ----
// Comparisons run in the promoted dtype: f32 tensor == 0.1 compares with float(0.1).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, Scalar b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor isfinite(const Tensor& a);

// where(cond, a, b): a where cond is true, else b; all three broadcast; a and b promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);  // dtype of the two scalars
// Fills x with `value` where mask is true (PyTorch's masked_fill); mask broadcasts to x.
// The result keeps x's dtype (value is cast, as in PyTorch).
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);

// ---- reductions (ops/reduce.cpp); dims may be negative; {} with keepdim=false = all ----
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
// var with `correction` (1 = unbiased, the default as in PyTorch; 0 = biased).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction = 1,
           bool keepdim = false);
Tensor var(const Tensor& x);  // over all elements, unbiased (var(x, {}, 0) for biased)
// Values and indices (i64) along dim; the gradient goes to the arg element.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // over all elements
Tensor min(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
// Sums g down to `shape` (undoes broadcasting): the one helper every backward uses.
Tensor sum_to(const Tensor& g, const Shape& shape);

// ---- shape (ops/shape.cpp); views share storage ----
Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Shape& shape);  // -1 keeps a dim
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor to(const Tensor& x, DType dtype);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

// ---- indexing (ops/index.cpp) ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);  // index: i64 1-D
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);        // PyTorch's gather
// Rows of weight (V, E) for ids (any shape, i64) -> (..., E). The row padding_idx gets
// no gradient. Ids outside [0, V) throw IndexError naming the id and V.
Tensor embedding(const Tensor& ids, const Tensor& weight, std::optional<int64_t> padding_idx = {});

// ---- linear algebra (ops/linalg.cpp) ----
// 1-D, 2-D and batched (..., M, K) @ (..., K, N) with broadcast batch dims. Transposed
// views go to BLAS as transpose flags, in both directions of the pass.
Tensor matmul(const Tensor& a, const Tensor& b);
// x (..., in) @ W^T + b with W in PyTorch's [out, in] layout.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// ---- operators ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator!(const Tensor& mask);  // logical_not
Tensor operator&&(const Tensor& a, const Tensor& b) = delete;  // use logical_and

}  // namespace ag
