#pragma once
/// \file
/// DType (f32, f64, i32, i64, b8), its size and name, the default float dtype, type
/// promotion between dtypes and the dispatch from a DType to its C++ type.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "attograd/error.h"

namespace ag {

/// Element types: f32, f64, i32, i64 and b8 (bool).
enum class DType : uint8_t { f32, f64, i32, i64, b8 };

/// Bytes per element.
constexpr std::size_t itemsize(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::b8: return 1;
  }
  return 0;
}

/// "f32", "i64", ...: the name error messages print.
constexpr std::string_view name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::b8: return "bool";
  }
  return "?";
}

/// f32 or f64.
constexpr bool is_floating(DType t) { return t == DType::f32 || t == DType::f64; }
constexpr bool is_integral(DType t) { return t == DType::i32 || t == DType::i64; }  ///< not bool

/// PyTorch's promote_types: the smallest dtype both convert to without losing the kind.
/// On these five dtypes the lattice is a chain: bool < i32 < i64 < f32 < f64.
constexpr DType promote_types(DType a, DType b) {
  constexpr auto rank = [](DType t) {
    switch (t) {
      case DType::b8: return 0;
      case DType::i32: return 1;
      case DType::i64: return 2;
      case DType::f32: return 3;
      case DType::f64: return 4;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

/// The dtype of floating factories without an explicit dtype, and of floating Python-like
/// scalars in type promotion (PyTorch's torch.get/set_default_dtype). f32 or f64 only;
/// process-wide (an atomic), so set it once at start-up, not per thread.
DType get_default_dtype();
void set_default_dtype(DType t);  ///< DTypeError for anything but f32 / f64

/// Prints the value (name, tensor or module tree).
inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

/// The DType of a C++ element type: dtype_of<float>::value is DType::f32.
template <class T>
struct dtype_of;
/// \cond AG_DTYPE_OF_SPECIALIZATIONS
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::b8;
};
/// \endcond
/// dtype_of<T>::value.
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

/// Calls `f.template operator()<T>()` with the C++ type of `t`:
/// `dispatch(t, "exp", [&]<class T>() { ... });`
template <class F>
decltype(auto) dispatch_all(DType t, const char* /*op*/, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    case DType::b8: return f.template operator()<bool>();
  }
  throw Error("dispatch: unknown dtype");
}

/// Calls f with a float or double tag for an f32/f64 dtype; DTypeError naming op otherwise.
template <class F>
decltype(auto) dispatch_float(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    default: throw DTypeError(detail::cat(op, ": expected a floating dtype (f32, f64), got ", t));
  }
}

/// Numeric dtypes: everything but bool.
template <class F>
decltype(auto) dispatch_numeric(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    default: throw DTypeError(detail::cat(op, ": expected a numeric dtype, got ", t));
  }
}

}  // namespace ag
