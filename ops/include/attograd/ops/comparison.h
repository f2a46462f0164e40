#pragma once
/// \file
/// Comparisons, logic, predicates and selection (ops/comparison.cpp). Comparisons, logic
/// and predicates have no gradient and return bool tensors; where() is differentiable in
/// its two branches. Operands broadcast NumPy-style.
#include "attograd/scalar.h"
#include "attograd/tensor.h"

namespace ag {

// ---- comparisons ----
/// a == b, broadcast shape, bool. Comparisons run in the promoted dtype: an f32 tensor
/// == 0.1 compares with float(0.1).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);  ///< a != b, broadcast shape, bool
Tensor lt(const Tensor& a, const Tensor& b);  ///< a < b, broadcast shape, bool
Tensor le(const Tensor& a, const Tensor& b);  ///< a <= b, broadcast shape, bool
Tensor gt(const Tensor& a, const Tensor& b);  ///< a > b, broadcast shape, bool
Tensor ge(const Tensor& a, const Tensor& b);  ///< a >= b, broadcast shape, bool
Tensor eq(const Tensor& a, Scalar b);         ///< a == b, a's shape, bool
Tensor ne(const Tensor& a, Scalar b);         ///< a != b, a's shape, bool
Tensor lt(const Tensor& a, Scalar b);         ///< a < b, a's shape, bool
Tensor le(const Tensor& a, Scalar b);         ///< a <= b, a's shape, bool
Tensor gt(const Tensor& a, Scalar b);         ///< a > b, a's shape, bool
Tensor ge(const Tensor& a, Scalar b);         ///< a >= b, a's shape, bool
// Operators as LibTorch's: x == 0, a < b, 2 >= x (bool tensors, no gradient).
Tensor operator==(const Tensor& a, const Tensor& b);  ///< eq(a, b)
Tensor operator!=(const Tensor& a, const Tensor& b);  ///< ne(a, b)
Tensor operator<(const Tensor& a, const Tensor& b);   ///< lt(a, b)
Tensor operator<=(const Tensor& a, const Tensor& b);  ///< le(a, b)
Tensor operator>(const Tensor& a, const Tensor& b);   ///< gt(a, b)
Tensor operator>=(const Tensor& a, const Tensor& b);  ///< ge(a, b)
Tensor operator==(const Tensor& a, Scalar b);         ///< eq(a, b)
Tensor operator!=(const Tensor& a, Scalar b);         ///< ne(a, b)
Tensor operator<(const Tensor& a, Scalar b);          ///< lt(a, b)
Tensor operator<=(const Tensor& a, Scalar b);         ///< le(a, b)
Tensor operator>(const Tensor& a, Scalar b);          ///< gt(a, b)
Tensor operator>=(const Tensor& a, Scalar b);         ///< ge(a, b)
Tensor operator==(Scalar a, const Tensor& b);         ///< eq(b, a)
Tensor operator!=(Scalar a, const Tensor& b);         ///< ne(b, a)
Tensor operator<(Scalar a, const Tensor& b);          ///< gt(b, a)
Tensor operator<=(Scalar a, const Tensor& b);         ///< ge(b, a)
Tensor operator>(Scalar a, const Tensor& b);          ///< lt(b, a)
Tensor operator>=(Scalar a, const Tensor& b);         ///< le(b, a)
/// Bool: a == b, or |a - b| <= atol + |rtol * b| (finite); NaNs equal when equal_nan.
/// (allclose, its all-elements form, is in attograd/tensor.h.)
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

// ---- logic ----
Tensor logical_and(const Tensor& a, const Tensor& b);          ///< bool, broadcast; nonzero is true
Tensor logical_or(const Tensor& a, const Tensor& b);           ///< bool, broadcast; nonzero is true
Tensor logical_not(const Tensor& a);                           ///< bool, a's shape: true where a is zero
Tensor logical_xor(const Tensor& a, const Tensor& b);          ///< bool, broadcast; nonzero is true
Tensor operator!(const Tensor& mask);                          ///< logical_not
Tensor operator&&(const Tensor& a, const Tensor& b) = delete;  ///< use logical_and

// ---- bitwise: bool and integer tensors (promoted as the arithmetic ops; DTypeError for
// floating ones, as PyTorch's "not implemented for 'Float'"); bool & bool is bool ----
Tensor bitwise_and(const Tensor& a, const Tensor& b);  ///< a & b
Tensor bitwise_or(const Tensor& a, const Tensor& b);   ///< a | b
Tensor bitwise_xor(const Tensor& a, const Tensor& b);  ///< a ^ b
Tensor bitwise_not(const Tensor& a);                   ///< ~a: logical not for bool, ones' complement for integers
Tensor operator&(const Tensor& a, const Tensor& b);    ///< bitwise_and (mask & other_mask)
Tensor operator|(const Tensor& a, const Tensor& b);    ///< bitwise_or
Tensor operator^(const Tensor& a, const Tensor& b);    ///< bitwise_xor
Tensor operator~(const Tensor& a);                     ///< bitwise_not (~mask)

// ---- predicates: bool, x's shape; integer inputs give all false (isfinite: all true) ----
Tensor isfinite(const Tensor& a);  ///< bool, a's shape: false for NaN and +-inf
Tensor isinf(const Tensor& x);     ///< bool: true at +-inf
Tensor isnan(const Tensor& x);     ///< bool: true where x != x

// ---- selection ----
/// where(cond, a, b): a where cond is true, else b; all three broadcast; a and b promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);  ///< \overload
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);  ///< \overload
Tensor where(const Tensor& cond, Scalar a, Scalar b);         ///< dtype of the two scalars

}  // namespace ag
