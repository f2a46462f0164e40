// Every unary function (PW::map's vector and scalar forms, kernels/pointwise.h) and binary
// kernel (kernels/kernels.h), through the public ops, against a scalar std:: reference
// on special values: +-0, +-inf, NaN, denormals, extremes, ties.
// Each row length runs from 1 to 2W + 1 (W: the widest xsimd batch, f32 and f64), and
// each special value sits at every position of a row, so the vector body and the scalar
// tail both see it. Layouts: contiguous rows, strided rows (scalar path), a 0-d operand
// on either side, a broadcast row and a broadcast column.
//
// Results must match bit for bit (any NaN matches any NaN), except for the transcendental
// functions that run through xsimd's vector forms (exp, log, tanh, sigmoid, erf, sin, cos),
// which may be a few ulp from std:: (bounds in the table; +0 and -0 count as equal there).
//
// Adding an op is one line in a table. Rows of length n are m independent rows (m =
// number of special values) of a (m, n + 1) buffer: row r holds specials rotated by r.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <xsimd/xsimd.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

constexpr int64_t kMaxW = std::max(xsimd::batch<float>::size, xsimd::batch<double>::size);

template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  return {T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), -L::denorm_min(),
          L::min() / T(3), L::min(), -L::min(), L::max(), L::lowest(), T(1), T(-1), T(0.5), T(-0.5), T(2), T(-2.5),
          T(3), T(0.3), T(20), T(100), T(-100), T(1e-30), T(1e30), T(-7.25),
          // where xsimd was wrong: exp near underflow (denormal results), erf (f64)
          T(-88.376), T(-709.4), T(0.055), T(-2.2), T(1e5)};
}

template <class T>
Tensor make(const std::vector<T>& v, const Shape& s) {
  return Tensor::from_vector(v, s);
}

// Ordered integer key: adjacent floats differ by 1; +0 and -0 both map to 0.
template <class T>
int64_t ordered(T x) {
  using U = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  U b = std::bit_cast<U>(x);
  return b < 0 ? -int64_t(b & std::numeric_limits<U>::max()) : int64_t(b);
}

// "" when got matches want: bit for bit (ulp < 0), or within ulp units in the last place.
template <class T>
bool matches(T got, T want, int ulp) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (ulp < 0)
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(got) ==
           std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(want);
  int64_t d = ordered(got) - ordered(want);
  return (d < 0 ? -d : d) <= ulp;
}

constexpr int kExact = -1;

// ---- tables ------------------------------------------------------------------------
using TensorFn1 = std::function<Tensor(const Tensor&)>;
using TensorFn2 = std::function<Tensor(const Tensor&, const Tensor&)>;

struct UnaryCase {
  std::string name;
  TensorFn1 op;
  std::function<float(float)> ref32;
  std::function<double(double)> ref64;
  int ulp;
  template <class Ref>
  UnaryCase(std::string n, TensorFn1 o, Ref r, int u = kExact)
      : name(std::move(n)),
        op(std::move(o)),
        ref32([r](float v) { return float(r(v)); }),
        ref64([r](double v) { return double(r(v)); }),
        ulp(u) {}
};

struct BinaryCase {
  std::string name;
  TensorFn2 op;
  std::function<float(float, float)> ref32;
  std::function<double(double, double)> ref64;
  int ulp;
  template <class Ref>
  BinaryCase(std::string n, TensorFn2 o, Ref r, int u = kExact)
      : name(std::move(n)),
        op(std::move(o)),
        ref32([r](float x, float y) { return float(r(x, y)); }),
        ref64([r](double x, double y) { return double(r(x, y)); }),
        ulp(u) {}
};

// Gradient of sum(f(x)) w.r.t. x: exercises the mask kernels (step, in_range, ge_mask).
TensorFn1 grad_of(TensorFn1 f) {
  return [f](const Tensor& x) {
    Tensor p = x.detach().requires_grad_();
    f(p).sum().backward();
    return p.grad();
  };
}

template <class T>
// torch 1.13: 0.5 and -0.5 take sqrt and rsqrt; other exponents std::pow in double (an
// f32 tensor's pow(1e30, 0.3) is 1e9 in torch, powf(1e30f, 0.3f) is 1000000832).
T pow_ref(T v, double e) {
  if (e == 0.5) return std::sqrt(v);
  if (e == -0.5) return T(1) / std::sqrt(v);
  return static_cast<T>(std::pow(static_cast<double>(v), e));
}

