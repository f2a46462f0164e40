#pragma once
/// \file
/// DType (f32, f64, i32, i64, b8, bf16, f16, i8, u8), its size and name, the default float dtype, type
/// promotion between dtypes and the dispatch from a DType to its C++ type.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "attograd/error.h"
#include "attograd/half.h"

namespace ag {

/// Element types: f32, f64, i32, i64, b8 (bool), bf16 (bfloat16, ag::BFloat16) and f16
/// (IEEE half, ag::Half). The two 16-bit floats convert to and from every dtype and load
/// and save; most ops do not compute on them yet (a DTypeError naming the op). i8 and u8
/// are storage dtypes for quantized weights (nn/QUANTIZATION.md): they convert, copy, print,
/// save and load; the computing ops refuse them (a DTypeError naming the op).
enum class DType : uint8_t { f32, f64, i32, i64, b8, bf16, f16, i8, u8 };

/// Bytes per element.
constexpr std::size_t itemsize(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::b8: return 1;
    case DType::bf16: return 2;
    case DType::f16: return 2;
    case DType::i8: return 1;
    case DType::u8: return 1;
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
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
  }
  return "?";
}

/// bf16 or f16: the 16-bit floats, stored as ag::BFloat16 / ag::Half, computed in f32.
constexpr bool is_reduced_float(DType t) { return t == DType::bf16 || t == DType::f16; }
/// f32, f64, bf16 or f16.
constexpr bool is_floating(DType t) { return t == DType::f32 || t == DType::f64 || is_reduced_float(t); }
/// i8 / u8: the quantized-weight storage dtypes (no computing op takes them).
constexpr bool is_byte_int(DType t) { return t == DType::i8 || t == DType::u8; }
constexpr bool is_integral(DType t) { return t == DType::i32 || t == DType::i64 || is_byte_int(t); }  ///< not bool

/// PyTorch's promote_types: the smallest dtype both convert to without losing the kind.
/// Without the 16-bit floats the lattice is a chain: bool < i8, u8 < i32 < i64 < f32 < f64
/// (i8 with u8 gives i32: PyTorch's i16, which attograd lacks); a
/// 16-bit float beats bool and the integers, loses to f32 and f64, and bf16 with f16
/// gives f32 (neither holds the other: torch.promote_types(bfloat16, float16)).
constexpr DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_byte_int(a) && is_byte_int(b)) return DType::i32;  // torch: i16, which attograd lacks
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::f32;
  if (is_reduced_float(a)) return b == DType::f32 || b == DType::f64 ? b : a;
  if (is_reduced_float(b)) return a == DType::f32 || a == DType::f64 ? a : b;
  constexpr auto rank = [](DType t) {
    switch (t) {
      case DType::b8: return 0;
      case DType::i8:
      case DType::u8: return 1;
      case DType::i32: return 2;
      case DType::i64: return 3;
      case DType::f32: return 4;
      case DType::f64: return 5;
      case DType::bf16:
      case DType::f16: break;  // handled above
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
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::i8;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct dtype_of<Half> {
  static constexpr DType value = DType::f16;
};
/// \endcond
/// dtype_of<T>::value.
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

namespace detail {
/// The DTypeError of an op that does not compute on bf16/f16 yet.
[[noreturn]] inline void throw_reduced_float_unsupported(const char* op, DType t) {
  throw DTypeError(detail::cat(op, ": dtype ", t, " is not supported yet (convert with .to(DType::f32))"));
}
/// The DTypeError of a computing op given an i8 / u8 (quantized storage) tensor.
[[noreturn]] inline void throw_byte_int_unsupported(const char* op, DType t) {
  throw DTypeError(
      detail::cat(op, ": dtype ", t, " is a storage dtype for quantized weights (convert with .to(DType::f32))"));
}
}  // namespace detail

/// Calls `f.template operator()<T>()` with the C++ type of `t`:
/// `dispatch(t, "exp", [&]<class T>() { ... });`. bf16/f16 are a DTypeError naming op here:
/// kernels take them before dispatching (widened to f32, or their own 16-bit path), and
/// conversions and fills handle them directly.
template <class F>
decltype(auto) dispatch_all(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    case DType::b8: return f.template operator()<bool>();
    case DType::bf16:
    case DType::f16: detail::throw_reduced_float_unsupported(op, t);
    case DType::i8:
    case DType::u8: detail::throw_byte_int_unsupported(op, t);
  }
  throw Error(detail::cat(op, ": unknown dtype"));
}

/// Calls f with a float or double tag for an f32/f64 dtype; DTypeError naming op otherwise
/// (bf16/f16 too: the kernels take those before dispatching, as dispatch_all says).
template <class F>
decltype(auto) dispatch_float(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::bf16:
    case DType::f16: detail::throw_reduced_float_unsupported(op, t);
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
    case DType::bf16:
    case DType::f16: detail::throw_reduced_float_unsupported(op, t);
    case DType::i8:
    case DType::u8: detail::throw_byte_int_unsupported(op, t);
    default: throw DTypeError(detail::cat(op, ": expected a numeric dtype, got ", t));
  }
}

}  // namespace ag
