#include "attograd/factory.h"

#include <atomic>
#include <cmath>
#include <cstdint>

#include "attograd/detail/convert.h"

#include "kernels/kernels.h"

namespace ag {
namespace {

void check_shape(const Shape& shape, const char* op) {
  for (int64_t d : shape) AG_CHECK(d >= 0, ShapeError, op, ": negative dimension in shape ", shape);
}

// Fills a fresh tensor from a per-element draw, in row-major order (so a seed gives the
// same values whatever the dtype's width).
template <class Draw>
Tensor generate(const Shape& shape, DType dtype, const char* op, Draw draw) {
  // bf16/f16: drawn in f32, then rounded once (double -> float -> half, as PyTorch's casts).
  if (is_reduced_float(dtype)) return kernels::convert(generate(shape, DType::f32, op, draw), dtype);
  check_shape(shape, op);
  Tensor t = kernels::empty(shape, dtype, op);
  int64_t n = t.numel();
  dispatch_all(dtype, op, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(draw());
  });
  return t;
}

Generator& pick(Generator* gen) { return gen ? *gen : default_generator(); }

std::atomic<DType> g_default_dtype{DType::f32};

DType float_or_default(std::optional<DType> dtype) { return dtype ? *dtype : get_default_dtype(); }

}  // namespace

DType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(DType t) {
  AG_CHECK(t == DType::f32 || t == DType::f64, DTypeError,
           "set_default_dtype: only f32 or f64 can be the default, got ", t);
  g_default_dtype.store(t, std::memory_order_relaxed);
}

// Without a dtype, the value's kind picks it (torch.full): bool, i64 or the default float.
// Integral values are written as int64 (no rounding through double above 2^53).
// `op` names the public factory in size, allocation and conversion errors: a value an
// integer dtype cannot hold (NaN, +-inf, 1e300 or 2^40 for i32) is a ValueError, as
// PyTorch's "value cannot be converted to type int without overflow".
static Tensor filled(const Shape& shape, Scalar value, std::optional<DType> dtype, const char* op) {
  check_shape(shape, op);
  Tensor t = kernels::empty(shape, dtype ? *dtype : value.dtype(), op);
  if (value.is_floating_point()) {
    kernels::fill(t, value.to_double(), op);
  } else if (is_reduced_float(t.dtype())) {  // int64 -> float -> half, as c10's cast
    kernels::fill(t, static_cast<double>(static_cast<float>(value.to_int())), op);
  } else if (is_byte_int(t.dtype())) {  // i8 / u8: exact in double; fill checks the range
    kernels::fill(t, static_cast<double>(value.to_int()), op);
  } else {
    dispatch_all(t.dtype(), op, [&]<class T>() {
      const int64_t x = value.to_int();
      if constexpr (std::is_same_v<T, int32_t>)
        AG_CHECK(x >= INT32_MIN && x <= INT32_MAX, ValueError, op, ": value ", x, " cannot be converted to type ",
                 t.dtype(), " (int32_t) without overflow");
      T* p = t.data<T>();
      const T v = static_cast<T>(x);
      for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = v;
    });
  }
  return t;
}

Tensor empty(const Shape& shape, std::optional<DType> dtype) {
  check_shape(shape, "empty");
  return kernels::empty(shape, float_or_default(dtype), "empty");
}
Tensor full(const Shape& shape, Scalar value, std::optional<DType> dtype) {
  return filled(shape, value, dtype, "full");
}
Tensor zeros(const Shape& shape, std::optional<DType> dtype) {
  return filled(shape, 0.0, float_or_default(dtype), "zeros");
}
Tensor ones(const Shape& shape, std::optional<DType> dtype) {
  return filled(shape, 1.0, float_or_default(dtype), "ones");
}
Tensor scalar_tensor(Scalar value, std::optional<DType> dtype) {
  return filled(Shape{}, value, dtype, "scalar_tensor");
}

Tensor arange(Scalar end, std::optional<DType> dtype) { return arange(0, end, 1, dtype); }

