#pragma once
/// \file
/// Scalar: a number that remembers its kind, like c10::Scalar. Binary ops take a Scalar
/// where PyTorch's answer depends on the kind: x * 2 keeps an i32 tensor i32, x * 2.0 makes
/// it f32 (the default dtype). Implicit from bool, any integral and any floating type, so
/// existing calls with double literals keep compiling.
#include <cstdint>
#include <type_traits>

#include "attograd/detail/convert.h"
#include "attograd/dtype.h"

namespace ag {

/// A number with its kind (bool, integral or floating), as PyTorch's Scalar: it decides type promotion.
class Scalar {
 public:
  /// Promotion category: boolean < integral < floating.
  enum class Kind : uint8_t { boolean, integral, floating };

  /// From any arithmetic type; bool stays boolean, integers integral, the rest floating.
  template <class T>
  requires std::is_arithmetic_v<T> Scalar(T v) {  // NOLINT(google-explicit-constructor): implicit on purpose
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::boolean;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_unsigned_v<T> && sizeof(T) >= 8)
        AG_CHECK(v <= static_cast<T>(INT64_MAX), ValueError, "Scalar: unsigned value ", v, " does not fit in int64");
      kind_ = Kind::integral;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::floating;
      d_ = static_cast<double>(v);
    }
  }

  /// The promotion category.
  Kind kind() const { return kind_; }
  /// Made from a bool.
  bool is_boolean() const { return kind_ == Kind::boolean; }
  bool is_integral() const { return kind_ == Kind::integral; }  ///< bool excluded
  /// Made from a float or double.
  bool is_floating_point() const { return kind_ == Kind::floating; }

  /// The value as a double.
  double to_double() const { return kind_ == Kind::floating ? d_ : static_cast<double>(i_); }
  /// Floating values truncate toward zero; NaN, +-inf and values outside int64 give
  /// INT64_MIN (x86's cvttsd2si, detail/convert.h), not an undefined cast.
  int64_t to_int() const { return kind_ == Kind::floating ? detail::convert_value<int64_t>(d_) : i_; }
  /// Nonzero.
  bool to_bool() const { return kind_ == Kind::floating ? d_ != 0.0 : i_ != 0; }

  /// The dtype a scalar of this kind takes alone: bool, i64, or the default float dtype.
  DType dtype() const {
    switch (kind_) {
      case Kind::boolean: return DType::b8;
      case Kind::integral: return DType::i64;
      case Kind::floating: return get_default_dtype();
    }
    return DType::f64;
  }

 private:
  Kind kind_ = Kind::floating;
  double d_ = 0.0;
  int64_t i_ = 0;
};

}  // namespace ag
