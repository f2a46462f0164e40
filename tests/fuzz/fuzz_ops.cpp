// The op fuzzer: the input decodes into a few small tensors (random shapes up to 3 dims
// of 0..4, dtypes f32 / f64 / i32 / i64 / bool, values k/8 with some inf, NaN and 1e30,
// contiguous or strided: transposed, every other row, or expanded) and a program of up
// to 8 ops on them (elementwise, reductions, matmul, softmax, views and other shaping,
// indexing) whose arguments (dims, indices, shapes) also come from the input and may be
// invalid. Each op must either throw an ag::Error or return a result that matches the
// float64 path: the same op (or its composite definition: softmax as exp / sum, matmul
// as a broadcast product summed, var from the mean) on float64 contiguous copies of the
// arguments. Where that reference is finite, the result must be finite and within the
// tolerance of its dtype; views, shaping and indexing must match exactly. A result joins
// the tensors later ops draw from when it is small.
#include "fuzz_util.h"

#include <cmath>
#include <functional>
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
    default: return (int(b) - 126) / 8.0;  // exact in f32: k/8, |k| <= 126
  }
}

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
  std::vector<double> values(size_t(ag::numel(base)));
  for (double& v : values) {
    const uint8_t b = in.u8();
    v = ag::is_floating(dtype) ? decode_value(b) : dtype == DType::b8 ? double(b & 1) : double(int(b % 17) - 8);
  }
  Tensor t = Tensor::from_vector(values, base).to(dtype);
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
  std::vector<int64_t> list;
};

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
  for (int64_t i = 0; i < len; ++i) p.list.push_back(in.range(-2, 5));
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
    // Where the reference is NaN or infinite, or (for f32) beyond its range, anything goes.
    if (!std::isfinite(w[i]) || (f32 && std::abs(w[i]) > 1e30)) continue;
    // Plus the smallest normal number of the dtype: below it (subnormals, flushed to 0)
    // relative precision is lost.
    const double tiny = rtol == 0 ? 0 : f32 ? 2e-38 : 3e-308;
    const double tol = rtol * (std::abs(w[i]) + 16 * s[i] + (op.check == Check::loose ? 1 : 0)) + tiny;
    if (!std::isfinite(g[i]) || std::abs(g[i] - w[i]) > tol)
      fuzz::fail(where() + ": element " + std::to_string(i) + " is " + ag::detail::cat(g[i]) +
                 ", the float64 path gives " + ag::detail::cat(w[i]) + " (tolerance " + ag::detail::cat(tol) + ")");
  }
}

bool tame(const Tensor& t) {
  if (t.numel() > 256) return false;
  if (t.is_floating_point()) return true;
  // Integer results stay small, so that later ops cannot overflow (which is undefined
  // behaviour in C++ and a UBSan report, while PyTorch wraps).
  for (double v : t.to_vector<double>())
    if (std::abs(v) > 1024) return false;
  return true;
}

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
    std::vector<Tensor> args64;
    for (const Tensor& a : args) args64.push_back(f64(a));
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
