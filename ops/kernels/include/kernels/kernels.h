#pragma once
// Raw compute: no graph work here. Each kernel returns a fresh contiguous tensor (or
// writes into a given one) and accepts any strides. The differentiable ops in ops/*.cpp
// call these and record their backward.
#include <optional>
#include <vector>

#include "attograd/tensor.h"

namespace ag::kernels {

// A fresh contiguous tensor; `op` names the caller in size and allocation errors.
Tensor empty(const Shape& shape, DType dtype, const char* op = "empty");

// ---- copies (copy.cpp) ----
// dst[...] = src broadcast to dst's shape, converted to dst's dtype; dst may be a view.
void copy(const Tensor& src, const Tensor& dst);
Tensor contiguous(const Tensor& x);  // x itself when already contiguous
Tensor convert(const Tensor& x, DType dtype);
// dst[...] = value; ValueError naming op for a value an integer dtype cannot hold (NaN,
// +-inf, out of range: PyTorch's "value cannot be converted to type ... without overflow").
void fill(const Tensor& dst, double value, const char* op = "fill_");

// ---- elementwise (clamp.cpp, binary.cpp) ----
// Functions of one tensor (exp, sin, relu, ...) have no kernel here: each op hands its
// elementwise function to the loops of kernels/pointwise.h from its family source.
// clamp takes any numeric dtype; in_range, its 0/1 gradient mask, f32 or f64.
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);
Tensor in_range(const Tensor& x, std::optional<double> lo, std::optional<double> hi);  // 0/1 mask

// GELU (gelu.cpp): y = gelu(x), and g * gelu'(x) for x, g of one shape; `tanh` picks
// the tanh approximation. One pass each instead of the composite's five and nine.
Tensor gelu(const Tensor& x, bool tanh);
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh);

enum class Binary {
  add,
  sub,
  mul,
  div,
  pow,
  maximum,
  minimum,
  ge_mask /* 1 where a >= b */,
  floor_div /* floor(a / b), PyTorch 1.13 floor_divide */,
  trunc_div /* trunc(a / b), torch.div(rounding_mode="trunc") */,
  fmod /* a - trunc(a / b) b: the dividend's sign (C's fmod) */,
  remainder /* a - floor(a / b) b: the divisor's sign (Python's %) */
};
Tensor binary(Binary op, const Tensor& a, const Tensor& b, const char* name);
// a op s (or s op a when scalar_first), in a's dtype.
Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first);

enum class Compare { eq, ne, lt, le, gt, ge };
Tensor compare(Compare op, const Tensor& a, const Tensor& b, const char* name);
enum class Logic { and_, or_ };
Tensor logical(Logic op, const Tensor& a, const Tensor& b, const char* name);
Tensor logical_not(const Tensor& a);
Tensor isfinite(const Tensor& a);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- reductions (reduce.cpp); dims sorted, unique, non-negative ----
enum class Reduce { sum, max, min, argmax, argmin };
Tensor reduce(Reduce op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);

// ---- matmul (matmul.cpp): (..., M, K) @ (..., K, N), batch dims broadcast ----
Tensor matmul(const Tensor& a, const Tensor& b);
// x (..., K) @ weight_t (K, N) + bias (N) in one pass when the product takes the few-row
// GEMV path (decoding); undefined otherwise (the caller then adds the bias itself). The
// bits equal matmul followed by add.
Tensor linear_gemv(const Tensor& x, const Tensor& weight_t, const Tensor& bias);

// ---- softmax (softmax.cpp) along `dim` ----
Tensor softmax(const Tensor& x, int64_t dim, bool log);
// grad of x given y = softmax(x) (or log_softmax) and g = dL/dy.
Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t dim, bool log);

// ---- indexing (index.cpp) ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out = zeros(shape); out.index_select(dim, index) += src (repeated indices add up).
// Entries equal to skip are left out.
Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src,
                 std::optional<int64_t> skip = {});
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace ag::kernels
