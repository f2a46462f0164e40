// Op semantics against PyTorch 1.13 (tests/fixtures, ops_special_values): pow and 41 unary
// ops at special values, forward in f64 and f32 at every position of a 33-long vector (two
// 16-wide SIMD bodies and a scalar tail), gradients of sum(op(x)). ops_losses: test_parity_semantics/losses.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;

namespace {

using UnaryFn = std::function<Tensor(const Tensor&)>;

const test_util::Fixture& specials() {
  static const test_util::Fixture f = test_util::load_fixture("ops_special_values");
  return f;
}
std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }
// Every digit, for failure messages.
std::string full(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// ---- ulps and the special-value match ------------------------------------------------
// Distance in units in the last place of T; +0 and -0 are one point.
template <class T>
int64_t ulps(T a, T b) {
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T v) {
    I i = std::bit_cast<I>(v);
    return i < 0 ? -int64_t(i & std::numeric_limits<I>::max()) : int64_t(i);
  };
  return std::abs(ordered(a) - ordered(b));
}

// got matches PyTorch's `want` (rounded to T): NaN only NaN, an infinity or a zero
// exactly (sign included), anything else within 4 ulps of T.
template <class T>
bool matches(T got, double want) {
  const T w = static_cast<T>(want);
  if (std::isnan(w)) return std::isnan(got);
  if (std::isinf(w) || w == 0) return got == w && std::signbit(got) == std::signbit(w);
  return std::isfinite(got) && ulps(got, w) <= 4;
}

// ---- where PyTorch's f32 answer is not its f64 answer rounded ---------------------------
// In f32 the input itself changes: 1e-310 becomes +0, so its f32 reference is the one at
// x = +0 (see f32_index). Beyond that, these are the places where torch 1.13's f32
// kernels (x86-64 CPU) give another value than its f64 kernels rounded to f32 (from
// torch.<op>(input.x.float()) and the gradient of its sum at input.x_finite.float()).
// There the test accepts either that f32 value or the rounded f64 one.
struct F32Diff {
  const char* key;  // "<op>.out" (index into input.x) or "<op>.grad" (into input.x_finite)
  int index;
  float torch_f32;
};
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
const F32Diff kF32Diffs[] = {
    // 1 - y^2 (tanh), y (1 - y) (sigmoid), y + 1 (expm1) computed in f32: cancellation.
    {"tanh.grad", 6, 0.026592249050736427f},  // x = 2.5: f64 0.02659222668316057, 12 ulps
    {"tanh.grad", 7, 0.026592249050736427f},  // x = -2.5
    {"sigmoid.grad", 9, 0.0f},                // x = 20: f64 2.0611536879193953e-09
    {"expm1.grad", 10, 0.0f},                 // x = -20: f64 2.0611535811454473e-09
    // f32(1e30) = 1.0000000150474662e30, a different angle (torch's f32 is right for it).
    {"sin.out", 14, -0.791163444519043f},    // f64 0.009331468931175825
    {"sin.grad", 11, -0.6116048097610474f},  // f64 -0.9999564608959665
    {"cos.out", 14, -0.6116048097610474f},   // f64 -0.9999564608959665
    {"cos.grad", 11, 0.791163444519043f},    // f64 -0.009331468931175825
    {"tan.out", 14, 1.293586015701294f},     // f64 -0.009331875232662407
    {"tan.grad", 11, 2.6733646392822266f},   // f64 1.000087083895358
    // 1 / sqrt(x^2 +- 1) with x^2 overflowing f32 at x = 1e30: f64 1e-30.
    {"asinh.grad", 11, 0.0f},
    {"acosh.grad", 11, 0.0f},
    // f32 arithmetic in torch's vectorized activation kernels: 5 to 33 ulps.
    {"mish.grad", 3, 0.059216730296611786f},       // x = -1: f64 0.059216755877395014
    {"gelu.out", 1, 0.0f},                         // x = -0: f64 -0
    {"gelu.out", 7, -0.015524178743362427f},       // x = -2.5: f64 -0.015524163314440398
    {"gelu.out", 13, 0.0f},                        // x = -20: f64 -0
    {"gelu.grad", 3, -0.08331543207168579f},       // x = -1: f64 -0.08331547058768635
    {"gelu.grad", 7, -0.03761106729507446f},       // x = -2.5: f64 -0.03761108590814519
    {"gelu.grad", 10, 0.0f},                       // x = -20: f64 -1.1e-86 (rounds to -0)
    {"gelu_tanh.out", 7, -0.015084296464920044f},  // x = -2.5: f64 -0.015084266089998577
    {"gelu_tanh.grad", 7, -0.03795165196061134f},  // x = -2.5: f64 -0.03795157621266618
    {"gelu_tanh.grad", 11, kNaNf},                 // x = 1e30: x^3 overflows; f64 1
};

