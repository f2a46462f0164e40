// nn::MultiheadAttention: the attention properties of nn/ATTENTION.md at module level
// (permutation equivariance, padded and fully masked keys, add_bias_kv), and the fused
// paths for shared query/key/value tensors against separate ones.
// Legend: B batch, L query length, S key length, E embed dim, h heads, d = E / h.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../mha_test_util.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace ag;
using namespace mha_test;

// ---- the properties of nn/ATTENTION.md at module level -------------------------------------

TEST_CASE("self-attention without a mask is permutation equivariant") {
  const int64_t B = 2, L = 5, E = 8;
  nn::MultiheadAttention mha(8, 2);
  mha->to(DType::f64);
  randomize(*mha, 31);  // with biases: an affine map still commutes with row permutations
  Generator gen(32);
  Tensor x = randn({B, L, E}, DType::f64, &gen);
  Tensor perm = Tensor::from_vector<int64_t>({3, 0, 4, 1, 2});
  Tensor xp = index_select(x, 1, perm);
  nn::AttentionArgs args;
  args.need_weights = true;
  auto [o, w] = mha(x, x, x, args);
  auto [op, wp] = mha(xp, xp, xp, args);
  CHECK(rel_err(op, index_select(o, 1, perm)) <= 1e-13);
  // weights: wp[b, h, i, j] = w[b, h, perm[i], perm[j]]
  CHECK(rel_err(wp, index_select(index_select(w, 2, perm), 3, perm)) <= 1e-13);
  // a causal mask breaks it (the property needs "without a mask")
  nn::AttentionArgs causal;
  causal.causal = true;
  CHECK(rel_err(mha(xp, xp, xp, causal).first, index_select(mha(x, x, x, causal).first, 1, perm)) > 1e-3);
}

TEST_CASE("padded keys have no influence on the outputs of real queries") {
  const int64_t B = 2, L = 3, S = 5, E = 8;
  Generator gen(41);
  Tensor pad = bool_tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 0}, {B, S});  // (B, S) true = real
  Tensor keep = pad.view({B, S, 1});
  nn::AttentionArgs args;
  args.key_keep_mask = pad;
  args.need_weights = true;

  SUBCASE("cross-attention, kdim 5, vdim 7") {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, 4).kdim(5).vdim(7));
    mha->to(DType::f64);
    randomize(*mha, 42);
    Tensor q = randn({B, L, E}, DType::f64, &gen), k = randn({B, S, 5}, DType::f64, &gen),
           v = randn({B, S, 7}, DType::f64, &gen);
    Tensor k2 = where(keep, k, randn({B, S, 5}, DType::f64, &gen) * 10.0);
    Tensor v2 = where(keep, v, randn({B, S, 7}, DType::f64, &gen) * 10.0);
    REQUIRE(rel_err(k2, k) > 0.1);
    auto [o1, w1] = mha(q, k, v, args);
    auto [o2, w2] = mha(q, k2, v2, args);
    CHECK(rel_err(o2, o1) == 0.0);  // -inf scores: exp gives exact zeros
    CHECK(rel_err(w2, w1) == 0.0);
    // and the padded columns get no weight
    CHECK(all(eq(masked_fill(w1, pad.view({B, 1, 1, S}), 0.0), 0.0)).item<bool>());
  }
  SUBCASE("self-attention: padded positions are queries too; real rows ignore them") {
    nn::MultiheadAttention mha(E, 2);
    mha->to(DType::f64);
    randomize(*mha, 43);
    Tensor x = randn({B, S, E}, DType::f64, &gen);
    Tensor x2 = where(keep, x, randn({B, S, E}, DType::f64, &gen) * 10.0);
    Tensor o1 = mha(x, x, x, args).first, o2 = mha(x2, x2, x2, args).first;  // (B, S, E)
    Tensor real1 = masked_fill(o1, logical_not(keep), 0.0), real2 = masked_fill(o2, logical_not(keep), 0.0);
    CHECK(rel_err(real2, real1) == 0.0);
    CHECK(rel_err(o2, o1) > 0.01);  // the padded rows themselves do change

    // the gradient of the real rows' outputs reaches no padded position
    Tensor xg = grad_input(x);
    Tensor o = mha(xg, xg, xg, args).first;
    (o * keep.to(DType::f64)).sum().backward();
    Tensor g = xg.grad();
    CHECK(all(eq(masked_fill(g, keep, 0.0), 0.0)).item<bool>());
    CHECK(any(ne(masked_fill(g, logical_not(keep), 0.0), 0.0)).item<bool>());
  }
}