// As torch.arange: the length is ceil((end - start) / step) in double. An integral dtype
// casts start, end and step to int64 first (ValueError when one cannot be: NaN, 1e300),
// for the checks and the values (so a step of 0.5 with dtype i64 is a zero step); i64
// counts exactly, in uint64 (arange(INT64_MIN, INT64_MAX, INT64_MAX) has 3 elements),
// and integral values are start + i * step in int64, exact, never through double.
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype) {
  bool any_float = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  DType dt = dtype ? *dtype : (any_float ? get_default_dtype() : DType::i64);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  AG_CHECK(std::isfinite(s) && std::isfinite(e), ValueError, "arange: start and end must be finite, got ", s, " and ",
           e);
  const bool integral = !is_floating(dt);
  if (integral) {
    for (const Scalar* v : {&start, &end, &step})
      AG_CHECK(!v->is_floating_point() || detail::float_fits_int<int64_t>(v->to_double()), ValueError, "arange: start ",
               s, ", end ", e, " and step ", st, " must be representable as int64 for dtype ", dt);
  }
  const int64_t xs = start.to_int(), xe = end.to_int(), xst = step.to_int();
  const double e_chk = integral ? static_cast<double>(xe) : e;
  if (integral) s = static_cast<double>(xs), st = static_cast<double>(xst);
  AG_CHECK(st != 0, ValueError, "arange: step must be non-zero (start ", start.to_double(), ", end ", e, ", step ",
           step.to_double(), ", dtype ", dt, ")");
  AG_CHECK((st > 0 && e_chk >= s) || (st < 0 && e_chk <= s), ValueError,
           "arange: upper bound and lower bound inconsistent with step sign (start ", start.to_double(), ", end ", e,
           ", step ", step.to_double(), ")");
  // The count: ceil(|xe - xs| / |xst|) exactly in uint64 for i64 (|xe - xs| < 2^64),
  // else in double; 2^63 or more does not fit in int64 (casting it would be UB).
  const double span = std::ceil((e - start.to_double()) / step.to_double());
  uint64_t count = 0;
  if (dt == DType::i64) {
    const uint64_t d = xst > 0 ? static_cast<uint64_t>(xe) - static_cast<uint64_t>(xs)
                               : static_cast<uint64_t>(xs) - static_cast<uint64_t>(xe);
    const uint64_t a = xst > 0 ? static_cast<uint64_t>(xst) : uint64_t{0} - static_cast<uint64_t>(xst);
    count = d / a + (d % a != 0);
  } else if (span <= 0) {  // i32 from float bounds: arange(0.9, -0.5, 1) truncates to [0, 0)
    count = 0;
  } else if (span < 9223372036854775808.0) {
    count = static_cast<uint64_t>(span);
  } else {
    count = UINT64_MAX;  // NaN too
  }
  AG_CHECK(count <= static_cast<uint64_t>(INT64_MAX), ShapeError, "arange: [", start.to_double(), ", ", e,
           ") with step ", step.to_double(), " has too many elements (", span, ")");
  const int64_t n = static_cast<int64_t>(count);
  // bf16/f16: computed in f32, then rounded (PyTorch computes in its float accumulate type).
  const DType compute = is_reduced_float(dt) ? DType::f32 : dt;
  Tensor t = kernels::empty(Shape{n}, compute, "arange");
  dispatch_all(compute, "arange", [&]<class T>() {
    T* p = t.data<T>();
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + st * static_cast<double>(i));
    } else {
      // start + i * step modulo 2^64: exact, as every value lies in [start, end) (i64);
      // narrower dtypes then wrap, as PyTorch's cast does.
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(
            static_cast<int64_t>(static_cast<uint64_t>(xs) + static_cast<uint64_t>(i) * static_cast<uint64_t>(xst)));
    }
  });
  return compute == dt ? t : kernels::convert(t, dt);
}

// (n, m), m = n when not given; a negative m is an error (PyTorch), not "square".
Tensor eye(int64_t n, std::optional<int64_t> m_in, std::optional<DType> dtype_opt) {
  DType dtype = float_or_default(dtype_opt);
  AG_CHECK(n >= 0, ShapeError, "eye: negative size ", n);
  const int64_t m = m_in.value_or(n);
  AG_CHECK(m >= 0, ShapeError, "eye: m must be >= 0, got ", m, " (shape [", n, ", ", m, "])");
  int64_t i = 0;
  return generate(Shape{n, m}, dtype, "eye", [&] {
    int64_t k = i++;
    return k / m == k % m ? 1.0 : 0.0;
  });
}

// PyTorch 1.13's CPU kernel: the first half counts up from start, the second half down
// from end (so both ends are exact), each value one fused multiply-add (the kernel is
// built with FMA contraction). Its vectorized loop handles runs of 2 * V elements (V = 8
// f32 / 4 f64 lanes, AVX2) as vectors whose lane j is base + j * step with base from the
// formula; we repeat that split so the values match bit for bit (for steps up to 32768,
// beyond which PyTorch splits the range across threads).
Tensor linspace(double start, double end, int64_t steps, std::optional<DType> dtype_opt) {
  const DType dtype = dtype_opt.value_or(get_default_dtype());
  AG_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got ", steps);
  AG_CHECK(dtype != DType::b8, DTypeError, "linspace: needs a numeric dtype (f32, f64, i32, i64), got ", dtype);
  Tensor t = kernels::empty(Shape{steps}, dtype);
  if (!is_floating(dtype)) {
    // PyTorch's integral linspace (RangeFactoriesKernel.cpp): start and end cast to T
    // (truncated), the step in double, start + i step for the first half and
    // end - (steps - 1 - i) step for the second, each truncated to T:
    // linspace(5, 10, 3, i32) = [5, 7, 10].
    dispatch_numeric(dtype, "linspace", [&]<class T>() {
      T* p = t.data<T>();
      const T s = static_cast<T>(start), e = static_cast<T>(end);
      if (steps == 1) p[0] = s;
      if (steps <= 1) return;
      const double step = (static_cast<double>(e) - static_cast<double>(s)) / static_cast<double>(steps - 1);
      const int64_t half = steps / 2;
      for (int64_t i = 0; i < steps; ++i)
        p[i] = i < half ? static_cast<T>(s + step * static_cast<double>(i))
                        : static_cast<T>(e - step * static_cast<double>(steps - i - 1));
    });
    return t;
  }
  dispatch_float(dtype, "linspace", [&]<class T>() {
    T* p = t.data<T>();
    const T s = static_cast<T>(start), e = static_cast<T>(end);
    if (steps == 1) p[0] = s;
    if (steps <= 1) return;
    const T step = (e - s) / static_cast<T>(steps - 1);
    const int64_t half = steps / 2;
    auto at = [&](int64_t i) {
      return i < half ? std::fma(step, static_cast<T>(i), s) : std::fma(-step, static_cast<T>(steps - i - 1), e);
    };
    constexpr int64_t V = sizeof(T) == 4 ? 8 : 4;
    int64_t i = 0;
    for (; i + 2 * V <= steps; i += 2 * V) {
      for (int64_t b = i; b < i + 2 * V; b += V) {
        const T base = at(b);
        for (int64_t j = 0; j < V; ++j) p[b + j] = base + static_cast<T>(j) * step;
      }
    }
    for (; i < steps; ++i) p[i] = at(i);
  });
  return t;
}