// The reference index for element i of `xs` in T: a nonzero value that T flushes to +0
// (the denormal in f32) takes the reference of +0.
template <class T>
int f32_index(const std::vector<double>& xs, int i) {
  if (sizeof(T) == 8 || xs[size_t(i)] == 0 || static_cast<T>(xs[size_t(i)]) != 0) return i;
  for (size_t j = 0; j < xs.size(); ++j)
    if (xs[j] == 0 && !std::signbit(xs[j])) return int(j);
  return i;
}

// Element i of reference `key` (over inputs xs) matches got in T.
template <class T>
bool matches_ref(T got, const std::string& key, const std::vector<double>& ref, const std::vector<double>& xs, int i) {
  if (matches<T>(got, ref[size_t(f32_index<T>(xs, i))])) return true;
  if constexpr (sizeof(T) == 4) {
    for (const F32Diff& d : kF32Diffs)
      if (key == d.key && i == d.index) return matches<float>(got, double(d.torch_f32));
  }
  return false;
}

// ---- the table: one line per op -----------------------------------------------------
// known_grad: the forward is checked here, the gradient only in the may_fail case
// "known differences" below (which says why).
struct UnaryLine {
  const char* name;  // fixture prefix: <name>.out, <name>.grad
  UnaryFn fn;
  bool known_grad = false;
};
const std::vector<UnaryLine>& unary_lines() {
  static const std::vector<UnaryLine> lines = {
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"sign", [](const Tensor& x) { return sign(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }, true},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"sin", [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }},
      {"tan", [](const Tensor& x) { return tan(x); }},
      {"asin", [](const Tensor& x) { return asin(x); }},
      {"acos", [](const Tensor& x) { return acos(x); }},
      {"atan", [](const Tensor& x) { return atan(x); }},
      {"sinh", [](const Tensor& x) { return sinh(x); }},
      {"cosh", [](const Tensor& x) { return cosh(x); }},
      {"asinh", [](const Tensor& x) { return asinh(x); }},
      {"acosh", [](const Tensor& x) { return acosh(x); }},
      {"atanh", [](const Tensor& x) { return atanh(x); }},
      {"log2", [](const Tensor& x) { return log2(x); }},
      {"log10", [](const Tensor& x) { return log10(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }, true},
      {"exp2", [](const Tensor& x) { return exp2(x); }},
      {"floor", [](const Tensor& x) { return floor(x); }},
      {"ceil", [](const Tensor& x) { return ceil(x); }},
      {"round", [](const Tensor& x) { return round(x); }},
      {"trunc", [](const Tensor& x) { return trunc(x); }},
      {"frac", [](const Tensor& x) { return frac(x); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x, 1, 20); }},
      {"elu", [](const Tensor& x) { return elu(x, 1); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, GeluApprox::tanh); }, true},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
      {"pow.-1", [](const Tensor& x) { return pow(x, -1.0); }},
      {"pow.-0.3", [](const Tensor& x) { return pow(x, -0.3); }},
      {"pow.0", [](const Tensor& x) { return pow(x, 0.0); }},
      {"pow.0.3", [](const Tensor& x) { return pow(x, 0.3); }},
      {"pow.2", [](const Tensor& x) { return pow(x, 2.0); }},
      {"pow.0.5", [](const Tensor& x) { return pow(x, 0.5); }},
      {"pow.3", [](const Tensor& x) { return pow(x, 3.0); }},
  };
  return lines;
}

