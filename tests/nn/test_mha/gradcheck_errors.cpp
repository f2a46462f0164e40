// nn::MultiheadAttention: float64 gradchecks of the whole module (every option on, and
// self-attention through the fused projection), and its error messages.
// Legend: B batch, L query length, S key length, E embed dim, h heads, d = E / h.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../mha_test_util.h"
#include "test_util.h"

#include <string>
#include <vector>

using namespace ag;
using namespace mha_test;

using test_util::contains;
using test_util::error_of;

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
