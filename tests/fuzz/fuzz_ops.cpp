// The op fuzzer: the input decodes into a few small tensors (random shapes up to 3 dims
// of 0..4, dtypes f32 / f64 / i32 / i64 / bool, values k/8 with some inf, NaN, 1e30,
// 1e300 and denormals, integers -8..8 with the int32 / int64 edges, contiguous or
// strided: transposed, every other row, or expanded) and a program of up to 8 ops on
// them (elementwise, reductions, matmul, softmax, views and other shaping, indexing,
// conversions, factories) whose arguments (dims, indices, shapes, pads, ranges, fill
// values) also come from the input, with integer extremes and NaN / inf, and may be
// invalid or overflow. Each op must either throw an ag::Error or return a result that matches the
// float64 path: the same op (or its composite definition: softmax as exp / sum, matmul
// as a broadcast product summed, var from the mean) on float64 contiguous copies of the
// arguments. Where that reference is finite, the result must be finite and within the
// tolerance of its dtype; views, shaping and indexing must match exactly. A result joins
// the tensors later ops draw from when it is small.
#include "fuzz_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

constexpr int kMaxOps = 8, kMaxRegs = 6;

// ---- inputs -------------------------------------------------------------------------

double decode_value(uint8_t b) {
  switch (b) {
    case 255: return INFINITY;
    case 254: return -INFINITY;
    case 253: return NAN;
    case 252: return 1e30;
    case 251: return 1e300;  // inf in f32
    case 250: return std::numeric_limits<double>::denorm_min();
    case 249: return -std::numeric_limits<float>::denorm_min();
    case 248: return 9223372036854775808.0;  // 2^63: just past int64
    case 247: return -2147483649.0;          // just past int32
    default: return (int(b) - 126) / 8.0;    // exact in f32: k/8, |k| <= 126
  }
}

// Integer edges: bytes 240..255 pick one, others give -8..8.
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min(), kMax64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kEdges[16] = {kMin64,
                                kMax64,
                                kMin64 + 1,
                                kMax64 - 1,
                                INT32_MIN,
                                INT32_MAX,
                                int64_t{INT32_MIN} - 1,
                                int64_t{INT32_MAX} + 1,
                                -1,
                                0,
                                int64_t{1} << 62,
                                -(int64_t{1} << 62),
                                int64_t{1} << 53,
                                (int64_t{1} << 53) + 1,
                                kMax64 / 2 + 1,
                                255};
int64_t decode_int(uint8_t b) { return b >= 240 ? kEdges[b - 240] : int64_t(b % 17) - 8; }

Tensor make_input(fuzz::Bytes& in, const Shape* like) {
  static const DType kDTypes[] = {DType::f32, DType::f64, DType::f32, DType::f64, DType::i32, DType::i64, DType::b8};
  const DType dtype = kDTypes[in.u8() % 7];
  Shape shape;
  if (like && in.flag()) {
    // Broadcast-compatible with an earlier input: its shape, some dims set to 1.
    for (int64_t d : *like) shape.push_back(in.u8() % 3 == 0 ? 1 : d);
  } else {
    const int64_t ndim = in.range(0, 3);
    for (int64_t i = 0; i < ndim; ++i) {
      const int64_t d = in.u8() % 9;
      shape.push_back(d == 0 ? 0 : 1 + (d - 1) % 4);
    }
  }
  // The layout: 0 contiguous, 1 transposed, 2 every other element of dim 0, 3 expanded.
  const int layout = shape.empty() ? 0 : in.u8() % 4;
  Shape base = shape;
  if (layout == 1) std::swap(base[0], base[base.size() - 1]);
  if (layout == 2) base[0] *= 2;
  if (layout == 3) base[0] = 1;
  Tensor t;
  if (ag::is_integral(dtype)) {  // exact int64 values (2^63 - 1 is not a double), wrapped into i32
    std::vector<int64_t> values(size_t(ag::numel(base)));
    for (int64_t& v : values) v = decode_int(in.u8());
    t = Tensor::from_vector(values, base).to(dtype);
  } else {
    std::vector<double> values(size_t(ag::numel(base)));
    for (double& v : values) {
      const uint8_t b = in.u8();
      v = ag::is_floating(dtype) ? decode_value(b) : double(b & 1);
    }
    t = Tensor::from_vector(values, base).to(dtype);
  }
  if (layout == 1) t = t.transpose(0, -1);
  if (layout == 2) t = t.slice(0, 0, base[0], 2);
  if (layout == 3) t = t.expand(shape);
  return t;
}