// Transcendental bounds: the max ulp distance of the xsimd vector forms from std:: (glibc)
// measured over these values and 2e6 random ones (|x| in [1e-300, 1e300]), SSE2 build.
// f64 erf is std::erf (exact); the bound only matters for f32.
constexpr int kUlpExp = 1, kUlpLog = 1, kUlpTanh = 2, kUlpSigmoid = 4, kUlpErf = 3,
              kUlpTrig = 2;  // sigmoid: exp's ulp, amplified

std::vector<UnaryCase> unary_cases() {
  using ag::Tensor;
  std::vector<UnaryCase> c = {
      {"neg", [](const Tensor& x) { return ag::neg(x); }, [](auto v) { return -v; }},
      {"exp", [](const Tensor& x) { return ag::exp(x); }, [](auto v) { return std::exp(v); }, kUlpExp},
      {"log", [](const Tensor& x) { return ag::log(x); }, [](auto v) { return std::log(v); }, kUlpLog},
      {"sqrt", [](const Tensor& x) { return ag::sqrt(x); }, [](auto v) { return std::sqrt(v); }},
      {"rsqrt", [](const Tensor& x) { return ag::rsqrt(x); }, [](auto v) { return decltype(v)(1) / std::sqrt(v); }},
      {"abs", [](const Tensor& x) { return ag::abs(x); }, [](auto v) { return std::abs(v); }},
      // PyTorch: (x > 0) - (x < 0): sign(-0) = +0, sign(NaN) = 0
      {"sign", [](const Tensor& x) { return ag::sign(x); }, [](auto v) { return decltype(v)((v > 0) - (v < 0)); }},
      {"tanh", [](const Tensor& x) { return ag::tanh(x); }, [](auto v) { return std::tanh(v); }, kUlpTanh},
      {"sigmoid", [](const Tensor& x) { return ag::sigmoid(x); },
       [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); }, kUlpSigmoid},
      // PyTorch: x < 0 ? 0 : x: relu(NaN) = NaN, relu(-0) = -0
      {"relu", [](const Tensor& x) { return ag::relu(x); }, [](auto v) { return v < 0 ? decltype(v)(0) : v; }},
      {"relu grad (step)", grad_of([](const Tensor& x) { return ag::relu(x); }),
       [](auto v) { return decltype(v)(v > 0 ? 1 : 0); }},
      {"erf", [](const Tensor& x) { return ag::erf(x); }, [](auto v) { return std::erf(v); }, kUlpErf},
      {"sin", [](const Tensor& x) { return ag::sin(x); }, [](auto v) { return std::sin(v); }, kUlpTrig},
      {"cos", [](const Tensor& x) { return ag::cos(x); }, [](auto v) { return std::cos(v); }, kUlpTrig},
      {"square", [](const Tensor& x) { return ag::square(x); }, [](auto v) { return v * v; }},
      // clamp: NaN stays NaN; bounds only replace values strictly outside them
      {"clamp(-1, 1)", [](const Tensor& x) { return ag::clamp(x, -1.0, 1.0); },
       [](auto v) {
         using T = decltype(v);
         return v < T(-1) ? T(-1) : v > T(1) ? T(1) : v;
       }},
      {"clamp(0.5, -)", [](const Tensor& x) { return ag::clamp(x, 0.5, std::optional<double>{}); },
       [](auto v) {
         using T = decltype(v);
         return v < T(0.5) ? T(0.5) : v;
       }},
      {"clamp(-, -0.5)", [](const Tensor& x) { return ag::clamp(x, std::optional<double>{}, -0.5); },
       [](auto v) {
         using T = decltype(v);
         return v > T(-0.5) ? T(-0.5) : v;
       }},
      {"clamp grad (in_range)", grad_of([](const Tensor& x) { return ag::clamp(x, -1.0, 1.0); }),
       [](auto v) { return decltype(v)(v >= -1 && v <= 1 ? 1 : 0); }},
      // bool results, shown as 0/1 in the input's dtype
      {"logical_not", [](const Tensor& x) { return ag::logical_not(x).to(x.dtype()); },
       [](auto v) { return decltype(v)(v == 0); }},
      {"isfinite", [](const Tensor& x) { return ag::isfinite(x).to(x.dtype()); },
       [](auto v) { return decltype(v)(std::isfinite(v)); }},
  };
  for (double e : {-2.0, -1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 1.0, 2.0, 3.0})
    c.push_back({"pow(x, " + std::to_string(e) + ")", [e](const Tensor& x) { return ag::pow(x, e); },
                 [e](auto v) { return pow_ref(v, e); }});
  return c;
}

