// Grouped-query attention in scaled_dot_product_attention (enable_gqa) and the causal
// variants: the fused kernel against the composite path (values and every gradient,
// float64) for g in {h, h/2, 1} with bool, float and causal masks; both paths against
// K/V repeated over the heads; upper_left / lower_right against explicit masks; a
// lower_right cached step against the last row of full causal attention; errors.
// Legend: B batch, h query heads, g key/value heads, L queries, S keys, d head dim.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include "attograd/detail/attention.h"  // sdpa_causal_and_mask: causal with attn_mask, the modules' entry

#include "test_util.h"

#include <cmath>
#include <string>
#include <tuple>

using namespace ag;

using test_util::contains;
using test_util::error_of;
using test_util::max_abs_diff;

namespace {

// k (B, g, S, d) -> (B, h, S, d), each head repeated h/g times (torch.repeat_interleave).
Tensor repeat_heads(const Tensor& k, int64_t h) {
  const int64_t B = k.size(0), g = k.size(1), S = k.size(2), d = k.size(3);
  return k.unsqueeze(2).expand({B, g, h / g, S, d}).reshape({B, h, S, d});
}

// 0 none, 1 bool (L, S) with query 1 seeing no key, 2 float (B, 1, L, S) with -inf.
Tensor make_mask(int kind, int64_t B, int64_t L, int64_t S, Generator& gen) {
  if (kind == 0) return {};
  Tensor r = rand({B, 1, L, S}, DType::f64, &gen);
  Tensor allowed = gt(r, 0.3);
  if (kind == 1) {
    Tensor m = allowed.select(0, 0).select(0, 0).clone();  // (L, S)
    m.select(0, 1).fill_(0.0);
    return m;
  }
  return where(allowed, r, -INFINITY);
}

struct Run {
  Tensor out, dq, dk, dv;
};

// Output and the gradients of sum(out * up) with respect to q, k, v; with repeat > 0
// attention runs on K/V repeated to `repeat` heads (the gradient still goes to k, v).
Run run(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& o, const Tensor& up, int64_t repeat = 0) {
  Tensor out = repeat > 0
                   ? ag::detail::sdpa_causal_and_mask(q, repeat_heads(k, repeat), repeat_heads(v, repeat), o).first
                   : ag::detail::sdpa_causal_and_mask(q, k, v, o).first;
  auto gr = grad({sum(out * up)}, {q, k, v});
  return {out, gr[0], gr[1], gr[2]};
}

}  // namespace

TEST_CASE("enable_gqa: fused == composite == repeated K/V, values and every gradient") {
  const int64_t B = 2, h = 4, d = 4, dv = 3;
  struct Case {
    int64_t L, S;
    int mask;
    bool causal;
    CausalVariant variant;
  };
  const Case cases[] = {
      {5, 7, 0, false, CausalVariant::upper_left},  {5, 7, 1, false, CausalVariant::upper_left},
      {6, 9, 2, false, CausalVariant::upper_left},  {7, 7, 0, true, CausalVariant::upper_left},
      {4, 9, 0, true, CausalVariant::lower_right},  {70, 90, 2, true, CausalVariant::lower_right},
      {66, 80, 1, true, CausalVariant::upper_left},
  };
  for (int64_t g : {h, h / 2, int64_t(1)})
    for (const auto& c : cases) {
      INFO("g = ", g, ", L = ", c.L, ", S = ", c.S, ", mask ", c.mask, ", causal ", c.causal, ", variant ",
           int(c.variant));
      Generator gen(21);
      Tensor q = randn({B, h, c.L, d}, DType::f64, &gen).requires_grad_();
      Tensor k = randn({B, g, c.S, d}, DType::f64, &gen).requires_grad_();
      Tensor v = randn({B, g, c.S, dv}, DType::f64, &gen).requires_grad_();
      Tensor up = randn({B, h, c.L, dv}, DType::f64, &gen);
      SdpaOptions o;
      o.attn_mask = make_mask(c.mask, B, c.L, c.S, gen);
      o.causal = c.causal;
      o.causal_variant = c.variant;
      o.enable_gqa = true;
      SdpaOptions composite = o;
      composite.fused = false;
      Run f = run(q, k, v, o, up), m = run(q, k, v, composite, up);
      CHECK(f.out.grad_fn()->name == std::string("scaled_dot_product_attention"));  // the fused node
      CHECK(f.dk.shape() == k.shape());
      CHECK(max_abs_diff(f.out, m.out) < 1e-12);
      CHECK(max_abs_diff(f.dq, m.dq) < 1e-12);
      CHECK(max_abs_diff(f.dk, m.dk) < 1e-12);
      CHECK(max_abs_diff(f.dv, m.dv) < 1e-12);
      // The reference: K/V materialized per query head, ordinary attention.
      SdpaOptions plain = composite;
      plain.enable_gqa = false;
      Run r = run(q, k, v, plain, up, h);
      CHECK(max_abs_diff(m.out, r.out) < 1e-12);
      CHECK(max_abs_diff(m.dq, r.dq) < 1e-12);
      CHECK(max_abs_diff(m.dk, r.dk) < 1e-12);  // the chain rule through the repeat sums each group too
      CHECK(max_abs_diff(m.dv, r.dv) < 1e-12);
    }
}