// ---- ops ----------------------------------------------------------------------------

// An op's arguments beyond its tensors, decoded once and given to both paths.
struct Params {
  int64_t d0 = 0, d1 = 0, n = 0;
  bool keep = false;
  std::vector<int64_t> list;       // small, or now and then an integer edge
  int64_t i0 = 0, i1 = 0, i2 = 0;  // decode_int: starts, lengths, pads, ranges
  double v = 0;                    // decode_value: fill values
};

constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::i32, DType::i64, DType::b8};

// The element count of arange(start, end, step) over int64 exactly (0 for a wrong sign),
// for the factories below: counts past a few thousand but inside int64 are skipped (the
// allocation would be the fuzzer's memory limit, not a finding); counts past 2^60 run,
// as they must raise before allocating.
uint64_t arange_count(int64_t a, int64_t b, int64_t st) {
  if (st == 0 || (st > 0 && b < a) || (st < 0 && b > a)) return 0;
  const uint64_t d = st > 0 ? uint64_t(b) - uint64_t(a) : uint64_t(a) - uint64_t(b);
  const uint64_t m = st > 0 ? uint64_t(st) : uint64_t(0) - uint64_t(st);
  return d / m + (d % m != 0);
}
bool too_big_to_try(uint64_t count) { return count > 4096 && count <= (uint64_t(1) << 60); }

// An op that declines its arguments (too large to allocate here) throws this ag::Error.
[[noreturn]] void skip() { throw ag::ValueError("fuzz: arguments skipped (too large to allocate)"); }

enum class Check {
  exact,  // views, shaping, indexing, comparisons: the same values
  close,  // arithmetic: within the dtype's tolerance
  loose,  // transcendental functions of f32 values: a looser relative tolerance
};

using Fn = std::function<Tensor(const std::vector<Tensor>&, const Params&)>;

struct Op {
  const char* name;
  int arity;
  Check check;
  bool exact_on_integers;  // compare integer results too (small values: no rounding)
  Fn run;
  Fn reference = {};  // the float64 composite path; default: run on float64 copies
  Fn scale = {};      // for sums of many terms: the same reduction of |x| (error grows with it)
};

Tensor abs_sum(const std::vector<Tensor>& x, const Params& p) { return ag::abs(x[0]).sum({p.d0}, p.keep); }