Tensor rand(const Shape& shape, std::optional<DType> dtype, Generator* gen) {
  return uniform(shape, 0.0, 1.0, dtype, gen);
}

// PyTorch's uniform_ checks: from <= to (NaN fails it) and to - from finite.
Tensor uniform(const Shape& shape, double low, double high, std::optional<DType> dtype_opt, Generator* gen) {
  DType dtype = float_or_default(dtype_opt);
  AG_CHECK(is_floating(dtype), DTypeError, "uniform: needs a floating dtype, got ", dtype);
  AG_CHECK(low <= high, ValueError, "uniform: uniform_ expects to return a [from, to) range, but found from=", low,
           " > to=", high);
  AG_CHECK(std::isfinite(high - low), ValueError, "uniform: uniform_ expects to-from <= std::numeric_limits<",
           dtype == DType::f32 ? "float" : "double", ">::max(), but found to=", high, " and from=", low,
           " which result in to-from to exceed the limit");
  Generator& g = pick(gen);
  auto hold = g.lock();  // every draw of this op, in one run of the default sequence
  return generate(shape, dtype, "uniform", [&] { return low + (high - low) * g.uniform(); });
}

Tensor randn(const Shape& shape, std::optional<DType> dtype_opt, Generator* gen) {
  DType dtype = float_or_default(dtype_opt);
  AG_CHECK(is_floating(dtype), DTypeError, "randn: needs a floating dtype, got ", dtype);
  Generator& g = pick(gen);
  auto hold = g.lock();
  return generate(shape, dtype, "randn", [&] { return g.normal(); });
}

// Values in [low, high) drawn as int64 (Generator::integer, in uint64: any range up to
// [INT64_MIN, INT64_MAX) is fine) and stored without a trip through double; for i32 the
// range must fit (PyTorch: random_ expects 'from' and 'to - 1' in the dtype's range).
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen, DType dtype) {
  AG_CHECK(low < high, ValueError, "randint: empty range [", low, ", ", high, ")");
  AG_CHECK(dtype != DType::i32 || (low >= INT32_MIN && high - 1 <= INT32_MAX), ValueError, "randint: range [", low,
           ", ", high, ") does not fit in dtype ", dtype);
  check_shape(shape, "randint");
  Tensor t = kernels::empty(shape, dtype, "randint");
  Generator& g = pick(gen);
  auto hold = g.lock();
  dispatch_all(dtype, "randint", [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = static_cast<T>(g.integer(low, high));
  });
  return t;
}

// Two draws per 64-bit number: each 32-bit half is compared with p * 2^32 (dropout
// masks are the hottest use of random numbers in training).
Tensor bernoulli(const Shape& shape, double p, std::optional<DType> dtype_opt, Generator* gen) {
  DType dtype = float_or_default(dtype_opt);
  AG_CHECK(p >= 0 && p <= 1, ValueError, "bernoulli: p must be in [0, 1], got ", p);
  Generator& g = pick(gen);
  const uint64_t threshold = static_cast<uint64_t>(p * 4294967296.0);
  uint64_t bits = 0;
  int64_t i = 0;
  auto hold = g.lock();
  return generate(shape, dtype, "bernoulli", [&] {
    if ((i++ & 1) == 0)
      bits = g.next_u64();
    else
      bits >>= 32;
    return (bits & 0xffffffffu) < threshold ? 1.0 : 0.0;
  });
}

Tensor empty_like(const Tensor& t) { return empty(t.shape(), t.dtype()); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
Tensor full_like(const Tensor& t, Scalar value) { return full(t.shape(), value, t.dtype()); }
Tensor rand_like(const Tensor& t, Generator* gen) { return rand(t.shape(), t.dtype(), gen); }
Tensor randn_like(const Tensor& t, Generator* gen) { return randn(t.shape(), t.dtype(), gen); }

}  // namespace ag