TEST_CASE("enable_gqa: head-split views and double backward through the fused kernel") {
  // (B, L, h*d) and (B, S, g*d) projections split into heads by transposed views.
  Generator gen(3);
  const int64_t B = 2, L = 3, S = 4, h = 4, g = 2, d = 2;
  Tensor x = randn({B, L, h * d}, DType::f64, &gen).requires_grad_();
  Tensor y = randn({B, S, g * d}, DType::f64, &gen).requires_grad_();
  Tensor z = randn({B, S, g * d}, DType::f64, &gen).requires_grad_();
  auto f = [&](bool fused) {
    SdpaOptions o;
    o.enable_gqa = true;
    o.causal = true;
    o.causal_variant = CausalVariant::lower_right;
    o.fused = fused;
    Tensor q = x.view({B, L, h, d}).transpose(1, 2), k = y.view({B, S, g, d}).transpose(1, 2),
           v = z.view({B, S, g, d}).transpose(1, 2);
    Tensor out = scaled_dot_product_attention(q, k, v, o).first;
    // Second derivative: gradient of sum(dL/dx ^ 2), dL/dx through the fused backward.
    auto g1 = grad({sum(out * out)}, {x, y, z}, {}, true, true);
    return grad({sum(g1[0] * g1[0]) + sum(g1[1] * g1[1]) + sum(g1[2] * g1[2])}, {x, y, z});
  };
  auto a = f(true), b = f(false);
  for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(a[i], b[i]) < 1e-12);
}

TEST_CASE("causal variants against explicit masks, L < S and L == S") {
  // lower_right, L 2, S 4: query 0 sees keys 0..2, query 1 sees 0..3.
  Tensor want = ne(Tensor::from_vector<int64_t>({1, 1, 1, 0, 1, 1, 1, 1}, {2, 4}), 0.0);
  CHECK(max_abs_diff(causal_mask(2, 4, CausalVariant::lower_right).to(DType::f64), want.to(DType::f64)) == 0);
  CHECK(max_abs_diff(causal_mask(3, 3, CausalVariant::lower_right).to(DType::f64), causal_mask(3, 3).to(DType::f64)) ==
        0);
  CHECK(max_abs_diff(causal_mask(2, 4, CausalVariant::upper_left).to(DType::f64), causal_mask(2, 4).to(DType::f64)) ==
        0);
  Generator gen(8);
  for (auto sizes : {std::pair<int64_t, int64_t>{3, 6}, {5, 5}, {70, 100}})
    for (CausalVariant var : {CausalVariant::upper_left, CausalVariant::lower_right})
      for (bool fused : {true, false}) {
        // Not a structured binding: clang before 16 cannot capture one (INFO is a lambda).
        const int64_t L = sizes.first, S = sizes.second;
        INFO("L ", L, ", S ", S, ", variant ", int(var), ", fused ", fused);
        Tensor q = randn({2, 2, L, 4}, DType::f64, &gen).requires_grad_();
        Tensor k = randn({2, 2, S, 4}, DType::f64, &gen).requires_grad_();
        Tensor v = randn({2, 2, S, 4}, DType::f64, &gen).requires_grad_();
        Tensor up = randn({2, 2, L, 4}, DType::f64, &gen);
        SdpaOptions o, explicit_mask;
        o.causal = true, o.causal_variant = var, o.fused = fused;
        explicit_mask.attn_mask = causal_mask(L, S, var), explicit_mask.fused = false;
        Run a = run(q, k, v, o, up), b = run(q, k, v, explicit_mask, up);
        CHECK(max_abs_diff(a.out, b.out) < 1e-12);
        CHECK(max_abs_diff(a.dq, b.dq) < 1e-12);
        CHECK(max_abs_diff(a.dk, b.dk) < 1e-12);
        CHECK(max_abs_diff(a.dv, b.dv) < 1e-12);
      }
}