const std::vector<Op>& ops() {
  using V = std::vector<Tensor>;
  static const std::vector<Op> table = {
      // elementwise, broadcasting
      {"add", 2, Check::close, true, [](const V& x, const Params&) { return x[0] + x[1]; }},
      {"sub", 2, Check::close, true, [](const V& x, const Params&) { return x[0] - x[1]; }},
      {"mul", 2, Check::close, true, [](const V& x, const Params&) { return x[0] * x[1]; }},
      {"div", 2, Check::close, false, [](const V& x, const Params&) { return x[0] / x[1]; }},
      {"maximum", 2, Check::exact, true, [](const V& x, const Params&) { return ag::maximum(x[0], x[1]); }},
      {"lt", 2, Check::exact, true, [](const V& x, const Params&) { return ag::lt(x[0], x[1]); }},
      {"where", 2, Check::exact, true,
       [](const V& x, const Params&) { return ag::where(ag::gt(x[0], 0.0), x[0], x[1]); }},
      {"pow", 1, Check::loose, false,
       [](const V& x, const Params& p) { return ag::pow(x[0], double(p.n % 4) * 0.5 + 0.5); }},
      {"neg", 1, Check::exact, true, [](const V& x, const Params&) { return -x[0]; }},
      {"abs", 1, Check::exact, true, [](const V& x, const Params&) { return ag::abs(x[0]); }},
      {"square", 1, Check::close, true, [](const V& x, const Params&) { return ag::square(x[0]); }},
      {"exp", 1, Check::loose, false, [](const V& x, const Params&) { return ag::exp(x[0]); }},
      {"log", 1, Check::loose, false, [](const V& x, const Params&) { return ag::log(x[0]); }},
      {"sqrt", 1, Check::loose, false, [](const V& x, const Params&) { return ag::sqrt(x[0]); }},
      {"tanh", 1, Check::loose, false, [](const V& x, const Params&) { return ag::tanh(x[0]); }},
      {"sigmoid", 1, Check::loose, false, [](const V& x, const Params&) { return ag::sigmoid(x[0]); }},
      {"relu", 1, Check::exact, true, [](const V& x, const Params&) { return ag::relu(x[0]); }},
      {"gelu", 1, Check::loose, false, [](const V& x, const Params&) { return ag::gelu(x[0]); }},
      {"clamp", 1, Check::exact, true,
       [](const V& x, const Params& p) { return ag::clamp(x[0], double(p.d0), double(p.d0 + p.n % 5)); }},
      {"masked_fill", 1, Check::exact, true,
       [](const V& x, const Params& p) { return ag::masked_fill(x[0], ag::lt(x[0], double(p.d0)), p.n % 7); }},
      // integer division (ZeroDivisionError, MIN / -1) and fills that may not fit the dtype
      {"floor_divide", 2, Check::exact, true,
       [](const V& x, const Params&) {
         // integers only: the float floor is discontinuous, an f64 0-d operand rounded to
         // f32 (a denormal to 0) moves it by a whole unit
         if (x[0].is_floating_point() || x[1].is_floating_point()) skip();
         return ag::floor_divide(x[0], x[1]);
       },
       [](const V& x, const Params&) { return ag::floor_divide(x[0], x[1]); }},
      {"masked_fill_edge", 1, Check::exact, false,  // integers truncate the value, float64 does not
       [](const V& x, const Params& p) {
         return p.keep ? ag::masked_fill(x[0], ag::gt(x[0], 0.0), p.v) : ag::masked_fill(x[0], ag::gt(x[0], 0.0), p.i0);
       }},
      // conversions: NaN / inf / out of range to integers (INT_MIN), integers to narrower
      // ones (wrapping; the float64 path cannot say, so integer results are not compared)
      {"to", 1, Check::exact, false, [](const V& x, const Params& p) { return x[0].to(kAllDTypes[p.n % 5]); }},
      {"item", 1, Check::exact, false,
       [](const V& x, const Params& p) {
         const Tensor e = x[0].reshape({-1}).narrow(0, 0, 1);
         return p.keep ? ag::full({}, e.item<int64_t>()) : ag::full({}, e.item<int32_t>(), DType::i32);
       }},
      // factories with edge arguments (their results do not depend on the tensors)
      {"full", 1, Check::exact, true,
       [](const V&, const Params& p) {
         const DType dt = kAllDTypes[p.n % 5];
         return p.keep ? ag::full({2}, p.v, dt) : ag::full({2}, p.i0, dt);
       }},
      {"arange", 1, Check::exact, false,
       [](const V&, const Params& p) {
         if (too_big_to_try(arange_count(p.i0, p.i1, p.i2))) skip();
         return ag::arange(p.i0, p.i1, p.i2);
       }},
      {"arange_f", 1, Check::close, false,
       [](const V&, const Params& p) {
         const double a = double(p.d0), b = p.keep ? p.v : double(p.d1), st = double(p.n % 5) - 2.0;
         const double c = std::ceil((b - a) / st);
         if (c > 4096 && c < 1.2e18) skip();
         return ag::arange(a, b, st, p.n % 2 ? DType::f64 : DType::i64);
       }},
      {"randint", 1, Check::exact, false,
       [](const V&, const Params& p) {
         ag::Generator g(uint64_t(p.n));
         const int64_t lo = std::min(p.i0, p.i1), hi = std::max(p.i0, p.i1);
         Tensor r = ag::randint(lo, hi, {3}, &g, p.keep ? DType::i32 : DType::i64);
         for (int64_t v : r.to_vector<int64_t>())
           if (v < lo || v >= hi) fuzz::fail(ag::detail::cat("randint(", lo, ", ", hi, ") gave ", v));
         return r;
       }},
      {"uniform", 1, Check::exact, true,
       [](const V&, const Params& p) {
         ag::Generator g(uint64_t(p.n));
         Tensor r = ag::uniform({3}, double(p.d0), p.keep ? p.v : double(p.d1), DType::f64, &g);
         for (double v : r.to_vector<double>())
           if (!(v >= double(p.d0) && v <= (p.keep ? p.v : double(p.d1))))
             fuzz::fail(ag::detail::cat("uniform(", p.d0, ", ", p.keep ? p.v : double(p.d1), ") gave ", v));
         return ag::zeros({3});  // checked here: random values have no float64 path
       }},
      // reductions along a dim from the input (possibly out of range)
      {"sum", 1, Check::close, true, [](const V& x, const Params& p) { return x[0].sum({p.d0}, p.keep); },
       {}, abs_sum},
      {"sum_all", 1, Check::close, true, [](const V& x, const Params&) { return x[0].sum(); }, {},
       [](const V& x, const Params&) { return ag::abs(x[0]).sum(); }},
      {"mean", 1, Check::close, false, [](const V& x, const Params& p) { return x[0].mean({p.d0}, p.keep); },
       [](const V& x, const Params& p) {
         return x[0].sum({p.d0}, p.keep) / double(x[0].dim() == 0 ? 1 : x[0].size(p.d0));
       },
       [](const V& x, const Params& p) { return ag::abs(x[0]).mean({p.d0}, p.keep); }},
      {"var", 1, Check::close, false, [](const V& x, const Params& p) { return ag::var(x[0], {p.d0}, p.n % 2, p.keep); },
       [](const V& x, const Params& p) {
         const Tensor c = x[0] - x[0].mean({p.d0}, true);
         // n - correction below 0 (an empty dim) is 0: a NaN result, as PyTorch.
         const int64_t n = (x[0].dim() == 0 ? 1 : x[0].size(p.d0)) - p.n % 2;
         return ag::square(c).sum({p.d0}, p.keep) / double(std::max<int64_t>(n, 0));
       },
       [](const V& x, const Params& p) { return ag::square(x[0]).sum({p.d0}, p.keep); }},
      {"amax", 1, Check::exact, true, [](const V& x, const Params& p) { return ag::amax(x[0], {p.d0}, p.keep); }},
      {"argmax", 1, Check::exact, true, [](const V& x, const Params& p) { return ag::argmax(x[0], p.d0, p.keep); }},
      {"logsumexp", 1, Check::loose, false,
       [](const V& x, const Params& p) { return ag::logsumexp(x[0], {p.d0}, p.keep); }},
      {"cumsum", 1, Check::close, true, [](const V& x, const Params& p) { return ag::cumsum(x[0], p.d0); }, {},
       [](const V& x, const Params& p) { return ag::cumsum(ag::abs(x[0]), p.d0); }},
      // Of values clamped to [-1, 1]: a product of up to 256 integers cannot overflow.
      {"prod", 1, Check::loose, true,
       [](const V& x, const Params& p) { return ag::prod(ag::clamp(x[0], -1.0, 1.0), p.d0, p.keep); }},
      // softmax and matmul against their composite definitions
      {"softmax", 1, Check::loose, false, [](const V& x, const Params& p) { return ag::softmax(x[0], p.d0); },
       [](const V& x, const Params& p) {
         if (x[0].numel() == 0) return ag::softmax(x[0], p.d0);  // amax refuses an empty dim
         const Tensor e = ag::exp(x[0] - ag::amax(x[0], {p.d0}, true));
         return e / e.sum({p.d0}, true);
       }},
      {"log_softmax", 1, Check::loose, false,
       [](const V& x, const Params& p) { return ag::log_softmax(x[0], p.d0); },
       // log of the composite softmax (x - logsumexp(x) would lose log(n) next to a large
       // x); where exp underflows the reference is -inf and not compared.
       [](const V& x, const Params& p) {
         if (x[0].numel() == 0) return ag::log_softmax(x[0], p.d0);  // amax refuses an empty dim
         const Tensor e = ag::exp(x[0] - ag::amax(x[0], {p.d0}, true));
         return ag::log(e / e.sum({p.d0}, true));
       }},
      {"matmul", 2, Check::close, true, [](const V& x, const Params&) { return ag::matmul(x[0], x[1]); },
       [](const V& x, const Params&) {
         if (x[0].dim() != 2 || x[1].dim() != 2) return ag::matmul(x[0], x[1]);
         AG_CHECK(x[0].size(1) == x[1].size(0), ShapeError, "reference matmul: inner sizes differ");
         return (x[0].unsqueeze(2) * x[1].unsqueeze(0)).sum({1});  // (n, k, 1) * (1, k, m) summed over k
       },
       [](const V& x, const Params&) { return ag::matmul(ag::abs(x[0]), ag::abs(x[1])); }},
      // views and shaping
      {"transpose", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].transpose(p.d0, p.d1); }},
      {"permute", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].permute(p.list); }},
      {"slice", 1, Check::exact, true,
       [](const V& x, const Params& p) { return x[0].slice(p.d0, p.d1, p.d1 + p.n % 5, 1 + p.n % 3); }},
      {"select", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].select(p.d0, p.d1); }},
      {"narrow", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].narrow(p.d0, p.d1, p.n % 4); }},
      {"narrow_edge", 1, Check::exact, true,
       [](const V& x, const Params& p) { return x[0].narrow(p.d0, p.keep ? p.i0 : p.d1, p.i1); }},
      {"pad", 1, Check::exact, true,
       [](const V& x, const Params& p) {
         // (l, r) on the last dim, or (l, r, 0, 0), a whole fill value (integers truncate
         // it, the float64 path would not). An output of more than 4096 elements
         // whose bytes still count in int64 would be allocated: skipped. Sizes or bytes
         // past int64 must raise before any allocation.
         const Shape& s = x[0].shape();
         int64_t out = 0, total = 1, bytes = 0;
         bool overflows = s.empty() || __builtin_add_overflow(s[s.size() - 1], p.i0, &out) ||
                          __builtin_add_overflow(out, p.i1, &out);
         for (int64_t d = 0; d + 1 < s.size() && !overflows; ++d) overflows = __builtin_mul_overflow(total, s[d], &total);
         overflows = overflows || __builtin_mul_overflow(total, out, &total) || __builtin_mul_overflow(total, int64_t{8}, &bytes);
         if (!overflows && total > 4096) skip();
         const auto mode = p.n % 3 == 0 ? ag::PadMode::constant : p.n % 3 == 1 ? ag::PadMode::replicate : ag::PadMode::reflect;
         std::vector<int64_t> pads{p.i0, p.i1};
         if (p.keep) pads.insert(pads.end(), {0, 0});
         return ag::pad(x[0], pads, mode, mode == ag::PadMode::constant && p.n % 2 ? std::trunc(p.v) : 0.0);
       }},
      {"reshape", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].reshape(Shape(p.list)); }},
      {"view", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].view(Shape(p.list)); }},
      {"unsqueeze", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].unsqueeze(p.d0); }},
      {"squeeze", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].squeeze(p.d0); }},
      {"expand", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].expand(Shape(p.list)); }},
      {"flatten", 1, Check::exact, true, [](const V& x, const Params& p) { return x[0].flatten(p.d0, p.d1); }},
      {"flip", 1, Check::exact, true, [](const V& x, const Params& p) { return ag::flip(x[0], {p.d0}); }},
      {"cat", 2, Check::exact, true, [](const V& x, const Params& p) { return ag::cat({x[0], x[1]}, p.d0); }},
      {"stack", 2, Check::exact, true, [](const V& x, const Params& p) { return ag::stack({x[0], x[1]}, p.d0); }},
      {"tril", 1, Check::exact, true, [](const V& x, const Params& p) { return ag::tril(x[0], p.d1); }},
      // indexing with indices from the input (possibly out of range)
      {"index_select", 1, Check::exact, true,
       [](const V& x, const Params& p) { return ag::index_select(x[0], p.d0, Tensor::from_vector(p.list)); }},
      {"gather", 1, Check::exact, true,
       [](const V& x, const Params& p) {
         // index: x's shape with dim 0 as long as the list, the list's values repeated.
         Shape s = x[0].shape();
         if (!s.empty()) s[0] = int64_t(p.list.size());
         std::vector<int64_t> idx(size_t(ag::numel(s)), 0);
         for (size_t i = 0; i < idx.size() && !p.list.empty(); ++i) idx[i] = p.list[i % p.list.size()];
         return ag::gather(x[0], p.d0, Tensor::from_vector(idx, s));
       }},
  };
  return table;
}

