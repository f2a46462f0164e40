// The op table: one line per differentiable op (or per interesting case of one). Each
// line runs the forward on seeded float64 inputs that require grad and a central-
// difference gradcheck. Adding an op adds one line here. Hand-computed values, the
// all -inf softmax rows, embedding's padding row and fully masked attention follow.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ag;  // the table reads like the ops' own docs

namespace {

// ---- inputs ------------------------------------------------------------------
// An Init makes input `i` of a line (values only; the runner sets requires_grad).
using Init = Tensor (*)(std::size_t i, const Shape& shape, Generator& rng);

Tensor normal(std::size_t, const Shape& s, Generator& rng) { return randn(s, DType::f64, &rng); }

// log, sqrt, rsqrt, pow, denominators: U[0.5, 2).
Tensor positive(std::size_t, const Shape& s, Generator& rng) {
  return uniform(s, 0.5, 2.0, DType::f64, &rng);
}

// Away from kinks and ties (relu, abs, clamp, max, maximum): a shuffled grid of step 0.2,
// shifted by 0.05 for even inputs and 0.15 for odd ones. Values within an input differ by
// >= 0.2, across inputs 0 and 1 by >= 0.1, and every value is >= 0.05 away from each
// multiple of 0.1 (so clamp bounds like -0.3 or 0.5 and relu's 0 are never near).
Tensor distinct(std::size_t i, const Shape& s, Generator& rng) {
  const int64_t n = ag::numel(s);
  std::vector<int64_t> perm(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) perm[size_t(k)] = k;
  for (int64_t k = n - 1; k > 0; --k) std::swap(perm[size_t(k)], perm[size_t(rng.integer(0, k + 1))]);
  std::vector<double> v(perm.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = 0.2 * static_cast<double>(perm[k] - n / 2) + (i % 2 ? 0.15 : 0.05);
  return Tensor::from_vector(v, s);
}

// Non-contiguous leaves: the last two dims transposed in memory (1-D falls back to a
// stride-2 slice). gradcheck perturbs them through their strides.
Tensor strided(std::size_t, const Shape& s, Generator& rng) {
  Shape wide = s;
  wide[wide.size() - 1] *= 2;
  return randn(wide, DType::f64, &rng).slice(-1, 0, wide.back(), 2);
}
Tensor transposed(std::size_t i, const Shape& s, Generator& rng) {
  if (s.size() < 2) return strided(i, s, rng);
  Shape t = s;
  std::swap(t[t.size() - 1], t[t.size() - 2]);
  return randn(t, DType::f64, &rng).transpose(-1, -2);
}

// Constants used inside the lambdas (no gradient).
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor bools(const std::vector<int64_t>& v, const Shape& s) { return ne(i64(v, s), 0.0); }

// Attention options set member by member: designated initializers that leave out
// attn_mask or scale trip GCC's -Wmissing-field-initializers.
SdpaOptions with_mask(const Tensor& m, bool need_weights = false) {
  SdpaOptions o;
  o.attn_mask = m;
  o.need_weights = need_weights;
  return o;
}
SdpaOptions causal() {
  SdpaOptions o;
  o.causal = true;
  return o;
}

// ---- the table -----------------------------------------------------------------
using OpFn = Tensor (*)(const std::vector<Tensor>&);
struct OpCase {
  const char* name;  // the op first; other words name the case
  std::vector<Shape> shapes;
  OpFn fn;
  Init init = normal;
};

constexpr double kInf = std::numeric_limits<double>::infinity();
const std::optional<double> kNone;  // clamp without that bound

const std::vector<OpCase>& op_table() {
  static const std::vector<OpCase> table = {
      // ---- elementwise: binary, broadcasting ----
      {"add", {{3, 4}, {3, 4}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add broadcast [3,4] + [4]", {{3, 4}, {4}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add broadcast [2,1,3] + [4,1]", {{2, 1, 3}, {4, 1}}, [](auto& x) { return add(x[0], x[1]); }},
      {"add non-contiguous", {{3, 4}, {3, 4}}, [](auto& x) { return add(x[0], x[1]); }, transposed},
      {"sub", {{3, 4}, {4}}, [](auto& x) { return sub(x[0], x[1]); }},
      {"sub [3,1] - [1,4]", {{3, 1}, {1, 4}}, [](auto& x) { return sub(x[0], x[1]); }},
      {"mul", {{3, 4}, {3, 4}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul broadcast [3,1] * [1,4]", {{3, 1}, {1, 4}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul 0-d by [3]", {Shape{}, {3}}, [](auto& x) { return mul(x[0], x[1]); }},
      {"mul same input twice", {{3, 4}}, [](auto& x) { return mul(x[0], x[0]); }},
      {"mul transposed view", {{4, 3}, {3, 4}}, [](auto& x) { return mul(x[0].t(), x[1]); }},
      {"div", {{3, 4}, {3, 4}}, [](auto& x) { return div(x[0], x[1]); }, positive},
      {"div broadcast [4] / [3,1]", {{4}, {3, 1}}, [](auto& x) { return div(x[0], x[1]); }, positive},
      {"pow tensor-tensor broadcast", {{3, 4}, {4}}, [](auto& x) { return pow(x[0], x[1]); }, positive},
      {"pow scalar 3", {{3, 4}}, [](auto& x) { return pow(x[0], 3.0); }},
      {"pow scalar 2", {{3, 4}}, [](auto& x) { return pow(x[0], 2.0); }},
      {"pow scalar 0.5", {{3, 4}}, [](auto& x) { return pow(x[0], 0.5); }, positive},
      {"pow scalar -1.5", {{3, 4}}, [](auto& x) { return pow(x[0], -1.5); }, positive},
      {"pow scalar 0", {{3, 4}}, [](auto& x) { return pow(x[0], 0.0); }},
      {"maximum", {{3, 4}, {3, 4}}, [](auto& x) { return maximum(x[0], x[1]); }, distinct},
      {"maximum broadcast", {{3, 4}, {4}}, [](auto& x) { return maximum(x[0], x[1]); }, distinct},
      {"minimum", {{3, 4}, {3, 4}}, [](auto& x) { return minimum(x[0], x[1]); }, distinct},
      {"minimum broadcast", {{3, 1}, {4}}, [](auto& x) { return minimum(x[0], x[1]); }, distinct},

      // ---- scalar overloads and operators ----
      {"add scalar", {{3, 4}}, [](auto& x) { return add(x[0], 2.5); }},
      {"sub scalar", {{3, 4}}, [](auto& x) { return sub(x[0], 2.5); }},
      {"mul scalar", {{3, 4}}, [](auto& x) { return mul(x[0], -1.5); }},
      {"div scalar", {{3, 4}}, [](auto& x) { return div(x[0], 4.0); }},
      {"rsub", {{3, 4}}, [](auto& x) { return rsub(2.0, x[0]); }},
      {"rdiv", {{3, 4}}, [](auto& x) { return rdiv(3.0, x[0]); }, positive},
      {"operator+ tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] + x[1]; }},
      {"operator- tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] - x[1]; }},
      {"operator* tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] * x[1]; }},
      {"operator/ tensors", {{3, 4}, {4}}, [](auto& x) { return x[0] / x[1]; }, positive},
      {"operator+ scalar right", {{3, 4}}, [](auto& x) { return x[0] + 1.5; }},
      {"operator+ scalar left", {{3, 4}}, [](auto& x) { return 1.5 + x[0]; }},
      {"operator- scalar right", {{3, 4}}, [](auto& x) { return x[0] - 1.5; }},
      {"operator- scalar left", {{3, 4}}, [](auto& x) { return 1.5 - x[0]; }},
      {"operator* scalar right", {{3, 4}}, [](auto& x) { return x[0] * 3.0; }},
      {"operator* scalar left", {{3, 4}}, [](auto& x) { return 3.0 * x[0]; }},
      {"operator/ scalar right", {{3, 4}}, [](auto& x) { return x[0] / 3.0; }},
      {"operator/ scalar left", {{3, 4}}, [](auto& x) { return 3.0 / x[0]; }, positive},
      {"operator- unary", {{3, 4}}, [](auto& x) { return -x[0]; }},

      // ---- elementwise: unary ----
      {"neg", {{3, 4}}, [](auto& x) { return neg(x[0]); }},
      {"exp", {{3, 4}}, [](auto& x) { return exp(x[0]); }},
      {"exp non-contiguous", {{3, 4}}, [](auto& x) { return exp(x[0]); }, transposed},
      {"log", {{3, 4}}, [](auto& x) { return log(x[0]); }, positive},
      {"sqrt", {{3, 4}}, [](auto& x) { return sqrt(x[0]); }, positive},
      {"rsqrt", {{3, 4}}, [](auto& x) { return rsqrt(x[0]); }, positive},
      {"abs", {{3, 4}}, [](auto& x) { return abs(x[0]); }, distinct},
      {"sign (times x: its own gradient is zero)", {{3, 4}}, [](auto& x) { return x[0] * sign(x[0]); },
       distinct},
      {"tanh", {{3, 4}}, [](auto& x) { return tanh(x[0]); }},
      {"sigmoid", {{3, 4}}, [](auto& x) { return sigmoid(x[0]); }},
      {"relu", {{3, 4}}, [](auto& x) { return relu(x[0]); }, distinct},
      {"relu strided", {{3, 4}}, [](auto& x) { return relu(x[0]); }, strided},
      {"gelu none", {{3, 4}}, [](auto& x) { return gelu(x[0]); }},
      {"gelu tanh", {{3, 4}}, [](auto& x) { return gelu(x[0], GeluApprox::tanh); }},
      {"erf", {{3, 4}}, [](auto& x) { return erf(x[0]); }},
      {"sin", {{3, 4}}, [](auto& x) { return sin(x[0]); }},
      {"cos", {{3, 4}}, [](auto& x) { return cos(x[0]); }},
      {"square", {{3, 4}}, [](auto& x) { return square(x[0]); }},
      {"clamp both bounds", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, 0.5); }, distinct},
      {"clamp min only", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.3, kNone); }, distinct},
      {"clamp max only", {{3, 4}}, [](auto& x) { return clamp(x[0], kNone, 0.5); }, distinct},

      // ---- where / masked_fill ----
      {"where", {{2, 3}, {2, 3}},
       [](auto& x) { return where(bools({1, 0, 1, 0, 0, 1}, {2, 3}), x[0], x[1]); }},
      {"where broadcast cond [2,1] a [2,3] b [3]", {{2, 3}, {3}},
       [](auto& x) { return where(bools({1, 0}, {2, 1}), x[0], x[1]); }},
      {"where scalar b", {{2, 3}}, [](auto& x) { return where(bools({1, 0, 1}, {3}), x[0], 0.5); }},
      {"where scalar a", {{2, 3}}, [](auto& x) { return where(bools({1, 0, 1}, {3}), -2.0, x[0]); }},
      {"where non-contiguous", {{2, 3}, {2, 3}},
       [](auto& x) { return where(bools({0, 1, 1, 0, 1, 0}, {2, 3}), x[0], x[1]); }, transposed},
      {"masked_fill broadcast mask", {{3, 4}},
       [](auto& x) { return masked_fill(x[0], bools({0, 1, 0, 1}, {4}), -7.0); }},

      // ---- reductions ----
      {"sum all", {{3, 4}}, [](auto& x) { return sum(x[0]); }},
      {"sum dim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], {1}); }},
      {"sum dims keepdim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], {0, 2}, true); }},
      {"sum negative dims", {{2, 3, 2}}, [](auto& x) { return sum(x[0], {-1, -3}); }},
      {"sum method non-contiguous", {{2, 3, 4}}, [](auto& x) { return x[0].sum({-1}, true); }, transposed},
      {"mean all", {{3, 4}}, [](auto& x) { return mean(x[0]); }},
      {"mean dims", {{2, 3, 4}}, [](auto& x) { return mean(x[0], {0, 2}); }},
      {"mean keepdim negative dim", {{2, 3, 4}}, [](auto& x) { return x[0].mean({-2}, true); }},
      {"var all correction 1", {{3, 4}}, [](auto& x) { return var(x[0]); }},
      {"var all correction 0", {{3, 4}}, [](auto& x) { return var(x[0], {}, 0); }},
      {"var dims correction 0 keepdim", {{2, 3, 4}}, [](auto& x) { return var(x[0], {1, 2}, 0, true); }},
      {"var negative dim correction 1", {{2, 3, 4}}, [](auto& x) { return var(x[0], {-1}, 1); }},
      {"max dim values", {{3, 4}}, [](auto& x) { return max(x[0], 1).first; }, distinct},
      {"max dim 0 keepdim", {{3, 4}}, [](auto& x) { return max(x[0], 0, true).first; }, distinct},
      {"max negative dim 3-D", {{2, 3, 4}}, [](auto& x) { return max(x[0], -2).first; }, distinct},
      {"min dim values", {{3, 4}}, [](auto& x) { return min(x[0], -1).first; }, distinct},
      {"max all", {{3, 4}}, [](auto& x) { return max(x[0]); }, distinct},
      {"max dim of a 0-d tensor", {Shape{}}, [](auto& x) { return max(x[0], 0).first * 2.0; }},
      {"min all", {{3, 4}}, [](auto& x) { return min(x[0]); }, distinct},
      {"logsumexp dim", {{3, 4}}, [](auto& x) { return logsumexp(x[0], {1}); }},
      {"logsumexp dims keepdim", {{2, 3, 4}}, [](auto& x) { return logsumexp(x[0], {0, -1}, true); }},
      {"logsumexp large values", {{3, 4}}, [](auto& x) { return logsumexp(x[0] * 300.0, {1}); }},
      {"sum_to [2,3,4] -> [3,1]", {{2, 3, 4}}, [](auto& x) { return sum_to(x[0], {3, 1}); }},

      // ---- shape: views and copies ----
      {"reshape", {{3, 4}}, [](auto& x) { return reshape(x[0], {2, 6}); }},
      {"reshape 0-d to [1,1]", {Shape{}}, [](auto& x) { return reshape(x[0], {1, 1}); }},
      {"reshape -1", {{2, 3, 2}}, [](auto& x) { return x[0].reshape({-1, 2}); }},
      {"reshape non-contiguous (copies)", {{3, 4}}, [](auto& x) { return x[0].t().reshape({12}); }},
      {"view", {{3, 4}}, [](auto& x) { return view(x[0], {4, 3}); }},
      {"view -1 split dim", {{2, 6}}, [](auto& x) { return x[0].view({2, -1, 2}); }},
      {"transpose", {{2, 3, 4}}, [](auto& x) { return transpose(x[0], 0, 2); }},
      {"transpose negative dims", {{2, 3, 4}}, [](auto& x) { return x[0].transpose(-1, -2) * 2.0; }},
      {"transpose 0-d", {Shape{}}, [](auto& x) { return transpose(x[0], 0, -1) * 2.0; }},
      {"t", {{3, 4}}, [](auto& x) { return x[0].t(); }},
      {"permute", {{2, 3, 4}}, [](auto& x) { return permute(x[0], {2, 0, 1}); }},
      {"permute negative dims", {{2, 3, 4}}, [](auto& x) { return x[0].permute({-1, 0, 1}) * 2.0; }},
      {"unsqueeze", {{3, 4}}, [](auto& x) { return unsqueeze(x[0], 1); }},
      {"unsqueeze -1 non-contiguous", {{3, 4}}, [](auto& x) { return x[0].unsqueeze(-1); }, transposed},
      {"unsqueeze 0-d", {Shape{}}, [](auto& x) { return x[0].unsqueeze(0) * 2.0; }},
      {"squeeze all", {{3, 1, 4, 1}}, [](auto& x) { return squeeze(x[0]); }},
      {"squeeze dim", {{3, 1, 4}}, [](auto& x) { return x[0].squeeze(1); }},
      {"squeeze dim of size > 1 (no-op)", {{3, 4}}, [](auto& x) { return x[0].squeeze(0); }},
      {"expand", {{3, 1}}, [](auto& x) { return expand(x[0], {2, 3, 4}); }},
      {"expand 0-d", {Shape{}}, [](auto& x) { return expand(x[0], {2, 3}); }},
      {"expand -1", {{1, 4}}, [](auto& x) { return x[0].expand({3, -1}); }},
      {"slice with step", {{3, 5}}, [](auto& x) { return slice(x[0], 1, 1, 5, 2); }},
      {"slice negative start", {{4, 3}}, [](auto& x) { return x[0].slice(0, -3, 3); }},
      {"slice of a slice", {{4, 6}}, [](auto& x) { return x[0].slice(1, 0, 6, 2).slice(0, 1, 4, 2); }},
      {"select", {{3, 4}}, [](auto& x) { return select(x[0], 1, -1); }},
      {"select to 0-d", {{3}}, [](auto& x) { return x[0].select(0, 1) * 2.0; }},
      {"select dim 0 non-contiguous", {{3, 4}}, [](auto& x) { return x[0].select(0, 1); }, transposed},
      {"narrow", {{3, 4}}, [](auto& x) { return narrow(x[0], 1, 1, 2); }},
      {"cat", {{2, 1}, {2, 3}, {2, 2}}, [](auto& x) { return cat({x[0], x[1], x[2]}, 1); }},
      {"cat negative dim non-contiguous", {{2, 3}, {1, 3}}, [](auto& x) { return cat({x[0], x[1]}, -2); },
       transposed},
      {"stack", {{2, 3}, {2, 3}}, [](auto& x) { return stack({x[0], x[1]}); }},
      {"stack last dim", {{2, 3}, {2, 3}, {2, 3}}, [](auto& x) { return stack({x[0], x[1], x[2]}, -1); }},
      {"split size", {{2, 5}},
       [](auto& x) {
         auto p = split(x[0], 2, 1);  // sizes 2, 2, 1
         return cat({p[2], p[0] * 2.0, p[1] * 3.0}, 1);
       }},
      {"split sizes", {{4, 2}},
       [](auto& x) {
         auto p = split(x[0], std::vector<int64_t>{1, 3}, 0);
         return cat({p[1], p[0] * 2.0}, 0);
       }},
      {"chunk", {{5, 2}},
       [](auto& x) {
         auto p = chunk(x[0], 3, 0);  // sizes 2, 2, 1
         return cat({p[0] * 3.0, p[2], p[1] * 2.0}, 0);
       }},
      {"contiguous of a transposed view", {{3, 4}}, [](auto& x) { return contiguous(x[0].t()); }},
      {"contiguous already contiguous", {{3, 4}}, [](auto& x) { return x[0].contiguous(); }},
      {"flatten", {{2, 3, 2}}, [](auto& x) { return flatten(x[0]); }},
      {"flatten range", {{2, 3, 2}}, [](auto& x) { return x[0].flatten(1, 2); }},
      {"flatten non-contiguous", {{2, 3, 2}}, [](auto& x) { return x[0].transpose(0, 2).flatten(0, 1); }},
      {"clone", {{3, 4}}, [](auto& x) { return clone(x[0]); }},
      {"clone of a view", {{3, 4}}, [](auto& x) { return x[0].t().clone(); }},
      {"to f64 (identity)", {{3, 4}}, [](auto& x) { return to(x[0], DType::f64); }},

      // ---- indexing ----
      {"index_select repeated ids", {{4, 3}},
       [](auto& x) { return index_select(x[0], 0, i64({2, 0, 2}, {3})); }},
      {"index_select negative dim non-contiguous", {{3, 4}},
       [](auto& x) { return index_select(x[0], -1, i64({3, 1, 1, 0, 3}, {5})); }, transposed},
      {"gather dim 1 repeated", {{3, 4}},
       [](auto& x) { return gather(x[0], 1, i64({0, 0, 3, 2, 1, 2}, {3, 2})); }},
      {"gather dim 0 non-contiguous", {{3, 4}},
       [](auto& x) { return gather(x[0], 0, i64({2, 0, 1, 1, 0, 0, 2, 2}, {2, 4})); }, transposed},
      {"embedding repeated ids", {{5, 3}},
       [](auto& x) { return embedding(i64({1, 4, 1, 0, 1, 2}, {2, 3}), x[0]); }},
      {"embedding i32 ids non-contiguous weight", {{5, 3}},
       [](auto& x) { return embedding(i64({3, 3, 0}, {3}).to(DType::i32), x[0]); }, transposed},
      {"embedding padding_idx (not among the ids)", {{5, 3}},
       [](auto& x) { return embedding(i64({1, 4, 1}, {3}), x[0], 2); }},

      // ---- linear algebra ----
      {"matmul 1-D . 1-D", {{4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 2-D", {{3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D @ 1-D", {{3, 4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 2-D", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul transposed operands", {{3, 2}, {4, 3}}, [](auto& x) { return matmul(x[0].t(), x[1].t()); }},
      {"matmul non-contiguous leaves", {{2, 3}, {3, 4}}, [](auto& x) { return matmul(x[0], x[1]); },
       transposed},
      {"matmul batched [2,3,4] @ [4,5]", {{2, 3, 4}, {4, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,1,3,4] @ [3,4,5]", {{2, 1, 3, 4}, {3, 4, 5}},
       [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul batched [2,3,2] @ [2,2,3] non-contiguous", {{2, 3, 2}, {2, 2, 3}},
       [](auto& x) { return matmul(x[0], x[1]); }, transposed},
      {"matmul 2-D @ 3-D", {{3, 2}, {2, 2, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 1-D @ 3-D", {{3}, {2, 3, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"matmul 3-D @ 1-D", {{2, 3, 2}, {2}}, [](auto& x) { return matmul(x[0], x[1]); }},
      {"linear with bias", {{2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear without bias", {{2, 3}, {4, 3}}, [](auto& x) { return linear(x[0], x[1]); }},
      {"linear 1-D input", {{3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D input", {{2, 2, 3}, {4, 3}, {4}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
      {"linear 3-D non-contiguous input", {{2, 2, 3}, {4, 3}},
       [](auto& x) { return linear(x[0].transpose(0, 1), x[1]); }},

      // ---- softmax family ----
      {"softmax dim -1", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], -1); }},
      {"softmax dim 0", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], 0); }},
      {"softmax dim 1 non-contiguous", {{2, 3, 4}}, [](auto& x) { return softmax(x[0], 1); }, transposed},
      {"log_softmax dim -1", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], -1); }},
      {"log_softmax dim 0", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], 0); }},
      {"log_softmax dim 1 non-contiguous", {{2, 3, 4}}, [](auto& x) { return log_softmax(x[0], 1); },
       transposed},

      // ---- attention (with causal_mask / padding_mask / additive_mask) ----
      {"scaled_dot_product_attention", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2]).first; }},
      {"scaled_dot_product_attention bool mask", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {3, 4});  // (L, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention float mask (an input too)", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}, {3, 4}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(x[3])).first; }},
      {"scaled_dot_product_attention additive_mask", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = additive_mask(bools({1, 1, 0, 0, 1, 0, 1, 0}, {2, 1, 4}), DType::f64);  // (B, 1, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention causal", {{2, 3, 2}, {2, 3, 2}, {2, 3, 3}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], causal()).first; }},
      {"scaled_dot_product_attention fully masked row", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         Tensor m = bools({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4});  // query 1 sees no key
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention padding_mask and causal_mask", {{2, 3, 2}, {2, 3, 2}, {2, 3, 3}},
       [](auto& x) {
         // (B, 1, S) & (L, S) -> (B, L, S); batch 1 has one real token.
         Tensor pad = padding_mask(i64({3, 1}, {2}), 3).unsqueeze(1);
         Tensor m = logical_and(pad, causal_mask(3, 3));
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention padding_mask length 0 (all rows masked)",
       {{2, 2, 2}, {2, 3, 2}, {2, 3, 2}},
       [](auto& x) {
         Tensor m = padding_mask(i64({2, 0}, {2}), 3).unsqueeze(1);  // (B, 1, S)
         return scaled_dot_product_attention(x[0], x[1], x[2], with_mask(m)).first;
       }},
      {"scaled_dot_product_attention weights and scale", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         SdpaOptions o;
         o.scale = 0.7;
         o.need_weights = true;
         return scaled_dot_product_attention(x[0], x[1], x[2], o).second;
       }},
      {"scaled_dot_product_attention heads non-contiguous", {{1, 2, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}},
       [](auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], causal()).first; },
       transposed},
      {"scaled_dot_product_attention dropout", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(11);  // the same mask on every evaluation
         SdpaOptions o;
         o.dropout_p = 0.3;
         o.generator = &gen;
         return scaled_dot_product_attention(x[0], x[1], x[2], o).first;
       }},

      // ---- normalization and dropout ----
      {"layer_norm", {{3, 4}}, [](auto& x) { return layer_norm(x[0], {4}); }},
      {"layer_norm weight and bias", {{3, 4}, {4}, {4}},
       [](auto& x) { return layer_norm(x[0], {4}, x[1], x[2]); }},
      {"layer_norm weight only", {{3, 4}, {4}}, [](auto& x) { return layer_norm(x[0], {4}, x[1]); }},
      {"layer_norm bias only", {{3, 4}, {4}}, [](auto& x) { return layer_norm(x[0], {4}, {}, x[1]); }},
      {"layer_norm 2-D normalized_shape", {{2, 2, 3}, {2, 3}, {2, 3}},
       [](auto& x) { return layer_norm(x[0], {2, 3}, x[1], x[2]); }},
      {"layer_norm non-contiguous", {{3, 4}, {4}, {4}},
       [](auto& x) { return layer_norm(x[0], {4}, x[1], x[2]); },
       transposed},
      {"dropout p=0.3", {{3, 4}},
       [](auto& x) {
         static Generator gen;
         gen.manual_seed(7);  // the same mask on every evaluation
         return dropout(x[0], 0.3, true, &gen);
       }},
      {"dropout eval (identity)", {{3, 4}}, [](auto& x) { return dropout(x[0], 0.3, false); }},
      {"dropout p=1", {{3, 4}}, [](auto& x) { return dropout(x[0], 1.0, true); }},

      // ---- losses ----
      {"cross_entropy mean", {{3, 4}}, [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3})); }},
      {"cross_entropy sum", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::sum}); }},
      {"cross_entropy none", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.reduction = Reduction::none}); }},
      {"cross_entropy ignore_index default -100", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({2, -100, 1}, {3})); }},
      {"cross_entropy ignore_index 1 sum", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({1, 3, 1}, {3}), {.ignore_index = 1, .reduction = Reduction::sum});
       }},
      {"cross_entropy label_smoothing", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 3, 1}, {3}), {.label_smoothing = 0.2}); }},
      {"cross_entropy label_smoothing ignore_index none", {{3, 4}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 1}, {3}),
                              {.label_smoothing = 0.1, .reduction = Reduction::none});
       }},
      {"cross_entropy label_smoothing ignore_index mean", {{3, 4}},
       [](auto& x) { return cross_entropy(x[0], i64({0, -100, 1}, {3}), {.label_smoothing = 0.3}); }},
      {"cross_entropy 3-D (N,C,d)", {{2, 3, 2}},
       [](auto& x) { return cross_entropy(x[0], i64({0, 2, 1, 1}, {2, 2})); }},
      {"cross_entropy 3-D (N,C,d) label_smoothing ignore_index sum", {{2, 3, 2}},
       [](auto& x) {
         return cross_entropy(x[0], i64({0, -100, 2, 1}, {2, 2}),
                              {.label_smoothing = 0.25, .reduction = Reduction::sum});
       }},
      {"cross_entropy 3-D (N,C,d) none non-contiguous", {{2, 3, 2}},
       [](auto& x) { return cross_entropy(x[0], i64({2, 0, 1, 1}, {2, 2}), {.reduction = Reduction::none}); },
       transposed},
      {"cross_entropy unbatched (C)", {{4}}, [](auto& x) { return cross_entropy(x[0], i64({2}, {})); }},
      {"cross_entropy unbatched (C) label_smoothing", {{4}},
       [](auto& x) { return cross_entropy(x[0], i64({0}, {}), {.label_smoothing = 0.2}); }},
      {"nll_loss mean", {{3, 4}},
       [](auto& x) { return nll_loss(log_softmax(x[0], 1), i64({0, 3, 1}, {3})); }},
      {"nll_loss raw input ignore_index none", {{3, 4}},
       [](auto& x) { return nll_loss(x[0], i64({0, 2, 2}, {3}), 2, Reduction::none); }},
      {"nll_loss 3-D sum", {{2, 3, 2}},
       [](auto& x) { return nll_loss(x[0], i64({0, 2, 1, -100}, {2, 2}), -100, Reduction::sum); }},
      {"mse_loss mean", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1]); }},
      {"mse_loss sum", {{3, 4}, {3, 4}}, [](auto& x) { return mse_loss(x[0], x[1], Reduction::sum); }},
      {"mse_loss none non-contiguous", {{3, 4}, {3, 4}},
       [](auto& x) { return mse_loss(x[0], x[1], Reduction::none); }, transposed},
  };
  return table;
}