TEST_CASE("a lower_right cached step equals the last row of full causal attention") {
  Generator gen(4);
  const int64_t n = 9;
  Tensor q = randn({2, 4, n, 4}, DType::f64, &gen), k = randn({2, 2, n, 4}, DType::f64, &gen),
         v = randn({2, 2, n, 4}, DType::f64, &gen);
  SdpaOptions full;
  full.causal = true, full.enable_gqa = true;
  Tensor want = scaled_dot_product_attention(q, k, v, full).first.narrow(2, n - 1, 1);  // (B, h, 1, d)
  for (bool fused : {true, false}) {
    SdpaOptions step = full;
    step.causal_variant = CausalVariant::lower_right, step.fused = fused;
    Tensor got = scaled_dot_product_attention(q.narrow(2, n - 1, 1), k, v, step).first;
    CHECK(max_abs_diff(got, want) < 1e-12);
    // upper_left is the trap the variant fixes: the new query would see only key 0.
    step.causal_variant = CausalVariant::upper_left;
    Tensor wrong = scaled_dot_product_attention(q.narrow(2, n - 1, 1), k, v, step).first;
    CHECK(max_abs_diff(wrong, want) > 1e-3);
  }
  // lower_right with L > S: the first L - S queries see no key and give zeros.
  SdpaOptions o;
  o.causal = true, o.causal_variant = CausalVariant::lower_right;
  Tensor out = scaled_dot_product_attention(randn({1, 5, 2}, DType::f64, &gen), randn({1, 3, 2}, DType::f64, &gen),
                                            randn({1, 3, 2}, DType::f64, &gen), o)
                   .first;
  CHECK(max_abs_diff(out.narrow(1, 0, 2), zeros({1, 2, 2}, DType::f64)) == 0);
}

TEST_CASE("enable_gqa: shape errors name the shapes") {
  Tensor q = zeros({2, 4, 3, 2}, DType::f64), k = zeros({2, 2, 5, 2}, DType::f64), v = zeros({2, 2, 5, 2}, DType::f64);
  std::string e = error_of<ShapeError>([&] { scaled_dot_product_attention(q, k, v); });
  CHECK(contains(e, "scaled_dot_product_attention"));
  CHECK(contains(e, "[2, 4, 3, 2]"));
  CHECK(contains(e, "[2, 2, 5, 2]"));
  CHECK(contains(e, "enable_gqa"));
  SdpaOptions o;
  o.enable_gqa = true;
  Tensor k3 = zeros({2, 3, 5, 2}, DType::f64);
  e = error_of<ShapeError>([&] { scaled_dot_product_attention(q, k3, k3, o); });
  CHECK(contains(e, "multiple of the key/value heads"));
  CHECK(contains(e, "[2, 3, 5, 2]"));
  e = error_of<ShapeError>([&] { scaled_dot_product_attention(q, k, k3, o); });
  CHECK(contains(e, "value [2, 3, 5, 2]"));
  e = error_of<ShapeError>([&] { scaled_dot_product_attention(zeros({3, 2}), zeros({5, 2}), zeros({5, 2}), o); });
  CHECK(contains(e, "needs a head dim"));
}