Params decode_params(fuzz::Bytes& in) {
  Params p;
  p.d0 = in.range(-4, 3);
  p.d1 = in.range(-4, 3);
  p.n = in.u8();
  p.keep = in.flag();
  const int64_t len = in.range(0, 4);
  for (int64_t i = 0; i < len; ++i) {
    const uint8_t b = in.u8();
    p.list.push_back(b >= 240 ? kEdges[b - 240] : int64_t(b % 8) - 2);
  }
  p.i0 = decode_int(in.u8());
  p.i1 = decode_int(in.u8());
  p.i2 = decode_int(in.u8());
  p.v = decode_value(in.u8());
  return p;
}

// ---- comparison ---------------------------------------------------------------------

Tensor f64(const Tensor& t) { return t.to(DType::f64).contiguous(); }

void compare(const Op& op, const std::vector<Tensor>& args, const Params& p, const Tensor& got, const Tensor& want,
             const Tensor& scale) {
  // The op, its arguments' dtypes, shapes, layouts and values, and its parameters.
  auto where = [&] {
    std::string s = std::string(op.name) + " on";
    for (const Tensor& a : args) {
      s += ag::detail::cat(" ", a.dtype(), a.shape(), a.is_contiguous() ? "" : "(strided)", " {");
      for (double v : a.to_vector<double>()) s += ag::detail::cat(" ", v);
      s += " }";
    }
    s += ag::detail::cat(" with d0 ", p.d0, ", d1 ", p.d1, ", n ", p.n, ", keep ", p.keep, ", list [");
    for (int64_t v : p.list) s += ag::detail::cat(" ", v);
    return s + " ]";
  };
  if (!(got.shape() == want.shape()))
    fuzz::fail(where() + ": shape " + ag::detail::cat(got.shape()) + ", the float64 path gives " +
               ag::detail::cat(want.shape()));
  const bool floating = got.is_floating_point();
  if (!floating && !op.exact_on_integers) return;
  // The float64 path is exact for integer arguments only below 2^53: past that the op
  // wraps (integer results) or rounds once where the path rounds twice (float results).
  // The op computes in the promoted dtype: with an i32 operand it may wrap a 0-d i64
  // operand past int32 into i32 (the dimensioned tensor's dtype wins); with f32 (operand
  // or result) integers are exact only up to 2^24.
  bool any_i32 = got.dtype() == DType::i32, any_f32 = got.dtype() == DType::f32;
  for (const Tensor& a : args) {
    any_i32 = any_i32 || a.dtype() == DType::i32;
    any_f32 = any_f32 || a.dtype() == DType::f32;
  }
  const int64_t lim = any_f32 ? int64_t(1) << 24 : any_i32 ? INT32_MAX : int64_t(1) << 53;
  for (const Tensor& a : args)
    if (ag::is_integral(a.dtype()))
      for (int64_t v : a.to_vector<int64_t>())
        if (v > lim || v < -lim - 1) return;
  const std::vector<double> g = got.to_vector<double>();
  std::vector<double> w = want.to_vector<double>();
  // A bool result of arithmetic is "nonzero" (PyTorch: True + True is True).
  if (got.dtype() == DType::b8)
    for (double& v : w) v = v != 0;
  const std::vector<double> s =
      scale.defined() ? ag::expand(scale, want.shape()).to_vector<double>() : std::vector<double>(w.size(), 0.0);
  const bool f32 = got.dtype() == DType::f32;
  // The reference rounded to the result's dtype: an exact op (where, copies) with an f64
  // 0-d operand and an f32 result (PyTorch's promotion) gives the f32 nearest the f64 value.
  if (f32)
    for (double& v : w) v = static_cast<double>(static_cast<float>(v));
  double rtol = 0;
  if (floating && op.check != Check::exact) rtol = f32 ? (op.check == Check::loose ? 1e-4 : 2e-6) : 1e-12;
  for (size_t i = 0; i < w.size(); ++i) {
    // Where the reference is NaN or infinite, or (for f32) beyond its range, anything goes;
    // so for integers past 2^53 (the float64 path rounds; the op may wrap).
    if (!std::isfinite(w[i]) || (f32 && std::abs(w[i]) > 1e30)) continue;
    if (!floating && std::abs(w[i]) > 9007199254740992.0) continue;
    // An integer sum whose terms reach 2^53 in magnitude (the scale: the same reduction of
    // |x|): the float64 path rounds its partial sums there, the integer op does not.
    if (!floating && s[i] >= 9007199254740992.0) continue;
    if (got.dtype() == DType::i32 && (w[i] < INT32_MIN || w[i] > INT32_MAX)) continue;  // wrapped
    // Plus the smallest normal number of the dtype: below it (subnormals, flushed to 0)
    // relative precision is lost.
    const double tiny = rtol == 0 ? 0 : f32 ? 2e-38 : 3e-308;
    const double tol = rtol * (std::abs(w[i]) + 16 * s[i] + (op.check == Check::loose ? 1 : 0)) + tiny;
    if (!std::isfinite(g[i]) || std::abs(g[i] - w[i]) > tol)
      fuzz::fail(where() + ": element " + std::to_string(i) + " is " + ag::detail::cat(g[i]) +
                 ", the float64 path gives " + ag::detail::cat(w[i]) + " (tolerance " + ag::detail::cat(tol) + ")");
  }
}

