// nn::MultiheadAttention against PyTorch: torch.nn.MultiheadAttention(batch_first=True) fixtures
// (outputs, per-head weights, every gradient, f64 and f32; again sequence-first), the worked example and single-head
// equivalence of nn/ATTENTION.md, and state dicts through safetensors with PyTorch's keys.
// Legend: B batch, L query length, S key length, E embed dim, h heads, d = E / h.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "mha_test_util.h"
#include "tensor_checks.h"
#include "test_util.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ag;
using namespace mha_test;

using test_util::contains;
using test_util::error_of;

namespace {

// ---- fixture parity ---------------------------------------------------------------------

struct Errors {
  double output = 0, weights = 0, grads = 0;
};

// seq_first: the same case through batch_first(false), inputs, output and their
// gradients transposed to (len, B, *); PyTorch's numbers are the same.
Errors run_fixture(const std::string& name, DType dtype, double tol, bool seq_first = false) {
  INFO("fixture ", name, ", dtype ", std::string(ag::name(dtype)), seq_first ? ", sequence-first" : "");
  auto layout = [&](const Tensor& x) { return seq_first ? x.transpose(0, 1) : x; };
  const test_util::Fixture t = test_util::load_fixture(name);
  const int64_t E = std::stoll(t.meta("embed_dim")), h = std::stoll(t.meta("num_heads"));
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h)
                                 .kdim(std::stoll(t.meta("kdim")))
                                 .vdim(std::stoll(t.meta("vdim")))
                                 .bias(t.meta("bias") == "True")
                                 .add_bias_kv(t.meta("add_bias_kv") == "True")
                                 .dropout(std::stod(t.meta("dropout")))
                                 .batch_first(!seq_first));
  mha->to(dtype);  // before loading, so f64 weights never pass through f32
  TensorMap params;
  for (auto& [k, v] : t)
    if (k.rfind("param.", 0) == 0) params.insert(k.substr(6), v);
  mha->load_state_dict(params);  // strict: PyTorch's names, every one
  for (auto& p : mha->parameters()) REQUIRE(p.dtype() == dtype);

  // inputs: the same tensor three times for self-attention
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (auto& [k, v] : t)
    if (k.rfind("input.", 0) == 0) inputs.emplace_back(k.substr(6), grad_input(layout(v).contiguous(), dtype));
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
  (out * layout(t.at("upstream")).to(dtype)).sum().backward();

  Errors e;
  e.output = rel_err(layout(out), t.at("output"));
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
      got = layout(input(name).grad());
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

TEST_CASE("MultiheadAttention with batch_first(false) matches PyTorch's sequence-first default") {
  // (L, B, E) in, (L, B, E) out, masks and weights unchanged: every fixture, both dtypes.
  for (const char* name : {"mha_self_causal", "mha_cross_kdim_vdim", "mha_additive_nobias"}) {
    run_fixture(name, DType::f64, 1e-9, true);
    run_fixture(name, DType::f32, 1e-4, true);
  }
}

TEST_CASE("sequence-first MultiheadAttention: cached decoding, errors and printing") {
  manual_seed(11);
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true));
  nn::MultiheadAttention sf(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true).batch_first(false));
  sf->load_state_dict(bf->state_dict());
  bf->to(DType::f64);
  sf->to(DType::f64);
  Tensor x = randn({3, 4, 8}, DType::f64);  // (B, L, E)
  nn::AttentionArgs causal;
  causal.causal = true;
  Tensor full = bf(x, x, x, causal).first;
  Tensor full_sf = sf(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), causal).first;
  CHECK(full_sf.shape() == Shape{4, 3, 8});
  CHECK(test_util::max_abs_diff(full_sf.transpose(0, 1), full) < 1e-13);
  NoGradGuard no_grad;
  nn::DecoderKVCache cache(1);
  Tensor steps = sf->forward_step(x.transpose(0, 1).narrow(0, 0, 2), cache.layers[0]);  // prefill (2, B, E)
  steps = cat({steps, sf->forward_step(x.transpose(0, 1).narrow(0, 2, 2), cache.layers[0])}, 0);
  CHECK(test_util::max_abs_diff(steps.transpose(0, 1), full) < 1e-13);
  CHECK_THROWS_MSG(sf(randn({4, 3, 8}), randn({5, 2, 8}), randn({5, 2, 8})), ShapeError,
                   "MultiheadAttention(batch_first=false): batch sizes (dim 1) of query [4, 3, 8], key [5, 2, 8]");
  std::ostringstream os;
  os << sf;
  CHECK(contains(os.str(), "batch_first=false"));
  CHECK_THROWS_MSG(nn::TensorParallelMultiheadAttentionOptions(nn::MultiheadAttentionOptions(8, 2).batch_first(false)),
                   ValueError, "batch_first=false (yes) have no tensor-parallel form");
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
