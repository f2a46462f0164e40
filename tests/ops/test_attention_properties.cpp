// The properties of attention listed in nn/ATTENTION.md, checked numerically on random f64
// inputs: ag::scaled_dot_product_attention for Attention and MAttn_B, and a small
// functional multi-head self-attention (no biases) for the self-attention ones.
// The note writes MAttn_B as softmax((QK^T + B) / sqrt(d)); the library adds the mask
// after scaling. Every property below holds for either convention (B is -inf, or any
// fixed finite matrix on both sides of the equation).
// Legend: B batch, h heads, L query length, S key length, d head dim, dv value dim,
// E embed dim.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

constexpr double kTol = 1e-12;
const double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t B = 2, H = 3, L = 5, S = 6, D = 4, DV = 3;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE_MESSAGE(a.shape() == b.shape(), "shapes ", a.shape(), " and ", b.shape(), " differ");
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return std::isnan(m) ? kInf : m;
}

bool all_finite(const Tensor& t) { return ag::all(ag::isfinite(t)).item<bool>(); }

Tensor idx(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(v); }

// 0, 1, ..., n-1 without i.
std::vector<int64_t> all_but(int64_t n, int64_t i) {
  std::vector<int64_t> v;
  for (int64_t j = 0; j < n; ++j)
    if (j != i) v.push_back(j);
  return v;
}

// A random permutation of 0..n-1 that moves at least one element.
std::vector<int64_t> random_perm(int64_t n, ag::Generator& gen) {
  std::vector<int64_t> p(size_t(n), 0);
  std::iota(p.begin(), p.end(), 0);
  do {
    for (int64_t i = n - 1; i > 0; --i) std::swap(p[size_t(i)], p[size_t(gen.integer(0, i + 1))]);
  } while (std::is_sorted(p.begin(), p.end()));
  return p;
}

Tensor attn(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = {}) {
  ag::SdpaOptions opt;
  opt.attn_mask = mask;
  return ag::scaled_dot_product_attention(q, k, v, opt).first;
}

// x with row s (on dim -2) moved to fresh random content; the other rows unchanged.
Tensor change_row(const Tensor& x, int64_t s, ag::Generator& gen) {
  const int64_t n = x.size(x.dim() - 2);
  std::vector<double> onehot(size_t(n), 0.0);
  onehot[size_t(s)] = 1.0;
  Tensor e = Tensor::from_vector<double>(onehot, {n, 1});  // (n, 1)
  return x + ag::randn(x.shape(), DType::f64, &gen) * e;
}

// ---- multi-head self-attention, functional, without biases ----
struct MhsaWeights {
  Tensor w_q, w_k, w_v, w_o;  // (E, E) each, [d_in, d_out] as in nn/ATTENTION.md (Q = X W_q)
};

MhsaWeights random_weights(int64_t E, ag::Generator& gen) {
  const double s = 1.0 / std::sqrt(double(E));
  return {ag::randn({E, E}, DType::f64, &gen) * s, ag::randn({E, E}, DType::f64, &gen) * s,
          ag::randn({E, E}, DType::f64, &gen) * s, ag::randn({E, E}, DType::f64, &gen) * s};
}

// x (B, N, E) -> (B, N, E); mask broadcastable to (B, h, N, N).
Tensor mhsa(const Tensor& x, const MhsaWeights& w, int64_t h, const Tensor& mask = {}) {
  const int64_t b = x.size(0), n = x.size(1), E = x.size(2), d = E / h;
  auto split = [&](const Tensor& t) {  // (B, N, E) -> (B, h, N, d)
    return ag::transpose(ag::reshape(t, {b, n, h, d}), 1, 2);
  };
  Tensor o = attn(split(ag::matmul(x, w.w_q)), split(ag::matmul(x, w.w_k)), split(ag::matmul(x, w.w_v)),
                  mask);                                                     // (B, h, N, d)
  return ag::matmul(ag::reshape(ag::transpose(o, 1, 2), {b, n, E}), w.w_o);  // (B, N, E)
}

struct Qkv {
  Tensor q, k, v;  // (B, h, L, d), (B, h, S, d), (B, h, S, dv)
};