TEST_CASE("a query whose keys are all masked outputs out_proj.bias, with finite zero gradients") {
  const int64_t B = 2, L = 3, S = 4, E = 8;
  nn::MultiheadAttention mha(E, 2);
  mha->to(DType::f64);
  randomize(*mha, 51);
  Generator gen(52);
  Tensor q = grad_input(randn({B, L, E}, DType::f64, &gen)), k = grad_input(randn({B, S, E}, DType::f64, &gen)),
         v = grad_input(randn({B, S, E}, DType::f64, &gen));
  nn::AttentionArgs args;
  args.need_weights = true;
  args.attn_mask = logical_not(bool_tensor({1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1}, {L, S}));  // query 1 sees nothing
  args.key_keep_mask = bool_tensor({1, 1, 1, 1, 0, 0, 0, 0}, {B, S});                       // batch 1: all padding
  auto [out, w] = mha(q, k, v, args);
  Tensor bias = mha->out_proj->bias.detach();
  CHECK(rel_err(out.select(0, 0).select(0, 1), bias) <= 1e-15);
  for (int64_t i = 0; i < L; ++i) CHECK(rel_err(out.select(0, 1).select(0, i), bias) <= 1e-15);
  CHECK(rel_err(out.select(0, 0).select(0, 0), bias) > 0.01);  // a normal row
  CHECK(all(eq(w.select(0, 1), 0.0)).item<bool>());
  CHECK(all(eq(w.select(0, 0).select(1, 1), 0.0)).item<bool>());
  CHECK(all(isfinite(out)).item<bool>());

  Tensor up = randn({B, L, E}, DType::f64, &gen);
  (out * up).sum().backward();
  for (const Tensor& g : {q.grad(), k.grad(), v.grad()}) CHECK(all(isfinite(g)).item<bool>());
  for (auto& n_p : mha->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO(n);
    CHECK(all(isfinite(p.grad())).item<bool>());
  }
  CHECK(all(eq(q.grad().select(0, 0).select(0, 1), 0.0)).item<bool>());  // the empty row's query
  CHECK(all(eq(q.grad().select(0, 1), 0.0)).item<bool>());
  CHECK(all(eq(k.grad().select(0, 1), 0.0)).item<bool>());
  CHECK(all(eq(v.grad().select(0, 1), 0.0)).item<bool>());
  // out_proj.bias collects the upstream of every row, empty or not: sum over (B, L)
  CHECK(rel_err(mha->out_proj->bias.grad(), up.sum({0, 1})) <= 1e-14);
}