// d sum(f(x)) / dx; zeros when f records no gradient at all (sign).
Tensor grad_of_sum(const UnaryFn& f, const Tensor& x_in) {
  Tensor x = x_in.clone().requires_grad_();
  Tensor y = f(x);
  if (!y.requires_grad()) return zeros_like(x);
  y.sum().backward();
  return x.grad();
}

// |got - want| <= rel |want|, exact where want is NaN, infinite or zero.
template <class T>
bool within(T got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return double(got) == want;
  return std::abs(double(got) - want) <= rel * std::abs(want);
}

// gradient_rel > 0: the gradient is compared within that relative error instead of ulps.
template <class T>
void check_unary_line(const UnaryLine& line, bool forward, bool gradient, double gradient_rel = 0) {
  const auto& fx = specials();
  const std::string out_key = std::string(line.name) + ".out", grad_key = std::string(line.name) + ".grad";
  const std::vector<double> xs = vals(fx.at("input.x")), xf = vals(fx.at("input.x_finite"));
  const std::vector<double> out_ref = vals(fx.at(out_key)), grad_ref = vals(fx.at(grad_key));
  const std::string tname = sizeof(T) == 4 ? "f32" : "f64";
  const int n = int(xs.size());
  // Forward: vector p holds xs[(i + p) % n] at position i, so every special value visits
  // every SIMD lane and the scalar tail.
  constexpr int len = 2 * 16 + 1;
  for (int p = 0; forward && p < n; ++p) {
    std::vector<T> in(len);
    for (int i = 0; i < len; ++i) in[size_t(i)] = static_cast<T>(xs[size_t((i + p) % n)]);
    const std::vector<T> out = line.fn(Tensor::from_vector(in)).template to_vector<T>();
    for (int i = 0; i < len; ++i) {
      const int k = (i + p) % n;
      INFO(out_key, " ", tname, " at x = ", xs[size_t(k)], " (position ", i, "): got ", double(out[size_t(i)]),
           ", torch f64 ", out_ref[size_t(k)]);
      CHECK(matches_ref<T>(out[size_t(i)], out_key, out_ref, xs, k));
    }
  }
  if (!gradient) return;
  // Gradient at the finite specials.
  const Tensor x = Tensor::from_vector(std::vector<T>(xf.begin(), xf.end()));
  const Tensor g = grad_of_sum(line.fn, x);
  REQUIRE_MESSAGE(g.defined(), grad_key, ": no gradient");
  const std::vector<T> gv = g.template to_vector<T>();
  for (int i = 0; i < int(xf.size()); ++i) {
    INFO(grad_key, " ", tname, " at x = ", xf[size_t(i)], ": got ", full(double(gv[size_t(i)])), ", torch f64 ",
         full(grad_ref[size_t(i)]));
    const bool close =
        gradient_rel > 0 && within<T>(gv[size_t(i)], grad_ref[size_t(f32_index<T>(xf, i))], gradient_rel);
    CHECK((close || matches_ref<T>(gv[size_t(i)], grad_key, grad_ref, xf, i)));
  }
}