// A shape whose dims (0 counted as 1) multiply past 4096: an expand to an edge size,
// possibly with 0 elements, whose contiguous copy may not even have int64 strides.
bool huge(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape())
    if (__builtin_mul_overflow(n, std::max<int64_t>(d, 1), &n) || n > 4096) return true;
  return false;
}

// Small results join the registers, integer extremes included: integer arithmetic wraps
// (in unsigned, as PyTorch's), so later ops on them must not be undefined behaviour.
bool tame(const Tensor& t) { return t.numel() <= 256 && !huge(t); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  std::vector<Tensor> regs;
  regs.push_back(make_input(in, nullptr));
  for (int i = 0, n = int(in.range(1, 2)); i < n; ++i) regs.push_back(make_input(in, &regs.front().shape()));

  const std::vector<Op>& table = ops();
  for (int step = 0; step < kMaxOps && !in.empty(); ++step) {
    const Op& op = table[in.u8() % table.size()];
    std::vector<Tensor> args;
    for (int a = 0; a < op.arity; ++a) args.push_back(regs[in.u8() % regs.size()]);
    const Params p = decode_params(in);

    Tensor got;
    if (!fuzz::accepts(op.name, [&] { got = op.run(args, p); })) continue;
    // A 0-d f64 operand of an op with a dimensioned f32 one is computed in f32 (PyTorch's
    // promotion): 1e300 is inf there, so the float64 path takes it rounded to f32 too.
    // Not for where, whose condition gt(x[0], 0) sees x[0] unrounded.
    bool dim_f32 = false;
    if (std::string(op.name) != "where")
      for (const Tensor& a : args) dim_f32 = dim_f32 || (a.dtype() == DType::f32 && a.dim() > 0);
    std::vector<Tensor> args64;
    for (const Tensor& a : args)
      args64.push_back(f64(dim_f32 && a.dtype() == DType::f64 && a.dim() == 0 ? a.to(DType::f32) : a));
    Tensor want, scale;
    // The float64 path must accept what the op accepted (the composite may need a dim the
    // op checked); an ag::Error here is a difference between the two.
    const Fn& ref = op.reference ? op.reference : op.run;
    try {
      want = ref(args64, p);
      if (op.scale) scale = f64(op.scale(args64, p));
    } catch (const ag::Error& e) {
      fuzz::fail(std::string(op.name) + " accepted its arguments but the float64 path threw: " + e.what());
    }
    // A huge view (expand to an edge size) is checked by its shape only.
    if (huge(got)) {
      if (!(got.shape() == want.shape())) fuzz::fail(std::string(op.name) + ": shapes differ from the float64 path");
      continue;
    }
    compare(op, args, p, got, f64(want), scale);
    if (tame(got)) {
      if (int(regs.size()) < kMaxRegs)
        regs.push_back(got);
      else
        regs[in.u8() % regs.size()] = got;
    }
  }
  return 0;
}
