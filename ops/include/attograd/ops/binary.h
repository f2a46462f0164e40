#pragma once
/// \file
/// Elementwise math of two (or three) tensors (ops/binary.cpp). Operands broadcast
/// NumPy-style. The arithmetic ops (add ... minimum, floor_divide and the operators) promote
/// mixed dtypes as PyTorch does (result_type, attograd/ops/promotion.h); the math
/// functions below them take f32 or f64 operands of one dtype (DTypeError otherwise).
/// PyTorch 1.13's formulas, values at 0, -0, +-inf and NaN, and gradients.
#include <optional>
#include <string_view>

#include "attograd/tensor.h"

namespace ag {

// ---- arithmetic ----
Tensor add(const Tensor& a, const Tensor& b);  ///< a + b, broadcast shape
Tensor sub(const Tensor& a, const Tensor& b);  ///< a - b, broadcast shape
Tensor mul(const Tensor& a, const Tensor& b);  ///< a * b, broadcast shape
/// a / b, broadcast shape; true division: integer and bool operands divide in the default
/// float dtype.
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);      ///< a ** b, broadcast shape; d/db needs a > 0
Tensor maximum(const Tensor& a, const Tensor& b);  ///< ties split the gradient (g/2 each)
Tensor minimum(const Tensor& a, const Tensor& b);  ///< ties split the gradient (g/2 each)
Tensor add(const Tensor& a, Scalar b);             ///< a + b, a's shape; the dtype as result_type
Tensor sub(const Tensor& a, Scalar b);             ///< a - b, a's shape
Tensor mul(const Tensor& a, Scalar b);             ///< a * b, a's shape
Tensor div(const Tensor& a, Scalar b);             ///< a / b, a's shape; true division
Tensor pow(const Tensor& a, Scalar exponent);      ///< a ** exponent, a's shape
Tensor rsub(Scalar a, const Tensor& b);            ///< a - b
Tensor rdiv(Scalar a, const Tensor& b);            ///< a / b
/// floor(a / b) (PyTorch 1.13's floor_divide: rounds toward -inf); integer inputs give an
/// integer result, and integer division by zero throws ValueError. No gradient.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);  ///< \overload
/// torch.div(a, b, rounding_mode): std::nullopt is true division (div(a, b)), "trunc"
/// rounds the quotient toward 0, "floor" toward -inf (floor_divide); with a mode, integer
/// operands give an integer result (division by zero throws ValueError). The gradient of a
/// rounded quotient is 0, as PyTorch's. Another mode throws ValueError.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> rounding_mode);  ///< \overload

// ---- operators ----
Tensor operator+(const Tensor& a, const Tensor& b);  ///< add(a, b)
Tensor operator-(const Tensor& a, const Tensor& b);  ///< sub(a, b)
Tensor operator*(const Tensor& a, const Tensor& b);  ///< mul(a, b)
Tensor operator/(const Tensor& a, const Tensor& b);  ///< div(a, b)
Tensor operator+(const Tensor& a, Scalar b);         ///< add(a, b)
Tensor operator-(const Tensor& a, Scalar b);         ///< sub(a, b)
Tensor operator*(const Tensor& a, Scalar b);         ///< mul(a, b)
Tensor operator/(const Tensor& a, Scalar b);         ///< div(a, b)
Tensor operator+(Scalar a, const Tensor& b);         ///< add(b, a)
Tensor operator-(Scalar a, const Tensor& b);         ///< rsub(a, b)
Tensor operator*(Scalar a, const Tensor& b);         ///< mul(b, a)
Tensor operator/(Scalar a, const Tensor& b);         ///< rdiv(a, b)
Tensor operator-(const Tensor& x);                   ///< neg(x) (attograd/ops/unary.h)

// ---- math functions (f32 or f64 operands of one dtype) ----
Tensor atan2(const Tensor& self, const Tensor& other);  ///< angle of (other, self)
/// |self| with other's sign bit (-0 counts as negative). No gradient to other.
Tensor copysign(const Tensor& self, const Tensor& other);
Tensor logaddexp(const Tensor& a, const Tensor& b);  ///< log(exp(a) + exp(b)), stable
/// start + weight * (end - start); gradients to all three.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& start, const Tensor& end, double weight);  ///< a fixed weight: gradients to start and end
Tensor fmod(const Tensor& self, const Tensor& other);                ///< sign of self (C's fmod)
Tensor fmod(const Tensor& self, Scalar other);                       ///< sign of self (C's fmod)
Tensor remainder(const Tensor& self, const Tensor& other);           ///< sign of other (Python's %)
Tensor remainder(const Tensor& self, Scalar other);                  ///< sign of other (Python's %)

}  // namespace ag