Qkv random_qkv(ag::Generator& gen) {
  return {ag::randn({B, H, L, D}, DType::f64, &gen), ag::randn({B, H, S, D}, DType::f64, &gen),
          ag::randn({B, H, S, DV}, DType::f64, &gen)};
}

}  // namespace

// nn/ATTENTION.md, property 1 (query deletion):
//   Attention(Q, K, V)^(i) = Attention(Q^(i), K, V)
// and with a mask: MAttn_B(Q, K, V)^(i) = MAttn_{B^(i)}(Q^(i), K, V).
TEST_CASE("properties: query-deletion equivariance") {
  ag::Generator gen(1);
  const Qkv x = random_qkv(gen);
  Tensor bias = ag::randn({L, S}, DType::f64, &gen);  // a finite float mask B
  bias = ag::masked_fill(bias, ag::logical_not(ag::causal_mask(L, S)), -kInf);
  const Tensor full = attn(x.q, x.k, x.v), full_m = attn(x.q, x.k, x.v, bias);  // (B, h, L, dv)
  for (int64_t i = 0; i < L; ++i) {
    CAPTURE(i);
    const Tensor keep = idx(all_but(L, i));
    Tensor q_i = ag::index_select(x.q, 2, keep);  // (B, h, L-1, d)
    CHECK(max_abs_diff(attn(q_i, x.k, x.v), ag::index_select(full, 2, keep)) <= kTol);
    CHECK(max_abs_diff(attn(q_i, x.k, x.v, ag::index_select(bias, 0, keep)), ag::index_select(full_m, 2, keep)) <=
          kTol);
  }
}

// nn/ATTENTION.md, property 2 (key/value permutation invariance):
//   Attention(Q, pi_r(K), pi_r(V)) = Attention(Q, K, V)
// and permutation equivariance in the queries:
//   Attention(pi_r(Q), sigma_r(K), sigma_r(V)) = pi_r(Attention(Q, K, V)).
TEST_CASE("properties: key-value permutation invariance and permutation equivariance") {
  ag::Generator gen(2);
  const Qkv x = random_qkv(gen);
  const Tensor out = attn(x.q, x.k, x.v);  // (B, h, L, dv)
  for (int trial = 0; trial < 4; ++trial) {
    CAPTURE(trial);
    const Tensor sigma = idx(random_perm(S, gen)), pi = idx(random_perm(L, gen));
    Tensor k_s = ag::index_select(x.k, 2, sigma), v_s = ag::index_select(x.v, 2, sigma);
    CHECK(max_abs_diff(attn(x.q, k_s, v_s), out) <= kTol);
    CHECK(max_abs_diff(attn(ag::index_select(x.q, 2, pi), k_s, v_s), ag::index_select(out, 2, pi)) <= kTol);
    // Permuting keys without their values does change the output (the test has teeth).
    CHECK(max_abs_diff(attn(x.q, k_s, x.v), out) > 1e-3);
  }
}

// nn/ATTENTION.md, property 3 (permutation equivariance of single- and multi-head
// self-attention; projections without bias, no mask):
//   MHSAttn(pi_r(X)) = pi_r(MHSAttn(X)).
TEST_CASE("properties: permutation equivariance of multi-head self-attention") {
  ag::Generator gen(3);
  const int64_t E = 8, N = 7;
  for (int64_t h : {1, 2, 4}) {
    CAPTURE(h);
    const MhsaWeights w = random_weights(E, gen);
    const Tensor x = ag::randn({B, N, E}, DType::f64, &gen);  // (B, N, E)
    const Tensor out = mhsa(x, w, h);                         // (B, N, E)
    for (int trial = 0; trial < 3; ++trial) {
      const Tensor pi = idx(random_perm(N, gen));
      CHECK(max_abs_diff(mhsa(ag::index_select(x, 1, pi), w, h), ag::index_select(out, 1, pi)) <= kTol);
    }
  }
}

