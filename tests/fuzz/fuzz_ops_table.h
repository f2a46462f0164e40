#pragma once
// The op fuzzer's op table (tests/fuzz/fuzz_ops.cpp, its only includer): each op, how to
// check it, and its float64 reference path and error scale. An input picks an op by its
// index here (byte % the table's size): any change to the table changes what corpus
// inputs drive.
#include "fuzz_ops_inputs.h"
#include "fuzz_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace {

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

}  // namespace