// maximum / minimum: NaN propagates (torch.maximum); on ties (+0 vs -0 included) the
// first operand wins (PyTorch's own answer for +-0 differs between its SIMD body and tail).
std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, [](auto x, auto y) { return x + y; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, [](auto x, auto y) { return x - y; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, [](auto x, auto y) { return x * y; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, [](auto x, auto y) { return x / y; }},
      {"pow", [](const Tensor& a, const Tensor& b) { return ag::pow(a, b); },
       [](auto x, auto y) { return std::pow(x, y); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return ag::maximum(a, b); },
       [](auto x, auto y) { return std::isnan(x) || std::isnan(y) ? x + y
                                   : x >= y                       ? x
                                                                  : y; }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return ag::minimum(a, b); },
       [](auto x, auto y) { return std::isnan(x) || std::isnan(y) ? x + y
                                   : x <= y                       ? x
                                                                  : y; }},
      // gradient masks (the eq/lt/gt compare kernels): PyTorch splits g on ties
      {"maximum grad a",
       [](const Tensor& a, const Tensor& b) {  // a expanded (stride 0 for a 0-d a): da per element
         Tensor pa = a.expand(ag::broadcast_shapes(a.shape(), b.shape(), "test")).detach().requires_grad_();
         Tensor y = ag::maximum(pa, b);
         y.backward(ag::ones_like(y));
         return pa.grad();
       },
       [](auto x, auto y) {
         using T = decltype(x);
         return x == y ? T(0.5) : x < y ? T(0) : T(1);
       }},
      {"where(a > b, a, b)", [](const Tensor& a, const Tensor& b) { return ag::where(ag::gt(a, b), a, b); },
       [](auto x, auto y) { return x > y ? x : y; }},
      // comparisons: bool results, shown as 0/1 in the operands' dtype
      {"eq", [](const Tensor& a, const Tensor& b) { return ag::eq(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x == y); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ag::ne(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x != y); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return ag::lt(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x < y); }},
      {"le", [](const Tensor& a, const Tensor& b) { return ag::le(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x <= y); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return ag::gt(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x > y); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ag::ge(a, b).to(a.dtype()); },
       [](auto x, auto y) { return decltype(x)(x >= y); }},
  };
}

// ---- runners ----------------------------------------------------------------------
// Rows of length n: (m, n) view of an (m, n + pad) buffer, row r = specials rotated by r + shift.
// step 2 makes the rows strided (the scalar path).
template <class T>
Tensor rows(const std::vector<T>& s, int64_t n, int64_t shift, int64_t step) {
  const int64_t m = s.size(), w = n * step + 1;
  std::vector<T> buf(m * w, T(0));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < n; ++i) buf[r * w + i * step] = s[(i + r + shift) % m];
  return make(buf, {m, w}).slice(1, 0, n * step, step);
}

template <class T>
std::string describe(const std::string& name, const char* layout, int64_t n, std::size_t at, T x, T y, T got, T want,
                     bool binary) {
  std::ostringstream os;
  os.precision(std::numeric_limits<T>::max_digits10);
  os << name << " [" << (sizeof(T) == 4 ? "f32" : "f64") << ", " << layout << ", row length " << n << ", flat element "
     << at << "]: " << name << "(" << x;
  if (binary) os << ", " << y;
  os << ") = " << got << ", want " << want;
  return os.str();
}

template <class T>
std::string check_unary(const UnaryCase& c) {
  auto ref = [&c](T v) -> T {
    if constexpr (sizeof(T) == 4)
      return c.ref32(v);
    else
      return c.ref64(v);
  };
  const std::vector<T> s = specials<T>();
  const int64_t W = xsimd::batch<T>::size;
  for (int64_t n = 1; n <= 2 * W + 1; ++n)
    for (int64_t step : {1, 2}) {
      const char* layout = step == 1 ? "contiguous rows" : "strided rows";
      Tensor x = rows(s, n, 0, step);
      std::vector<T> xv = x.template to_vector<T>(), got = c.op(x).template to_vector<T>();
      for (std::size_t i = 0; i < xv.size(); ++i)
        if (!matches(got[i], ref(xv[i]), c.ulp))
          return describe(c.name, layout, n, i, xv[i], T(0), got[i], ref(xv[i]), false);
    }
  return "";
}

