// nn::MultiheadAttention: parity with torch.nn.MultiheadAttention(batch_first=True)
// through the PyTorch fixtures (outputs, per-head weights, every input and parameter
// gradient, in f64 and f32), the worked example and single-head equivalence of nn/ATTENTION.md,
// the attention properties of nn/ATTENTION.md at module level, a float64 gradcheck with every option on,
// error messages, and a safetensors round trip.
// Legend: B batch, L query length, S key length, E embed dim, h heads, d = E / h.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ag;

using test_util::contains;
using test_util::error_of;

namespace {

// max |got - want| / max |want|: relative to the largest reference magnitude, so that
// near-zero gradient entries do not dominate. Infinite when a value is not finite and
// the reference is not the same value.
double rel_err(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  auto a = got.to_vector<double>(), b = want.to_vector<double>();
  double worst = 0, scale = 0;
  for (double v : b)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;  // also equal infinities
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

Tensor bool_tensor(const std::vector<int>& v, const Shape& shape) {
  return ne(Tensor::from_vector<int64_t>(std::vector<int64_t>(v.begin(), v.end()), shape), 0.0);
}

// Random values for every parameter (biases too: reset_parameters zeroes them, which
// would hide bias bugs).
void randomize(nn::Module& m, uint64_t seed) {
  Generator gen(seed);
  TensorMap sd;
  for (auto& [n, p] : m.named_parameters()) sd.insert(n, randn(p.shape(), DType::f64, &gen) * 0.5);
  m.load_state_dict(sd);
}

Tensor grad_input(const Tensor& t, DType dtype = DType::f64) { return t.to(dtype).clone().requires_grad_(); }

// ---- fixture parity ---------------------------------------------------------------------

struct Errors {
  double output = 0, weights = 0, grads = 0;
};

Errors run_fixture(const std::string& name, DType dtype, double tol) {
  INFO("fixture ", name, ", dtype ", std::string(ag::name(dtype)));
  const test_util::Fixture t = test_util::load_fixture(name);
  const int64_t E = std::stoll(t.meta("embed_dim")), h = std::stoll(t.meta("num_heads"));
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h)
                                 .kdim(std::stoll(t.meta("kdim")))
                                 .vdim(std::stoll(t.meta("vdim")))
                                 .bias(t.meta("bias") == "True")
                                 .add_bias_kv(t.meta("add_bias_kv") == "True")
                                 .dropout(std::stod(t.meta("dropout"))));
  mha->to(dtype);  // before loading, so f64 weights never pass through f32
  TensorMap params;
  for (auto& [k, v] : t)
    if (k.rfind("param.", 0) == 0) params.insert(k.substr(6), v);
  mha->load_state_dict(params);  // strict: PyTorch's names, every one
  for (auto& p : mha->parameters()) REQUIRE(p.dtype() == dtype);

  // inputs: the same tensor three times for self-attention
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (auto& [k, v] : t)
    if (k.rfind("input.", 0) == 0) inputs.emplace_back(k.substr(6), grad_input(v, dtype));
  auto input = [&](const std::string& n) {
    for (auto& [k, v] : inputs)
      if (k == n) return v;
    FAIL("no input ", n);
    return Tensor{};
  };
  Tensor q, k, v;
  if (t.meta("self_attention") == "True") {
    REQUIRE(inputs.size() == 1);
    q = k = v = input("x");
  } else {
    REQUIRE(inputs.size() == 3);
    q = input("query"), k = input("key"), v = input("value");
  }

  nn::AttentionArgs args;
  args.need_weights = true;
  if (t.contains("mask.attn")) args.attn_mask = logical_not(t.at("mask.attn"));  // keep mask stored
  if (t.contains("mask.attn_additive")) args.attn_mask = t.at("mask.attn_additive").to(dtype);
  if (t.contains("mask.padding")) args.key_padding_mask = logical_not(t.at("mask.padding"));

  auto [out, w] = mha(q, k, v, args);
  CHECK(out.dtype() == dtype);
  (out * t.at("upstream").to(dtype)).sum().backward();

