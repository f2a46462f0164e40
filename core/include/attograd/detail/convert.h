#pragma once
// Defined element conversions between the C++ types of the dtypes (internal: ag::detail).
// A float -> integer static_cast of NaN, +-inf or a value whose truncation the integer
// type cannot hold is undefined behaviour; here it gives what x86's cvttss2si / cvttsd2si
// (and PyTorch's CPU kernels built with them) give: the "integer indefinite" value, the
// type's minimum (INT64_MIN for i64, INT32_MIN for i32); to i8 / u8 it goes through i32
// and wraps. Every other conversion is the plain static_cast (integer narrowing wraps
// modulo 2^N, C++20; anything -> bool is != 0).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ag::detail {

/// True when the float v truncates to a value the integer type I holds (false for NaN
/// and +-inf). The bounds are -2^N and 2^N (N = I's value bits), exact in F; a value in
/// (-2^N - 1, -2^N) also truncates to -2^N, which matters when F can represent it.
template <class I, class F>
constexpr bool float_fits_wide_int(F v) {
  static_assert(std::is_integral_v<I> && std::is_signed_v<I> && std::is_floating_point_v<F>);
  constexpr F hi = F(std::numeric_limits<I>::max() / 2 + 1) * F(2);  // 2^N
  constexpr F lo = -hi;
  constexpr bool lo_minus_one_exact = lo - F(1) != lo;
  if constexpr (lo_minus_one_exact)
    return v > lo - F(1) && v < hi;  // NaN fails both comparisons
  else
    return v >= lo && v < hi;
}
template <class I, class F>
constexpr bool float_fits_int(F v) {
  if constexpr (sizeof(I) == 1)  // i8 / u8: every bound and its neighbours are exact in F
    return v > F(std::numeric_limits<I>::min()) - F(1) && v < F(std::numeric_limits<I>::max()) + F(1);
  else
    return float_fits_wide_int<I>(v);
}

/// static_cast<To>(v) with float -> integer made defined (see the top of this file).
template <class To, class From>
constexpr To convert_value(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    if constexpr (sizeof(To) == 1)  // i8 / u8: through i32 and wrapped, as c10's casts to uint8
      return static_cast<To>(convert_value<int32_t>(v));
    else
      return float_fits_int<To>(v) ? static_cast<To>(v) : std::numeric_limits<To>::min();
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace ag::detail