TEST_CASE("add_bias_kv: one more key and value, always visible") {
  const int64_t B = 2, L = 3, S = 4, E = 8, h = 2;
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h).add_bias_kv(true));
  CHECK(mha->bias_k.shape() == Shape({1, 1, E}));
  CHECK(mha->bias_v.shape() == Shape({1, 1, E}));
  auto params = mha->named_parameters();
  std::vector<std::string> names;
  for (auto& [n, p] : params) names.push_back(n);
  CHECK(names == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                          "out_proj.bias"});
  mha->to(DType::f64);
  randomize(*mha, 61);
  Generator gen(62);
  Tensor q = randn({B, L, E}, DType::f64, &gen), kv = randn({B, S, E}, DType::f64, &gen);
  nn::AttentionArgs args;
  args.need_weights = true;
  auto [out, w] = mha(q, kv, kv, args);
  CHECK(out.shape() == Shape({B, L, E}));
  CHECK(w.shape() == Shape({B, h, L, S + 1}));
  CHECK(rel_err(w.sum({-1}), ones({B, h, L}, DType::f64)) <= 1e-14);

  // Every real key padded: only the bias key is left, so each head's output is its
  // slice of bias_v and the module output is out_proj(bias_v).
  args.key_keep_mask = bool_tensor({1, 1, 0, 0, 0, 0, 0, 0}, {B, S});
  args.attn_mask = logical_not(bool_tensor({1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0}, {L, S}));
  args.causal = true;
  auto [out2, w2] = mha(q, kv, kv, args);
  CHECK(w2.shape() == Shape({B, h, L, S + 1}));
  CHECK(all(eq(w2.select(0, 1).narrow(-1, S, 1), 1.0)).item<bool>());
  CHECK(rel_err(w2.select(0, 0).select(1, 2).narrow(-1, S, 1), ones({h, 1}, DType::f64)) == 0.0);  // row 2
  Tensor want = linear(mha->bias_v.view({E}), mha->out_proj->weight, mha->out_proj->bias).detach();
  for (int64_t i = 0; i < L; ++i) CHECK(rel_err(out2.select(0, 1).select(0, i), want) <= 1e-14);
  CHECK(all(isfinite(out2)).item<bool>());

  square(out2).sum().backward();
  CHECK(mha->bias_k.grad().defined());
  CHECK(any(ne(mha->bias_v.grad(), 0.0)).item<bool>());
}

TEST_CASE("shared query/key/value tensors take the fused paths and give the same results") {
  const int64_t B = 2, L = 4, E = 8;
  nn::MultiheadAttention mha(E, 2);
  mha->to(DType::f64);
  randomize(*mha, 91);
  Generator gen(92);
  Tensor x = randn({B, L, E}, DType::f64, &gen), y = randn({B, L, E}, DType::f64, &gen);
  nn::AttentionArgs args;
  args.causal = true;
  args.need_weights = true;
  // q = k = v (one (B, L, 3E) GEMM) against three distinct copies
  Tensor x1 = grad_input(x), x2 = grad_input(x), x3 = grad_input(x), x4 = grad_input(x);
  auto [o1, w1] = mha(x1, x1, x1, args);
  auto [o2, w2] = mha(x2, x3, x4, args);
  CHECK(rel_err(o1, o2) <= 1e-14);
  CHECK(rel_err(w1, w2) <= 1e-14);
  square(o1).sum().backward();
  square(o2).sum().backward();
  CHECK(rel_err(x1.grad(), x2.grad() + x3.grad() + x4.grad()) <= 1e-13);
  // k = v (one (B, S, 2E) GEMM) against two copies
  Tensor y1 = grad_input(y), y2 = grad_input(y), y3 = grad_input(y);
  Tensor p1 = mha(x, y1, y1, args).first, p2 = mha(x, y2, y3, args).first;
  CHECK(rel_err(p1, p2) <= 1e-14);
  square(p1).sum().backward();
  square(p2).sum().backward();
  CHECK(rel_err(y1.grad(), y2.grad() + y3.grad()) <= 1e-13);
}