  Errors e;
  e.output = rel_err(out, t.at("output"));
  e.weights = rel_err(w, t.at("attn_weights"));  // (B, h, L, S)
  CHECK(e.output <= tol);
  CHECK(e.weights <= tol);
  int n_grads = 0;
  for (auto& key_want : t) {
    auto& key = key_want.first;
    auto& want = key_want.second;
    std::string name;
    Tensor got;
    if (key.rfind("grad.input.", 0) == 0) {
      name = key.substr(11);
      got = input(name).grad();
    } else if (key.rfind("grad.param.", 0) == 0) {
      name = key.substr(11);
      for (auto& [pn, p] : mha->named_parameters())
        if (pn == name) got = p.grad();
    } else {
      continue;
    }
    INFO("gradient ", key);
    REQUIRE(got.defined());
    double err = rel_err(got, want);
    CHECK(err <= tol);
    e.grads = std::max(e.grads, err);
    ++n_grads;
  }
  CHECK(n_grads == int(inputs.size() + mha->parameters().size()));  // every gradient compared
  MESSAGE(name, " ", std::string(ag::name(dtype)), ": max rel err output ", e.output, ", weights ", e.weights,
          ", grads ", e.grads);
  return e;
}

}  // namespace

TEST_CASE("MultiheadAttention matches PyTorch: self-attention, causal + padding masks") {
  run_fixture("mha_self_causal", DType::f64, 1e-9);
  run_fixture("mha_self_causal", DType::f32, 1e-4);
}

TEST_CASE("MultiheadAttention matches PyTorch: cross-attention, kdim 5, vdim 7, padding") {
  run_fixture("mha_cross_kdim_vdim", DType::f64, 1e-9);
  run_fixture("mha_cross_kdim_vdim", DType::f32, 1e-4);
}

TEST_CASE("MultiheadAttention matches PyTorch: bias=False, additive float mask with -inf") {
  run_fixture("mha_additive_nobias", DType::f64, 1e-9);
  run_fixture("mha_additive_nobias", DType::f32, 1e-4);
}

TEST_CASE("MultiheadAttention reproduces the worked example of nn/ATTENTION.md") {
  const test_util::Fixture t = test_util::load_fixture("mha_worked_example");
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).bias(false));
  mha->to(DType::f64);
  // The example's weights are [d_in, d_out] (Q = X @ w_q); ours are [out, in].
  TensorMap sd;
  sd.insert("in_proj_weight", cat({t.at("w_q").t(), t.at("w_k").t(), t.at("w_v").t()}, 0));  // (3E, E)
  sd.insert("out_proj.weight", t.at("w_o").t());
  mha->load_state_dict(sd);

  Tensor x = t.at("input.x");  // (1, 2, 4)
  nn::AttentionArgs args;
  args.need_weights = true;
  auto [out, w] = mha(x, x, x, args);
  double eo = rel_err(out, t.at("output")), ew = rel_err(w, t.at("attn_weights"));
  CHECK(eo <= 1e-12);
  CHECK(ew <= 1e-12);

  // With W_o = I the output is the merged heads ("concat", (1, 2, 4)).
  {
    NoGradGuard g;
    mha->out_proj->weight.copy_(eye(4, 4, DType::f64));
  }
  double ec = rel_err(mha(x, x, x).first, t.at("concat"));
  CHECK(ec <= 1e-12);
  MESSAGE("worked example: max rel err output ", eo, ", weights ", ew, ", concat ", ec);
}

// ---- single-head equivalence (nn/ATTENTION.md) ----------------------------------------

TEST_CASE("one head equals nn::Attention with the same weights, masked and unmasked") {
  const int64_t E = 6, B = 2, L = 3, S = 4;
  for (int64_t kv : {int64_t(6), int64_t(0)}) {  // kdim = vdim = E (packed), then kdim 5, vdim 7
    const int64_t kdim = kv ? kv : 5, vdim = kv ? kv : 7;
    INFO("kdim ", kdim, ", vdim ", vdim);
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, 1).kdim(kdim).vdim(vdim));
    nn::Attention att(nn::AttentionOptions(E).kdim(kdim).vdim(vdim));
    mha->to(DType::f64);
    att->to(DType::f64);
    randomize(*mha, 21);
    TensorMap sd;
    auto weight = [&](int i, const Tensor& separate) {
      return mha->packed() ? mha->in_proj_weight.narrow(0, i * E, E) : separate;
    };
    sd.insert("q_proj.weight", weight(0, mha->q_proj_weight));
    sd.insert("k_proj.weight", weight(1, mha->k_proj_weight));
    sd.insert("v_proj.weight", weight(2, mha->v_proj_weight));
    for (int i = 0; i < 3; ++i)
      sd.insert(std::string("qkv").substr(i, 1) + "_proj.bias", mha->in_proj_bias.narrow(0, i * E, E));
    sd.insert("out_proj.weight", mha->out_proj->weight);
    sd.insert("out_proj.bias", mha->out_proj->bias);
    att->load_state_dict(sd);

    Generator gen(22);
    Tensor q = randn({B, L, E}, DType::f64, &gen), k = randn({B, S, kdim}, DType::f64, &gen),
           v = randn({B, S, vdim}, DType::f64, &gen);
    nn::AttentionArgs plain, masked;
    plain.need_weights = masked.need_weights = true;
    masked.causal = true;
    masked.key_keep_mask = bool_tensor({1, 1, 1, 0, 1, 1, 0, 1}, {B, S});
    masked.attn_mask = logical_not(bool_tensor({1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1}, {L, S}));
    for (const auto* args : {&plain, &masked}) {
      INFO((args == &plain ? "unmasked" : "masked"));
      std::vector<Tensor> in1{grad_input(q), grad_input(k), grad_input(v)};
      std::vector<Tensor> in2{grad_input(q), grad_input(k), grad_input(v)};
      auto [o1, w1] = mha(in1[0], in1[1], in1[2], *args);
      auto [o2, w2] = att(in2[0], in2[1], in2[2], *args);
      CHECK(w1.shape() == Shape({B, 1, L, S}));
      CHECK(rel_err(o1, o2) <= 1e-13);
      CHECK(rel_err(w1, w2) <= 1e-13);
      square(o1).sum().backward();
      square(o2).sum().backward();
      for (int i = 0; i < 3; ++i) CHECK(rel_err(in1[size_t(i)].grad(), in2[size_t(i)].grad()) <= 1e-12);
    }
    // self-attention through the fused (packed) projection, too
    if (mha->packed()) {
      Tensor x = randn({B, S, E}, DType::f64, &gen);
      nn::AttentionArgs self_args;
      self_args.causal = true;
      self_args.key_keep_mask = masked.key_keep_mask;
      CHECK(rel_err(mha(x, x, x, self_args).first, att(x, x, x, self_args).first) <= 1e-13);
    }
  }
}

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