std::string first_word(const char* name) {
  std::string s(name);
  return s.substr(0, s.find(' '));
}

std::vector<std::string> words(const char* name) {
  std::istringstream in(name);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool all_finite(const Tensor& t) {
  for (double v : t.to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

// ---- tiny helpers for the hand-computed checks ----
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }

}  // namespace

// ---- the table runner ------------------------------------------------------------------
TEST_CASE("op table: forward and gradcheck for every line") {
  const auto& table = op_table();
  for (std::size_t n = 0; n < table.size(); ++n) {
    const OpCase& c = table[n];
    INFO("op table line: ", std::string(c.name));
    Generator rng(1000 + n);
    std::vector<Tensor> x;
    for (std::size_t i = 0; i < c.shapes.size(); ++i) {
      Tensor t = c.init(i, c.shapes[i], rng);
      REQUIRE(t.shape() == c.shapes[i]);
      x.push_back(t.requires_grad_());
    }
    Tensor y = c.fn(x);
    REQUIRE(y.defined());
    CHECK(y.dtype() == DType::f64);
    CHECK_MESSAGE(y.requires_grad(), std::string(c.name), ": the output does not require grad");
    CHECK_MESSAGE(all_finite(y), std::string(c.name), ": the forward is not finite: ", y);
    GradcheckResult r = gradcheck(c.fn, x, {.name = c.name});
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_CASE("op table: covers every differentiable op of ops.h and nn_ops.h") {
  // The public differentiable ops, plus the mask builders used inside attention lines.
  const std::vector<std::string> required = {
      "add", "sub", "mul", "div", "pow", "maximum", "minimum", "rsub", "rdiv", "neg", "exp", "log",
      "sqrt", "rsqrt", "abs", "sign", "tanh", "sigmoid", "relu", "gelu", "erf", "sin", "cos", "square",
      "clamp", "where", "masked_fill", "operator+", "operator-", "operator*", "operator/", "sum",
      "mean", "var", "max", "min", "logsumexp", "sum_to", "reshape", "view", "transpose", "t",
      "permute", "unsqueeze", "squeeze", "expand", "slice", "select", "narrow", "cat", "stack",
      "split", "chunk", "contiguous", "flatten", "clone", "to", "index_select", "gather", "embedding",
      "matmul", "linear", "softmax", "log_softmax", "scaled_dot_product_attention", "causal_mask",
      "padding_mask", "additive_mask", "layer_norm", "dropout", "cross_entropy", "nll_loss",
      "mse_loss"};
  std::set<std::string> tested, mentioned;
  for (const OpCase& c : op_table()) {
    tested.insert(first_word(c.name));
    for (auto& w : words(c.name)) mentioned.insert(w);
  }
  for (const auto& op : required) CHECK_MESSAGE(mentioned.count(op), "no op table line for ", op);
  for (const auto& op : tested)
    CHECK_MESSAGE(std::find(required.begin(), required.end(), op) != required.end(),
                  "op table line for ", op, " which is not in the required list");
  // Every required op but the three mask builders leads a line of its own.
  CHECK(tested.size() == required.size() - 3);
}

// ---- hand-computed values -------------------------------------------------------------
TEST_CASE("softmax and log_softmax of [0, ln 2]") {
  // exp: [1, 2], sum 3 -> softmax [1/3, 2/3]; log_softmax [-ln 3, ln 2 - ln 3].
  Tensor x = f64({0.0, std::log(2.0)});
  CHECK(allclose(softmax(x, 0), f64({1.0 / 3, 2.0 / 3})));
  CHECK(allclose(log_softmax(x, 0), f64({-std::log(3.0), std::log(2.0) - std::log(3.0)})));
  // Stable: adding 1000 changes nothing.
  CHECK(allclose(softmax(x + 1000.0, 0), f64({1.0 / 3, 2.0 / 3})));
}

TEST_CASE("sum_to undoes broadcasting") {
  // [[1, 2, 3], [4, 5, 6]]: columns sum to [5, 7, 9], rows to [6, 15].
  Tensor g = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(allclose(sum_to(g, {3}), f64({5, 7, 9})));
  CHECK(allclose(sum_to(g, {1, 3}), f64({5, 7, 9}, {1, 3})));
  CHECK(allclose(sum_to(g, {2, 1}), f64({6, 15}, {2, 1})));
  CHECK(allclose(sum_to(g, {}), f64({21}, {})));
  CHECK(allclose(sum_to(g, {2, 3}), g));
}

TEST_CASE("broadcast gradients are summed back: d/da sum(a * b) for a [3,1], b [1,4]") {
  // d/da_i = sum_j b_j = 1 + 2 + 3 + 4 = 10;  d/db_j = sum_i a_i = 1 + 2 + 3 = 6
  Tensor a = leaf({1, 2, 3}, {3, 1}), b = leaf({1, 2, 3, 4}, {1, 4});
  (a * b).sum().backward();
  CHECK(allclose(a.grad(), f64({10, 10, 10}, {3, 1})));
  CHECK(allclose(b.grad(), f64({6, 6, 6, 6}, {1, 4})));
}

TEST_CASE("var, logsumexp, matmul, layer_norm and gelu by hand") {
  // [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5.
  Tensor x = f64({1, 2, 3, 4});
  CHECK(var(x).item<double>() == doctest::Approx(5.0 / 3));
  CHECK(var(x, {}, 0).item<double>() == doctest::Approx(5.0 / 4));
  // logsumexp([0, ln 3]) = ln(1 + 3) = ln 4
  CHECK(logsumexp(f64({0.0, std::log(3.0)}), {0}).item<double>() == doctest::Approx(std::log(4.0)));
  // [[1, 2], [3, 4]] @ [5, 6] = [1*5 + 2*6, 3*5 + 4*6] = [17, 39]
  CHECK(allclose(matmul(f64({1, 2, 3, 4}, {2, 2}), f64({5, 6})), f64({17, 39})));
  // [1, 2, 3]: mean 2, biased var 2/3 -> (x - 2) / sqrt(2/3 + 1e-5) ~ [-1.2247, 0, 1.2247]
  double s = 1.0 / std::sqrt(2.0 / 3 + 1e-5);
  CHECK(allclose(layer_norm(f64({1, 2, 3}, {1, 3}), {3}), f64({-s, 0, s}, {1, 3})));
  // gelu(1) = 0.5 (1 + erf(1/sqrt 2)) = 0.841345; the tanh form gives 0.841192.
  CHECK(gelu(f64({1.0})).item<double>() == doctest::Approx(0.8413447).epsilon(1e-6));
  CHECK(gelu(f64({1.0}), GeluApprox::tanh).item<double>() == doctest::Approx(0.8411920).epsilon(1e-6));
  // max/min values and their indices: the gradient goes to the arg element.
  Tensor m = leaf({3, 9, 1, 4, 0, 7}, {2, 3});
  auto [vals, idx] = max(m, 1);
  CHECK(allclose(vals, f64({9, 7})));
  CHECK(idx.to_vector<int64_t>() == std::vector<int64_t>{1, 2});
  vals.sum().backward();
  CHECK(allclose(m.grad(), f64({0, 1, 0, 0, 0, 1}, {2, 3})));
}

TEST_CASE("cross_entropy by hand") {
  // logits [0, ln 2, ln 3]: exp [1, 2, 3], sum 6 -> p = [1/6, 1/3, 1/2].
  Tensor z = f64({0.0, std::log(2.0), std::log(3.0)}, {1, 3});
  Tensor t = i64({2}, {1});
  // -log p_2 = ln 2
  CHECK(cross_entropy(z, t).item<double>() == doctest::Approx(std::log(2.0)));
  // smoothing 0.3: 0.7 * ln 2 + 0.3 / 3 * (ln 6 + ln 3 + ln 2)
  double want = 0.7 * std::log(2.0) + 0.1 * (std::log(6.0) + std::log(3.0) + std::log(2.0));
  CHECK(cross_entropy(z, t, {.label_smoothing = 0.3}).item<double>() == doctest::Approx(want));
  // An ignored target drops out of the mean: (ln 2 + ignored) / 1.
  Tensor z2 = cat({z, z}, 0);
  CHECK(cross_entropy(z2, i64({2, -100}, {2})).item<double>() == doctest::Approx(std::log(2.0)));
  // d/dz = p - onehot(2) = [1/6, 1/3, -1/2]
  Tensor zl = z.detach().requires_grad_();
  cross_entropy(zl, t).backward();
  CHECK(allclose(zl.grad(), f64({1.0 / 6, 1.0 / 3, -0.5}, {1, 3})));
}

TEST_CASE("masked_fill and where by hand") {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = masked_fill(x, bools({0, 1}, {2}), -1.0);  // column 1 filled
  CHECK(allclose(y, f64({1, -1, 3, -1}, {2, 2})));
  y.sum().backward();
  CHECK(allclose(x.grad(), f64({1, 0, 1, 0}, {2, 2})));  // filled entries get no gradient
}

// ---- edge cases that must not make NaN --------------------------------------------------
TEST_CASE("softmax of an all -inf row is zeros with zero gradient") {
  // row 0 all -inf (a fully masked query), row 1 ordinary
  Tensor x = leaf({-kInf, -kInf, -kInf, 0.0, std::log(2.0), 0.0}, {2, 3});
  Tensor y = softmax(x, 1);
  CHECK(allclose(y, f64({0, 0, 0, 0.25, 0.5, 0.25}, {2, 3})));
  (y * f64({1, 2, 3, 4, 5, 6}, {2, 3})).sum().backward();
  std::vector<double> g = x.grad().to_vector<double>();
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  CHECK(g[2] == 0.0);
  CHECK(all_finite(x.grad()));
  // row 1: y (g - y.g) with y.g = 0.25*4 + 0.5*5 + 0.25*6 = 5 -> [-0.25, 0, 0.25]
  CHECK(allclose(x.grad().select(0, 1), f64({-0.25, 0, 0.25})));
}

TEST_CASE("log_softmax of an all -inf row is -inf with zero gradient") {
  Tensor x = leaf({-kInf, -kInf, 0.0, 0.0}, {2, 2});
  Tensor y = log_softmax(x, -1);
  std::vector<double> v = y.to_vector<double>();
  CHECK(v[0] == -kInf);
  CHECK(v[1] == -kInf);
  CHECK(v[2] == doctest::Approx(-std::log(2.0)));
  y.backward(ones_like(y));
  std::vector<double> g = x.grad().to_vector<double>();
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  // row 1: g - exp(y) sum(g) = 1 - 0.5 * 2 = 0
  CHECK(g[2] == doctest::Approx(0.0));
  CHECK(all_finite(x.grad()));
}

TEST_CASE("embedding: the padding_idx row gets zero gradient, repeated ids add up") {
  Tensor w = randn({4, 2}, DType::f64).requires_grad_();
  Tensor ids = i64({1, 2, 1, 1, 3, 2}, {2, 3});  // 2 is padding
  Tensor y = embedding(ids, w, 2);
  CHECK(y.shape() == Shape{2, 3, 2});
  // The padding row is still looked up in the forward.
  CHECK(allclose(y.select(0, 0).select(0, 1), w.detach().select(0, 2)));
  y.sum().backward();
  // row 0 unused, row 1 three times, row 2 padding, row 3 once
  CHECK(allclose(w.grad(), f64({0, 0, 3, 3, 0, 0, 1, 1}, {4, 2})));
  CHECK_THROWS_AS(embedding(i64({4}, {1}), w), IndexError);
}

TEST_CASE("scaled_dot_product_attention: a fully masked query row gives zeros and finite grads") {
  Generator rng(3);
  Tensor q = randn({2, 3, 2}, DType::f64, &rng).requires_grad_();
  Tensor k = randn({2, 4, 2}, DType::f64, &rng).requires_grad_();
  Tensor v = randn({2, 4, 3}, DType::f64, &rng).requires_grad_();
  Tensor m = bools({1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4});  // query 1 sees nothing
  auto [out, w] = scaled_dot_product_attention(q, k, v, with_mask(m, /*need_weights=*/true));
  CHECK(allclose(out.select(1, 1), zeros({2, 3}, DType::f64)));
  CHECK(allclose(w.select(1, 1), zeros({2, 4}, DType::f64)));
  CHECK(all_finite(out));
  (out * out).sum().backward();
  for (const Tensor& t : {q, k, v}) {
    REQUIRE(t.grad().defined());
    CHECK(all_finite(t.grad()));
  }
  CHECK(allclose(q.grad().select(1, 1), zeros({2, 2}, DType::f64)));  // no path from query 1

  // The same with an all -inf float mask row.
  Tensor fm = additive_mask(m, DType::f64);
  Tensor out2 = scaled_dot_product_attention(q, k, v, with_mask(fm)).first;
  CHECK(allclose(out2, out.detach()));
}

TEST_CASE("scaled_dot_product_attention with one key returns its value") {
  // One key: softmax over a single score is 1, so every query row is v.
  Tensor q = f64({1, 2, 3, 4}, {2, 2}), k = f64({5, 6}, {1, 2}), v = f64({7, 8, 9}, {1, 3});
  Tensor out = scaled_dot_product_attention(q, k, v).first;
  CHECK(allclose(out, f64({7, 8, 9, 7, 8, 9}, {2, 3})));
}