TEST_CASE("attn_mask of PyTorch's 3-D form (B * heads, L, S): one mask per batch entry and head") {
  manual_seed(11);
  const int64_t B = 2, h = 2, L = 3, S = 4, E = 8;
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h));
  const Tensor x = randn({B, L, E}), kv = randn({B, S, E});
  // (B * h, L, S), batch-major: entry b * h + head hides key (b + head) % S
  Tensor m3 = zeros({B * h, L, S}, DType::b8);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t head = 0; head < h; ++head) m3.index_put_({b * h + head, indexing::Slice(), (b + head) % S}, true);
  nn::AttentionArgs a3, a4;
  a3.attn_mask = m3;
  a4.attn_mask = m3.reshape({B, h, L, S});
  a3.need_weights = a4.need_weights = true;
  auto [y3, w3] = mha->forward(x, kv, kv, a3);
  auto [y4, w4] = mha->forward(x, kv, kv, a4);
  CHECK(max(abs(y3 - y4)).item<double>() == 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t head = 0; head < h; ++head) {
      CAPTURE(b);
      CAPTURE(head);
      // the hidden key gets no weight in that batch entry and head only
      CHECK(max(w3.select(0, b).select(0, head).select(1, (b + head) % S)).item<double>() == 0);
      CHECK(min(w3.select(0, b).select(0, head).select(1, (b + head + 1) % S)).item<double>() > 0);
    }
  nn::AttentionArgs bad;
  bad.attn_mask = zeros({3, L, S}, DType::b8);  // neither B * h nor broadcastable
  CHECK_THROWS_AS(mha->forward(x, kv, kv, bad), ShapeError);
}

TEST_CASE("add_zero_attn: a zero key and value every query may attend to, after bias_k / bias_v") {
  // PyTorch's multi_head_attention_forward: k, v (B h, S, d) get a zero row each, the masks
  // a column of "allowed"; the output is attention over the S + 1 (S + 2 with add_bias_kv) keys.
  manual_seed(12);
  set_default_dtype(DType::f64);
  const int64_t B = 2, h = 2, L = 3, S = 4, E = 4, d = E / h;
  for (bool bias_kv : {false, true}) {
    CAPTURE(bias_kv);
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h).add_zero_attn(true).add_bias_kv(bias_kv));
    const Tensor x = randn({B, L, E}), kv = randn({B, S, E});
    nn::AttentionArgs args;
    args.causal = true;  // the appended keys stay visible to every query
    args.need_weights = true;
    auto [y, w] = mha->forward(x, kv, kv, args);
    CHECK(w.shape() == Shape{B, h, L, S + 1 + (bias_kv ? 1 : 0)});
    // by hand: the projections, the extra rows, causal over the S real keys only
    const Tensor Wq = mha->in_proj_weight.narrow(0, 0, E), Wk = mha->in_proj_weight.narrow(0, E, E),
                 Wv = mha->in_proj_weight.narrow(0, 2 * E, E);
    auto heads = [&](const Tensor& t) { return t.reshape({B, -1, h, d}).transpose(1, 2); };
    Tensor k = linear(kv, Wk, mha->in_proj_bias.narrow(0, E, E)),
           v = linear(kv, Wv, mha->in_proj_bias.narrow(0, 2 * E, E));
    if (bias_kv) k = cat({k, mha->bias_k.expand({B, 1, E})}, 1), v = cat({v, mha->bias_v.expand({B, 1, E})}, 1);
    k = cat({k, zeros({B, 1, E})}, 1), v = cat({v, zeros({B, 1, E})}, 1);
    const int64_t S2 = k.size(1);
    Tensor allowed = cat({causal_mask(L, S), ones({L, S2 - S}, DType::b8)}, 1);
    const Tensor q = heads(linear(x, Wq, mha->in_proj_bias.narrow(0, 0, E)));
    Tensor scores = matmul(q, heads(k).transpose(-1, -2)) / std::sqrt(double(d));
    scores = where(allowed, scores, -std::numeric_limits<double>::infinity());
    const Tensor p = softmax(scores, -1);
    const Tensor o = matmul(p, heads(v)).transpose(1, 2).reshape({B, L, E});
    CHECK(max(abs(w - p)).item<double>() < 1e-12);
    CHECK(max(abs(y - mha->out_proj(o))).item<double>() < 1e-12);
  }
  set_default_dtype(DType::f32);
}