// ---- gradcheck ---------------------------------------------------------------------------

TEST_CASE("gradcheck: the whole module with every option on, inputs and parameters") {
  const int64_t B = 2, L = 3, S = 4, E = 4, h = 2, kdim = 3, vdim = 5;
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h).kdim(kdim).vdim(vdim).bias(true).add_bias_kv(true));
  mha->to(DType::f64);
  randomize(*mha, 71);
  Generator gen(72);
  Tensor q = grad_input(randn({B, L, E}, DType::f64, &gen)), k = grad_input(randn({B, S, kdim}, DType::f64, &gen)),
         v = grad_input(randn({B, S, vdim}, DType::f64, &gen));
  std::vector<Tensor> inputs{q, k, v};
  for (auto& p : mha->parameters()) inputs.push_back(p);  // perturbed in place by gradcheck
  REQUIRE(inputs.size() == 3 + 8);

  nn::AttentionArgs args;
  args.need_weights = true;
  args.causal = true;
  args.key_keep_mask = bool_tensor({1, 1, 1, 0, 1, 1, 0, 0}, {B, S});
  // output and weights, flattened into one vector
  auto fn = [&](const std::vector<Tensor>& in) {
    auto [o, w] = mha(in[0], in[1], in[2], args);
    return cat({o.flatten(), w.flatten()});
  };

  SUBCASE("bool attn_mask") {
    args.attn_mask = logical_not(bool_tensor({1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1}, {L, S}));
    GradcheckOptions opt;
    opt.name = "MultiheadAttention (bool masks)";
    auto r = gradcheck(fn, inputs, opt);
    CHECK_MESSAGE(r.ok, r.message);
  }
  SUBCASE("float attn_mask (B, h, L, S), merged with the bool causal and padding masks") {
    args.attn_mask = randn({B, h, L, S}, DType::f64, &gen);
    GradcheckOptions opt;
    opt.name = "MultiheadAttention (float mask)";
    auto r = gradcheck(fn, inputs, opt);
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_CASE("gradcheck: self-attention through the fused q/k/v projection") {
  const int64_t B = 2, L = 3, E = 4;
  nn::MultiheadAttention mha(E, 2);
  mha->to(DType::f64);
  randomize(*mha, 81);
  Generator gen(82);
  Tensor x = grad_input(randn({B, L, E}, DType::f64, &gen));
  std::vector<Tensor> inputs{x};
  for (auto& p : mha->parameters()) inputs.push_back(p);
  nn::AttentionArgs args;
  args.causal = true;
  args.key_keep_mask = bool_tensor({1, 1, 1, 1, 1, 0}, {B, L});
  auto r = gradcheck([&](const std::vector<Tensor>& in) { return mha(in[0], in[0], in[0], args).first; }, inputs,
                     GradcheckOptions{.name = "MultiheadAttention self-attention"});
  CHECK_MESSAGE(r.ok, r.message);
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

// ---- errors ----------------------------------------------------------------------------------

TEST_CASE("MultiheadAttention errors name the shapes and dtypes involved") {
  std::string msg = error_of<ShapeError>([] { nn::MultiheadAttention(6, 4); });
  CHECK(contains(msg, "embed_dim 6"));
  CHECK(contains(msg, "num_heads 4"));

  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7));
  Tensor q = randn({2, 3, 8}), k = randn({2, 4, 5}), v = randn({2, 4, 7});
  msg = error_of<ShapeError>([&] { mha(q, randn({2, 4, 6}), v); });
  CHECK(contains(msg, "[2, 3, 8]"));
  CHECK(contains(msg, "[2, 4, 6]"));
  CHECK(contains(msg, "[2, 4, 7]"));
  msg = error_of<ShapeError>([&] { mha(randn({2, 3, 7}), k, v); });
  CHECK(contains(msg, "[2, 3, 7]"));
  CHECK(contains(msg, "[2, 4, 5]"));
  CHECK_THROWS_AS(mha(q, k, randn({2, 4, 5})), ShapeError);
  CHECK_THROWS_AS(mha(randn({3, 8}), k, v), ShapeError);     // not 3-D
  CHECK_THROWS_AS(mha(q, randn({2, 5, 5}), v), ShapeError);  // S differs
  CHECK_THROWS_AS(mha(randn({1, 3, 8}), k, v), ShapeError);  // B differs

  nn::AttentionArgs bad_attn;
  bad_attn.attn_mask = bool_tensor(std::vector<int>(15, 1), {3, 5});  // (L, S + 1)
  msg = error_of<ShapeError>([&] { mha(q, k, v, bad_attn); });
  CHECK(contains(msg, "[3, 5]"));
  nn::AttentionArgs bad_pad;
  bad_pad.key_keep_mask = bool_tensor(std::vector<int>(10, 1), {2, 5});
  msg = error_of<ShapeError>([&] { mha(q, k, v, bad_pad); });
  CHECK(contains(msg, "[2, 5]"));
  CHECK(contains(msg, "[2, 4]"));
  nn::AttentionArgs transposed_pad;
  transposed_pad.key_keep_mask = bool_tensor(std::vector<int>(8, 1), {4, 2});
  CHECK_THROWS_AS(mha(q, k, v, transposed_pad), ShapeError);

  nn::AttentionArgs float_pad;
  float_pad.key_keep_mask = ones({2, 4});
  msg = error_of<DTypeError>([&] { mha(q, k, v, float_pad); });
  CHECK(contains(msg, "key_keep_mask"));
  CHECK(contains(msg, "f32"));
  nn::AttentionArgs f64_mask;  // a float mask must match the module's dtype
  f64_mask.attn_mask = zeros({3, 4}, DType::f64);
  CHECK_THROWS_AS(mha(q, k, v, f64_mask), DTypeError);
}

