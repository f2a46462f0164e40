#pragma once
/// \file
/// The storage types of DType::bf16 and DType::f16: ag::BFloat16 and ag::Half, 16 bits
/// each, and their conversions to and from float, bit-identical to PyTorch 1.13's c10
/// (round to nearest even, overflow to inf, NaN kept a NaN, -0 kept). Arithmetic is not
/// defined on them: convert to float, compute, convert back (PyTorch's CPU semantics).
#include <bit>
#include <cstdint>

namespace ag {

namespace detail {

/// float -> bf16 bits: round to nearest even on the upper 16 bits (c10's
/// round_to_nearest_even). Every NaN gives 0x7FC0, as c10's scalar conversion (PyTorch's
/// vectorized f32 -> bf16 loop gives 0xFFFF instead; both are NaNs). Subnormals stay
/// (bf16 has f32's exponent range); values past bf16's max round to +-inf.
constexpr uint16_t float_to_bf16_bits(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return static_cast<uint16_t>((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}

/// bf16 bits -> float: exact (the bits shifted up, NaN payloads kept).
constexpr float bf16_bits_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// float -> IEEE binary16 bits, round to nearest even: |f| >= 65520 gives +-inf, values
/// below 2^-14 become subnormals (multiples of 2^-24, ties to even), NaN gives
/// sign | 0x7E00 (c10's fp16_ieee_from_fp32_value drops the payload, keeps the sign).
constexpr uint16_t float_to_f16_bits(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((w >> 16) & 0x8000u);
  const uint32_t a = w & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;                      // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00u;                     // >= 65520 (the tie above 65504) and inf
  if (a >= 0x38800000u) {                                          // normal: >= 2^-14
    const uint32_t r = a + 0xFFFu + ((a >> 13) & 1u);              // RNE on the 13 dropped bits
    return sign | static_cast<uint16_t>((r - 0x38000000u) >> 13);  // exponent bias 127 -> 15
  }
  const uint32_t e = a >> 23;
  if (e < 102) return sign;  // below 2^-25 (half the smallest subnormal): +-0
  // Subnormal: value / 2^-24 = mant * 2^(e - 126), rounded to nearest even.
  const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into the smallest normal
  return sign | static_cast<uint16_t>(q);
}

/// IEEE binary16 bits -> float: exact for numbers; a NaN keeps its sign and payload and is
/// quieted (bit 22 set), as c10's fp16_ieee_to_fp32_value on x86.
constexpr float f16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u));
  if (e == 0) {
    if (m == 0) return std::bit_cast<float>(sign);
    e = 113;  // subnormal m * 2^-24: normalize so the leading 1 is the implicit bit
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    return std::bit_cast<float>(sign | (e << 23) | ((m & 0x3FFu) << 13));
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace detail

/// bfloat16 storage (1 sign, 8 exponent, 7 mantissa bits); from double or an integer it goes
/// through float first, as PyTorch does (a double is rounded twice, as torch's cast rounds it).
struct BFloat16 {
  uint16_t x = 0;  ///< the raw bits
  constexpr BFloat16() = default;
  constexpr BFloat16(float f) : x(detail::float_to_bf16_bits(f)) {}           ///< rounds to nearest even
  constexpr operator float() const { return detail::bf16_bits_to_float(x); }  ///< exact
  /// The value whose raw bits are `bits`.
  static constexpr BFloat16 from_bits(uint16_t bits) {
    BFloat16 b;
    b.x = bits;
    return b;
  }
};

/// IEEE binary16 storage (1 sign, 5 exponent, 10 mantissa bits; max 65504), through float.
struct Half {
  uint16_t x = 0;  ///< the raw bits
  constexpr Half() = default;
  constexpr Half(float f) : x(detail::float_to_f16_bits(f)) {}               ///< rounds to nearest even
  constexpr operator float() const { return detail::f16_bits_to_float(x); }  ///< exact
  /// The value whose raw bits are `bits`.
  static constexpr Half from_bits(uint16_t bits) {
    Half h;
    h.x = bits;
    return h;
  }
};

static_assert(sizeof(BFloat16) == 2 && sizeof(Half) == 2);

}  // namespace ag