// pow(tensor, tensor) over every (base, exponent) pair of `vals`: pair k = i * n + j.
template <class T>
void check_pow_tt(bool forward, bool gradient) {
  const auto& fx = specials();
  const std::vector<double> xs = vals(fx.at("input.x")), xf = vals(fx.at("input.x_finite"));
  const std::string tname = sizeof(T) == 4 ? "f32" : "f64";
  // The reference index of pair k in T (the denormal is +0 in f32, see f32_index).
  auto ref_index = [](const std::vector<double>& v, int k) {
    const int n = int(v.size());
    return f32_index<T>(v, k / n) * n + f32_index<T>(v, k % n);
  };
  auto as_t = [](const Tensor& t) { return t.to(sizeof(T) == 4 ? DType::f32 : DType::f64); };
  if (forward) {
    const std::vector<double> ref = vals(fx.at("pow_tt.out"));
    const std::vector<T> out = pow(as_t(fx.at("pow_tt.base")), as_t(fx.at("pow_tt.exponent"))).template to_vector<T>();
    for (int k = 0; k < int(ref.size()); ++k) {
      const double want = ref[size_t(ref_index(xs, k))];
      INFO("pow_tt.out ", tname, ": ", xs[size_t(k) / xs.size()], " ^ ", xs[size_t(k) % xs.size()], " got ",
           full(double(out[size_t(k)])), ", torch f64 ", full(want));
      CHECK(matches<T>(out[size_t(k)], want));
    }
  }
  if (!gradient) return;
  Tensor b = as_t(fx.at("pow_tt.finite.base")).clone().requires_grad_();
  Tensor e = as_t(fx.at("pow_tt.finite.exponent")).clone().requires_grad_();
  pow(b, e).sum().backward();
  for (const auto& key_g : {std::pair{"pow_tt.grad.base", b.grad()}, std::pair{"pow_tt.grad.exponent", e.grad()}}) {
    // Not a structured binding: clang before 16 cannot capture one (INFO is a lambda).
    const char* key = key_g.first;
    const Tensor& g = key_g.second;
    REQUIRE_MESSAGE(g.defined(), key, ": no gradient");
    const std::vector<double> ref = vals(fx.at(key));
    const std::vector<T> gv = g.template to_vector<T>();
    for (int k = 0; k < int(ref.size()); ++k) {
      const double want = ref[size_t(ref_index(xf, k))];
      INFO(key, " ", tname, ": ", xf[size_t(k) / xf.size()], " ^ ", xf[size_t(k) % xf.size()], " got ",
           full(double(gv[size_t(k)])), ", torch f64 ", full(want));
      CHECK(matches<T>(gv[size_t(k)], want));
    }
  }
}

}  // namespace

// ---- ops_special_values ---------------------------------------------------------------
TEST_CASE("ops_special_values: every unary op and pow(x, scalar) as torch 1.13, f64 and f32") {
  // Every op the fixture lists has a line (pow's lines cover its exponents).
  const std::string listed = specials().meta("ops");
  size_t start = 0;
  while (start <= listed.size()) {
    const size_t comma = std::min(listed.find(',', start), listed.size());
    const std::string op = listed.substr(start, comma - start);
    bool found = false;
    for (const auto& l : unary_lines()) found = found || op == l.name;
    CHECK_MESSAGE(found, "no table line for ", op);
    start = comma + 1;
  }
  for (const auto& line : unary_lines()) {
    SUBCASE(line.name) {
      check_unary_line<double>(line, true, !line.known_grad);
      check_unary_line<float>(line, true, !line.known_grad);
    }
  }
}

TEST_CASE("ops_special_values: pow(tensor, tensor) over every pair of specials, f64 and f32") {
  check_pow_tt<double>(true, false);
  check_pow_tt<float>(true, false);
}

TEST_CASE("ops_special_values: pow(tensor, tensor) gradients at every pair of finite specials") {
  // torch masks d/dbase to 0 where exponent == 0 and d/dexponent to 0 where base == 0 and
  // exponent >= 0 (pow_backward_self / pow_backward_exponent); so do we.
  check_pow_tt<double>(false, true);
  check_pow_tt<float>(false, true);
}

// tanh, expm1 and gelu(tanh) gradients at |x| = 2.5 come from 1 - y^2 or y + 1 of the
// output: a 1-ulp difference between libm's tanh/expm1 (ours) and the SLEEF kernels torch
// uses is magnified up to ~70x there, so these compare to 1e-13 (f64) / 1e-5 (f32)
// relative instead of a few ulps.
TEST_CASE("ops_special_values: tanh, expm1, gelu tanh gradients to 1e-13 relative") {
  int lines = 0;
  for (const auto& line : unary_lines()) {
    if (!line.known_grad) continue;
    ++lines;
    SUBCASE(line.name) {
      check_unary_line<double>(line, false, true, 1e-13);
      check_unary_line<float>(line, false, true, 1e-5);
    }
  }
  CHECK(lines == 3);
}