template <class T>
std::string check_binary(const BinaryCase& c) {
  auto ref = [&c](T x, T y) -> T {
    if constexpr (sizeof(T) == 4)
      return c.ref32(x, y);
    else
      return c.ref64(x, y);
  };
  const std::vector<T> s = specials<T>();
  const int64_t m = s.size(), W = xsimd::batch<T>::size;
  for (int64_t n = 1; n <= 2 * W + 1; ++n)
    for (int64_t d = 0; d < m; ++d) {  // d: offset of b's rotation from a's, so every pair meets
      const Tensor a = rows(s, n, 0, 1);
      std::vector<T> col(m);
      for (int64_t r = 0; r < m; ++r) col[r] = s[(r + d) % m];
      const std::pair<const char*, std::pair<Tensor, Tensor>> layouts[] = {
          {"contiguous rows", {a, rows(s, n, d, 1)}},
          {"strided rows", {rows(s, n, 0, 2), rows(s, n, d, 2)}},
          {"0-d b", {a, make(std::vector<T>{s[d]}, Shape{})}},
          {"0-d a", {make(std::vector<T>{s[d]}, Shape{}), a}},
          {"row broadcast b (n)", {a, rows(s, n, d, 1).select(0, 0)}},
          {"column broadcast b (m, 1)", {a, make(col, {m, 1})}},
      };
      for (const auto& [layout, ab] : layouts) {
        const auto& [ta, tb] = ab;
        Tensor out = c.op(ta, tb);
        std::vector<T> av = ta.expand(out.shape()).template to_vector<T>();
        std::vector<T> bv = tb.expand(out.shape()).template to_vector<T>();
        std::vector<T> got = out.template to_vector<T>();
        for (std::size_t i = 0; i < got.size(); ++i)
          if (!matches(got[i], ref(av[i], bv[i]), c.ulp))
            return describe(c.name, layout, n, i, av[i], bv[i], got[i], ref(av[i], bv[i]), true);
      }
    }
  return "";
}

}  // namespace

TEST_CASE("kernel special values: widest SIMD batch in use") {
  MESSAGE("xsimd batch sizes: f32 ", xsimd::batch<float>::size, ", f64 ", xsimd::batch<double>::size,
          " (row lengths 1 to ", 2 * kMaxW + 1, ")");
  CHECK(kMaxW >= 1);
}

TEST_CASE("kernel special values: unary ops") {
  for (const UnaryCase& c : unary_cases()) {
    CAPTURE(c.name);
    CHECK(check_unary<float>(c) == "");
    CHECK(check_unary<double>(c) == "");
  }
}

// The ulp bounds over ordinary values: log-uniform |x| in [1e-6, 1e4], both signs.
TEST_CASE("kernel ulp bounds on random values") {
  std::vector<double> v;
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = double(state >> 11) / double(uint64_t{1} << 53);
    v.push_back((i % 2 ? 1 : -1) * std::exp(std::log(1e-6) + u * (std::log(1e4) - std::log(1e-6))));
  }
  for (const UnaryCase& c : unary_cases()) {
    if (c.ulp == kExact) continue;
    CAPTURE(c.name);
    for (DType dt : {DType::f32, DType::f64}) {
      Tensor x = Tensor::from_vector(v).to(dt);
      std::vector<double> got = c.op(x).to_vector<double>(), xs = x.to_vector<double>();
      std::string bad;
      for (std::size_t i = 0; i < xs.size() && bad.empty(); ++i) {
        bool ok = dt == DType::f32 ? matches(float(got[i]), c.ref32(float(xs[i])), c.ulp)
                                   : matches(got[i], c.ref64(xs[i]), c.ulp);
        if (!ok) bad = c.name + "(" + std::to_string(xs[i]) + ") is more than " + std::to_string(c.ulp) + " ulp off";
      }
      CHECK(bad == "");
    }
  }
}

TEST_CASE("kernel special values: binary ops") {
  for (const BinaryCase& c : binary_cases()) {
    CAPTURE(c.name);
    CHECK(check_binary<float>(c) == "");
    CHECK(check_binary<double>(c) == "");
  }
}