// nn/ATTENTION.md, property 4 (masking removes a key):
// if b_{i,s} = -inf, the output o_i does not depend on k_s or v_s. Checked with a bool
// mask (false at (i, s)) and a float mask (-inf at (i, s), finite elsewhere).
TEST_CASE("properties: a masked entry removes its key's and value's influence") {
  ag::Generator gen(4);
  const Qkv x = random_qkv(gen);
  const int64_t i = 2, s = 3;
  // (L, S) bool, false only at (i, s); broadcast over B and heads
  const Tensor bool_mask = ag::ne(ag::arange(double(L * S)).view({L, S}), double(i * S + s));
  Tensor float_mask = ag::randn({L, S}, DType::f64, &gen);
  float_mask = ag::masked_fill(float_mask, ag::logical_not(bool_mask), -kInf);

  const Tensor k2 = change_row(x.k, s, gen), v2 = change_row(x.v, s, gen);
  for (const Tensor& mask : {bool_mask, float_mask}) {
    CAPTURE(mask.dtype());
    const Tensor before = attn(x.q, x.k, x.v, mask), after = attn(x.q, k2, v2, mask);  // (B, h, L, dv)
    CHECK(max_abs_diff(ag::select(before, 2, i), ag::select(after, 2, i)) <= kTol);
    // The other rows see key s, so they change.
    CHECK(max_abs_diff(ag::select(before, 2, i + 1), ag::select(after, 2, i + 1)) > 1e-3);
  }
}

// nn/ATTENTION.md, property 5 (masks that agree across heads remove a position in
// multi-head self-attention): if b_{l,i,s} = -inf for every
// head l and some s != i, then o_i does not depend on x_s.
TEST_CASE("properties: masking key s in every head makes self-attention row i independent of x_s") {
  ag::Generator gen(5);
  const int64_t E = 8, N = 6, h = 2, i = 4, s = 1;
  const MhsaWeights w = random_weights(E, gen);
  const Tensor x = ag::randn({B, N, E}, DType::f64, &gen);
  // (N, N) bool, false only at (i, s); broadcast over B and heads
  const Tensor mask = ag::ne(ag::arange(double(N * N)).view({N, N}), double(i * N + s));
  const Tensor before = mhsa(x, w, h, mask), after = mhsa(change_row(x, s, gen), w, h, mask);  // (B, N, E)
  CHECK(max_abs_diff(ag::select(before, 1, i), ag::select(after, 1, i)) <= kTol);
  CHECK(max_abs_diff(ag::select(before, 1, 0), ag::select(after, 1, 0)) > 1e-3);
}

// nn/ATTENTION.md, property 6 (key/value deletion): if b_{i,s} = -inf for every query i,
//   MAttn_B(Q, K, V) = MAttn_{B^[s]}(Q, K^(s), V^(s))
// (B^[s]: column s deleted; K^(s), V^(s): row s deleted).
TEST_CASE("properties: key-value deletion equals masking that key") {
  ag::Generator gen(6);
  const Qkv x = random_qkv(gen);
  for (int64_t s = 0; s < S; ++s) {
    CAPTURE(s);
    const Tensor keep = idx(all_but(S, s));
    Tensor col_s = ag::eq(ag::arange(double(S)).view({1, S}), double(s));  // (1, S)
    // Float mask: finite random entries, -inf in column s.
    Tensor fm = ag::masked_fill(ag::randn({L, S}, DType::f64, &gen), col_s, -kInf);
    // Bool mask: random, column s false (a row left with no key gives zeros on both sides).
    Tensor bm = ag::logical_and(ag::gt(ag::rand({B, 1, L, S}, DType::f64, &gen), 0.3), ag::logical_not(col_s));
    Tensor k_s = ag::index_select(x.k, 2, keep), v_s = ag::index_select(x.v, 2, keep);
    CHECK(max_abs_diff(attn(x.q, x.k, x.v, fm), attn(x.q, k_s, v_s, ag::index_select(fm, 1, keep))) <= kTol);
    CHECK(max_abs_diff(attn(x.q, x.k, x.v, bm), attn(x.q, k_s, v_s, ag::index_select(bm, 3, keep))) <= kTol);
  }
}

