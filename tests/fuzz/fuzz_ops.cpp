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
//
// fuzz_ops_inputs.h decodes the input, fuzz_ops_table.h holds the ops; here: the
// comparison with the float64 path and the program loop.
#include "fuzz_ops_inputs.h"
#include "fuzz_ops_table.h"
#include "fuzz_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

constexpr int kMaxOps = 8, kMaxRegs = 6;

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