// ---- state dict ---------------------------------------------------------------------------------

TEST_CASE("MultiheadAttention state_dict: PyTorch's keys, round trip through safetensors") {
  nn::MultiheadAttention a(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7).add_bias_kv(true));
  randomize(*a, 101);
  std::vector<std::string> keys;
  for (auto& [key, t] : a->state_dict()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k",
                                         "bias_v", "out_proj.weight", "out_proj.bias"});
  fs::path dir = fs::path(AG_TMP_DIR) / "mha";
  fs::create_directories(dir);
  const std::string path = (dir / "mha.safetensors").string();
  nn::save(*a, path);

  nn::MultiheadAttention b(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7).add_bias_kv(true));
  nn::load(*b, path);
  for (auto& key_t : a->state_dict()) {
    auto& key = key_t.first;
    auto& t = key_t.second;
    INFO(key);
    CHECK(b->state_dict().at(key).to_vector<double>() == t.to_vector<double>());
  }
  Tensor q = randn({2, 3, 8}), k = randn({2, 4, 5}), v = randn({2, 4, 7});
  CHECK(a(q, k, v).first.to_vector<double>() == b(q, k, v).first.to_vector<double>());

  // into an f64 module: converted on load
  nn::MultiheadAttention c(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7).add_bias_kv(true));
  c->to(DType::f64);
  nn::load(*c, path);
  CHECK(c->q_proj_weight.dtype() == DType::f64);
  CHECK(rel_err(c(q.to(DType::f64), k.to(DType::f64), v.to(DType::f64)).first, a(q, k, v).first) <= 1e-5);

  // a packed module cannot take the separate-projection checkpoint
  nn::MultiheadAttention packed(8, 2);
  std::string msg = error_of<ValueError>([&] { nn::load(*packed, path); });
  CHECK(contains(msg, "in_proj_weight"));
  CHECK(contains(msg, "q_proj_weight"));
}