// nn/ATTENTION.md, property 7 (input deletion): if b_{i,s} = -inf for every i != s,
//   MMHSAttn(X)^(s) = MMHSAttn_{W<s>}(X^(s))   (B^<s>: row and column s deleted).
TEST_CASE("properties: input deletion in masked multi-head self-attention") {
  ag::Generator gen(7);
  const int64_t E = 8, N = 6, h = 2;
  const MhsaWeights w = random_weights(E, gen);
  const Tensor x = ag::randn({B, N, E}, DType::f64, &gen);  // (B, N, E)
  const Tensor causal = ag::causal_mask(N, N);              // (N, N), a mask B that is not all true
  for (int64_t s = 0; s < N; ++s) {
    CAPTURE(s);
    const Tensor keep = idx(all_but(N, s));
    Tensor col_s = ag::eq(ag::arange(double(N)).view({1, N}), double(s));  // (1, N)
    Tensor row_s = ag::eq(ag::arange(double(N)).view({N, 1}), double(s));  // (N, 1)
    // Column s masked for every query but s itself, on top of the causal mask.
    Tensor mask = ag::logical_and(causal, ag::logical_or(ag::logical_not(col_s), row_s));
    Tensor reduced_mask = ag::index_select(ag::index_select(causal, 0, keep), 1, keep);  // B^<s>
    CHECK(max_abs_diff(ag::index_select(mhsa(x, w, h, mask), 1, keep),
                       mhsa(ag::index_select(x, 1, keep), w, h, reduced_mask)) <= kTol);
  }
}

// nn/ATTENTION.md, property 8: not a property of attention itself but the library's rule for the limit it leaves open
// (attograd/ops/attention.h): a query row with every key masked gives a zero output row (PyTorch gives
// NaN) and zero, finite gradients; it contributes nothing to dK and dV, which therefore
// equal those of the same attention with that query deleted.
TEST_CASE("properties: a fully masked query row gives zeros and zero finite gradients") {
  ag::Generator gen(8);
  const Qkv x0 = random_qkv(gen);
  const int64_t i = 1;
  Tensor row_i = ag::eq(ag::arange(double(L)).view({L, 1}), double(i));  // (L, 1)
  Tensor allow = ag::logical_and(ag::gt(ag::rand({L, S}, DType::f64, &gen), 0.2), ag::causal_mask(L, S));
  const Tensor bool_mask = ag::logical_and(allow, ag::logical_not(row_i));  // (L, S), row i all false
  const Tensor float_mask = ag::masked_fill(ag::randn({L, S}, DType::f64, &gen), ag::logical_not(bool_mask), -kInf);
  const Tensor g = ag::randn({B, H, L, DV}, DType::f64, &gen);  // upstream
  const Tensor keep = idx(all_but(L, i));

  for (const Tensor& mask : {bool_mask, float_mask}) {
    CAPTURE(mask.dtype());
    Tensor q = x0.q.clone().requires_grad_(), k = x0.k.clone().requires_grad_(), v = x0.v.clone().requires_grad_();
    ag::SdpaOptions opt;
    opt.attn_mask = mask;
    opt.need_weights = true;
    auto [out, weights] = ag::scaled_dot_product_attention(q, k, v, opt);  // (B, h, L, dv), (B, h, L, S)
    CHECK(all_finite(out));
    CHECK(ag::all(ag::eq(ag::select(out, 2, i), 0.0)).item<bool>());
    CHECK(ag::all(ag::eq(ag::select(weights, 2, i), 0.0)).item<bool>());
    std::vector<Tensor> d = ag::grad({out}, {q, k, v}, {g});
    for (const Tensor& t : d) CHECK(all_finite(t));
    CHECK(ag::all(ag::eq(ag::select(d[0], 2, i), 0.0)).item<bool>());

    // The same attention without query i: same other rows, same dK and dV.
    Tensor q2 = ag::index_select(x0.q, 2, keep).requires_grad_();
    Tensor k2 = x0.k.clone().requires_grad_(), v2 = x0.v.clone().requires_grad_();
    Tensor m2 = ag::index_select(mask, 0, keep);
    Tensor out2 = attn(q2, k2, v2, m2);
    CHECK(max_abs_diff(ag::index_select(out, 2, keep), out2) <= kTol);
    std::vector<Tensor> d2 = ag::grad({out2}, {q2, k2, v2}, {ag::index_select(g, 2, keep)});
    CHECK(max_abs_diff(ag::index_select(d[0], 2, keep), d2[0]) <= kTol);
    CHECK(max_abs_diff(d[1], d2[1]) <= kTol);
    CHECK(max_abs_diff(d[2], d2[2]) <= kTol);
  }
}
