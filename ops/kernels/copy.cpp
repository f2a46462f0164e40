// Copies, conversions and fills over arbitrary strides.
#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "attograd/detail/convert.h"
#include "kernels/convert_rows.h"
#include "kernels/kernels.h"
#include "kernels/strided.h"

namespace ag::kernels {
namespace {

// dispatch_all plus the 16-bit floats: copies and fills move every dtype (the computing
// kernels, on dispatch_all, refuse bf16/f16 for now).
template <class F>
void dispatch_storage(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::bf16: f.template operator()<BFloat16>(); return;
    case DType::f16: f.template operator()<Half>(); return;
    case DType::i8: f.template operator()<int8_t>(); return;
    case DType::u8: f.template operator()<uint8_t>(); return;
    default: dispatch_all(t, op, std::forward<F>(f));
  }
}

template <class T>
constexpr bool is_half_v = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

// One element S -> D. The 16-bit floats go through float both ways, as PyTorch's c10 casts:
// f64 -> bf16 rounds to f32 first (so 1 + 2^-8 + 2^-40 ties to 1, as torch's cast), and
// bf16 -> i64 truncates the float (NaN/inf -> the integer minimum, as convert_value).
template <class D, class S>
D cast(S v) {
  if constexpr (is_half_v<S> && is_half_v<D>)
    return D(static_cast<float>(v));
  else if constexpr (is_half_v<S>)
    return detail::convert_value<D>(static_cast<float>(v));
  else if constexpr (is_half_v<D>)
    return D(static_cast<float>(v));
  else
    return detail::convert_value<D>(v);
}

}  // namespace

// Every size is checked: numel and strides (ShapeError), bytes (ShapeError on overflow),
// the allocation itself (MemoryError naming op, shape, dtype and bytes).
Tensor empty(const Shape& shape, DType dtype, const char* op) {
  const int64_t n = numel(shape, op);
  Strides strides = contiguous_strides(shape, op);
  int64_t nbytes = 0;
  AG_CHECK(!__builtin_mul_overflow(n, static_cast<int64_t>(itemsize(dtype)), &nbytes), ShapeError, op, ": shape ",
           shape, " of ", dtype, " needs more bytes than int64 can count");
  StoragePtr st;
  try {
    st = std::make_shared<Storage>(static_cast<std::size_t>(nbytes));
  } catch (const MemoryError& e) {
    throw MemoryError(
        detail::cat(op, ": cannot allocate ", nbytes, " bytes for shape ", shape, " of ", dtype, " (", e.what(), ")"));
  } catch (const std::bad_alloc&) {
    throw MemoryError(
        detail::cat(op, ": cannot allocate ", nbytes, " bytes for shape ", shape, " of ", dtype, " (std::bad_alloc)"));
  }
  return Tensor(std::move(st), shape, strides, 0, dtype);
}

void copy(const Tensor& src, const Tensor& dst) {
  const Shape& shape = dst.shape();
  std::array<Strides, 2> st{dst.strides(), broadcast_strides(src, shape)};
  dispatch_storage(dst.dtype(), "copy", [&]<class D>() {
    dispatch_storage(src.dtype(), "copy", [&]<class S>() {
      D* d = dst.data<D>();
      const S* s = src.data<S>();
      // A large contiguous copy or conversion runs in chunks on the thread pool: autocast's
      // casts were a fifth of workload 7's bf16 step at 2 threads, all on one of them.
      for_each_row_parallel<2>(shape, st, [&](const auto& off, int64_t n, const auto& inc) {
        D* dp = d + off[0];
        const S* sp = s + off[1];
        if constexpr (std::is_same_v<D, S>) {
          if (inc[0] == 1 && inc[1] == 1) {
            std::memcpy(dp, sp, static_cast<std::size_t>(n) * sizeof(D));
            return;
          }
        }
        // Contiguous f32 <-> bf16 / f16 rows: the vector kernels (convert_rows.h), the
        // same bits as cast<> below.
        if constexpr (std::is_same_v<S, float> && is_half_v<D>) {
          if (inc[0] == 1 && inc[1] == 1) {
            // (Casts on both sides: clang 14 type-checks this branch even where it is discarded.)
            auto* out = reinterpret_cast<uint16_t*>(dp);
            const auto* in = reinterpret_cast<const float*>(sp);
            std::is_same_v<D, BFloat16> ? f32_to_bf16_row(out, in, n) : f32_to_f16_row(out, in, n);
            return;
          }
        }
        if constexpr (is_half_v<S> && std::is_same_v<D, float>) {
          if (inc[0] == 1 && inc[1] == 1) {
            const auto* in = reinterpret_cast<const uint16_t*>(sp);
            auto* out = reinterpret_cast<float*>(dp);
            std::is_same_v<S, BFloat16> ? bf16_to_f32_row(out, in, n) : f16_to_f32_row(out, in, n);
            return;
          }
        }
        // Float -> integer: NaN, +-inf and out-of-range values give the type's minimum
        // (x86's integer indefinite, as PyTorch on x86), range-checked, never a UB cast.
        if (inc[0] == 1 && inc[1] == 1)  // a loop the compiler vectorizes (compare + blend)
          for (int64_t i = 0; i < n; ++i) dp[i] = cast<D>(sp[i]);
        else
          for (int64_t i = 0; i < n; ++i) dp[i * inc[0]] = cast<D>(sp[i * inc[1]]);
      });
    });
  });
}

Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = empty(x.shape(), x.dtype());
  copy(x, out);
  return out;
}

Tensor convert(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return contiguous(x);
  Tensor out = empty(x.shape(), dtype);
  copy(x, out);
  return out;
}

// PyTorch's checked_convert (fill_, full, masked_fill): a value the integer dtype cannot
// hold (NaN, +-inf, out of range after truncation toward zero) is an error, not a cast.
namespace {
template <class T>
void check_fits(double value, DType dtype, const char* op) {
  AG_CHECK(detail::float_fits_int<T>(value), ValueError, op, ": value ", value, " cannot be converted to type ", dtype,
           " (",
           sizeof(T) == 8        ? "int64_t"
           : sizeof(T) == 4      ? "int32_t"
           : std::is_signed_v<T> ? "int8_t"
                                 : "uint8_t",
           ") without overflow");
}
}  // namespace

// Contiguous rows of all-zero bits (0, +0.0, false: every zeros() and zero_()) are one
// memset, other contiguous rows a plain fill_n the compiler vectorizes; the strided
// loop, which it does not, only takes the rest (15x slower on 800x64 f32).
void fill(const Tensor& dst, double value, const char* op) {
  std::array<Strides, 1> st{dst.strides()};
  dispatch_storage(dst.dtype(), op, [&]<class T>() {
    T* d = dst.data<T>();
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) check_fits<T>(value, dst.dtype(), op);
    const T v = cast<T>(value);
    const T zero{};
    const bool zero_bits = std::memcmp(&v, &zero, sizeof(T)) == 0;  // not -0.0
    for_each_row<1>(dst.shape(), st, [&](const auto& off, int64_t n, const auto& inc) {
      T* row = d + off[0];
      if (inc[0] == 1 && zero_bits)
        std::memset(static_cast<void*>(row), 0, static_cast<std::size_t>(n) * sizeof(T));
      else if (inc[0] == 1)
        std::fill_n(row, n, v);
      else
        for (int64_t i = 0; i < n; ++i) row[i * inc[0]] = v;
    });
  });
}

}  // namespace ag::kernels