namespace {

// The integer edges for binary kernels: every pair of them, as a (m, m) grid of a
// contiguous row operand against a column (broadcast), against its transpose (strided)
// and against a 0-d operand.
template <class T>
std::vector<T> int_specials() {
  using L = std::numeric_limits<T>;
  return {L::min(), T(L::min() + 1), L::max(), T(L::max() - 1), T(0), T(1), T(-1), T(2), T(-2), T(3), T(-7)};
}

// a op b wrapping modulo 2^N (the reference: uint64 arithmetic, then truncated).
template <class T>
T wrap_ref(char op, T a, T b) {
  const uint64_t x = static_cast<uint64_t>(static_cast<int64_t>(a)), y = static_cast<uint64_t>(static_cast<int64_t>(b));
  const uint64_t r = op == '+' ? x + y : op == '-' ? x - y : x * y;
  return static_cast<T>(r);  // modulo 2^N (C++20)
}

// floor(a / b) with MIN / -1 = MIN (wrapped), b != 0.
template <class T>
T floor_div_ref(T a, T b) {
  if (b == -1) return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(static_cast<int64_t>(a)));
  const T q = static_cast<T>(a / b);
  return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
}

template <class T>
std::string check_int_binary() {
  const std::vector<T> v = int_specials<T>();
  const auto m = static_cast<int64_t>(v.size());
  Tensor row = Tensor::from_vector(v, Shape{1, m}), col = Tensor::from_vector(v, Shape{m, 1});
  Tensor grid_a = ag::contiguous(row.expand({m, m})), grid_b = ag::contiguous(col.expand({m, m}));
  std::vector<T> nonzero;
  for (T x : v)
    if (x != 0) nonzero.push_back(x);
  for (char op : std::string("+-*/")) {
    // (a broadcast row, a column), (a strided transpose, the grid), (the grid, a 0-d operand)
    for (int layout = 0; layout < 3; ++layout) {
      for (std::size_t k = 0; k < (layout == 2 ? v.size() : 1); ++k) {
        Tensor a = layout == 0 ? row : layout == 1 ? grid_b.transpose(0, 1) : grid_a;
        Tensor b = layout == 0 ? col : layout == 1 ? grid_b : ag::full({}, int64_t{v[k]}, ag::dtype_v<T>);
        if (op == '/' && layout != 2) b = ag::where(ag::eq(b, 0.0), ag::ones_like(b), b);
        if (op == '/' && layout == 2 && v[k] == 0) continue;
        Tensor out = op == '+'   ? ag::add(a, b)
                     : op == '-' ? ag::sub(a, b)
                     : op == '*' ? ag::mul(a, b)
                                 : ag::floor_divide(a, b);
        Tensor ab = ag::contiguous(a.expand(out.shape())), bb = ag::contiguous(b.expand(out.shape()));
        const std::vector<T> got = out.template to_vector<T>(), xa = ab.template to_vector<T>(),
                             xb = bb.template to_vector<T>();
        for (std::size_t i = 0; i < got.size(); ++i) {
          const T want = op == '/' ? floor_div_ref(xa[i], xb[i]) : wrap_ref(op, xa[i], xb[i]);
          if (got[i] != want) {
            std::ostringstream os;
            os << ag::dtype_v<T> << " " << xa[i] << " " << op << " " << xb[i] << " (layout " << layout << "): got "
               << got[i] << ", want " << want;
            return os.str();
          }
        }
      }
    }
  }
  return "";
}

}  // namespace

TEST_CASE("kernel special values: integer add, sub, mul and floor_divide wrap on every layout, MIN / -1 = MIN") {
  CHECK(check_int_binary<int32_t>() == "");
  CHECK(check_int_binary<int64_t>() == "");
  // Integer sums over a row, leading dims and a scan wrap in int64 the same way.
  const int64_t mx = std::numeric_limits<int64_t>::max(), mn = std::numeric_limits<int64_t>::min();
  Tensor x = Tensor::from_vector(std::vector<int64_t>{mx, mx, 1, mn, 3, -1}, Shape{3, 2});
  CHECK(ag::sum(x, {0}).to_vector<int64_t>() == std::vector<int64_t>{mn + 3, -2});
  CHECK(ag::sum(x, {1}).to_vector<int64_t>() == std::vector<int64_t>{-2, mn + 1, 2});
  CHECK(ag::cumsum(x.transpose(0, 1), 1).select(0, 0).to_vector<int64_t>() == std::vector<int64_t>{mx, mn, mn + 3});
}
