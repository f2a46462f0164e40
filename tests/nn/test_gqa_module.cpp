// nn::GroupedQueryAttention and nn::DecoderKVCache: parity with the `gqa` fixture (a
// PyTorch composite with repeat_interleave'd K/V: outputs, weights, every parameter and
// input gradient) for g in {h, h/2, 1}; key_padding_mask against key_keep_mask in
// GroupedQueryAttention and MultiheadAttention (and against mha_self_causal); g == h
// against MultiheadAttention with the same weights; incremental decoding against full
// recomputation, for MultiheadAttention::forward_step too, and in bf16 / f16 with a cache of
// that dtype; cache growth and bytes per token; state-dict keys and errors.
// Legend: B batch, L query length, S key length, E embed dim, h heads, g kv heads.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>
#include <string>

using namespace ag;

using test_util::contains;
using test_util::error_of;
using test_util::max_abs_diff;

namespace {

void randomize(nn::Module& m, uint64_t seed) {
  Generator gen(seed);
  TensorMap sd;
  for (auto& [n, p] : m.named_parameters()) sd.insert(n, randn(p.shape(), DType::f64, &gen) * 0.5);
  m.load_state_dict(sd);
}

// forward_step over a prefill of 3 positions, then one position per step, gives the rows
// of the full causal forward `full` (B, T, E) to 1e-12; the cache grows by each step's
// length, its capacity 3, then doubled to 6 and 12 (T = 11).
template <class Attn>
void check_cached_decoding(Attn& attn, const Tensor& x, const Tensor& full, const nn::AttentionArgs& step_args,
                           const Shape& cached_keys) {
  const int64_t T = x.size(1);
  nn::DecoderKVCache cache(1);
  Tensor got = attn->forward_step(x.narrow(1, 0, 3), cache.layers[0], step_args);
  CHECK(max_abs_diff(got, full.narrow(1, 0, 3)) < 1e-12);
  CHECK(cache.length() == 3);
  for (int64_t t = 3; t < T; ++t) {
    got = attn->forward_step(x.narrow(1, t, 1), cache.layers[0], step_args);
    CHECK(got.shape() == Shape({x.size(0), 1, x.size(2)}));
    CHECK(max_abs_diff(got, full.narrow(1, t, 1)) < 1e-12);
    CHECK(cache.length() == t + 1);
  }
  CHECK(cache.layers[0].keys().shape() == cached_keys);
  CHECK(cache.layers[0].capacity() == 12);
}
}  // namespace

TEST_CASE("GroupedQueryAttention matches the gqa fixture for g in {4, 2, 1}, both padding conventions") {
  const test_util::Fixture t = test_util::load_fixture("gqa");
  const int64_t E = std::stoll(t.meta("embed_dim")), h = std::stoll(t.meta("num_heads"));
  const Tensor kpm = t.at("mask.key_padding");  // (B, S), true = ignore
  const int64_t L = 3, S = 5;
  // The fixture's mask is the lower-right causal mask.
  CHECK(max_abs_diff(causal_mask(L, S, CausalVariant::lower_right).to(DType::f64), t.at("mask.attn").to(DType::f64)) ==
        0);
  for (int64_t g : {4, 2, 1})
    for (int convention : {0, 1, 2}) {  // key_key_keep_mask + causal, padding_mask + causal, explicit masks
      const std::string p = "g" + std::to_string(g) + ".";
      INFO("g = ", g, ", convention ", convention);
      nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(E, h).num_kv_heads(g));
      attn->to(DType::f64);
      attn->load_state_dict(t.with_prefix(p + "param."));  // strict: every key, torch's names
      Tensor q = t.at(p + "input.query").clone().requires_grad_(), k = t.at(p + "input.key").clone().requires_grad_(),
             v = t.at(p + "input.value").clone().requires_grad_();
      nn::AttentionArgs args;
      args.need_weights = true;
      if (convention == 2) {
        // attn_mask is PyTorch's (true = not allowed): the negated keep mask, or padding
        args.attn_mask = logical_or(logical_not(t.at("mask.attn")), kpm.view({2, 1, 1, S}));
      } else {
        args.causal = true;
        args.causal_variant = CausalVariant::lower_right;
        if (convention == 0)
          args.key_padding_mask = kpm;
        else
          args.key_keep_mask = logical_not(kpm);
      }
      auto [out, w] = attn(q, k, v, args);
      (out * t.at(p + "upstream")).sum().backward();
      CHECK(max_abs_diff(out, t.at(p + "output")) < 1e-9);
      CHECK(max_abs_diff(w, t.at(p + "attn_weights")) < 1e-9);
      CHECK(max_abs_diff(q.grad(), t.at(p + "grad.input.query")) < 1e-9);
      CHECK(max_abs_diff(k.grad(), t.at(p + "grad.input.key")) < 1e-9);
      CHECK(max_abs_diff(v.grad(), t.at(p + "grad.input.value")) < 1e-9);
      int n = 0;
      for (auto& name_param : attn->named_parameters()) {
        auto& name = name_param.first;
        auto& param = name_param.second;
        INFO("gradient of ", name);
        CHECK(max_abs_diff(param.grad(), t.at(p + "grad.param." + name)) < 1e-9);
        ++n;
      }
      CHECK(n == 8);
      // And without weights: the fused kernel, same output.
      args.need_weights = false;
      CHECK(max_abs_diff(attn(q, k, v, args).first, t.at(p + "output")) < 1e-9);
    }
}

TEST_CASE("MultiheadAttention: key_padding_mask (true = ignore) against key_keep_mask and mha_self_causal") {
  const test_util::Fixture t = test_util::load_fixture("mha_self_causal");
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  mha->to(DType::f64);
  mha->load_state_dict(t.with_prefix("param."));
  const Tensor x = t.at("input.x");
  nn::AttentionArgs a, b;
  a.attn_mask = b.attn_mask = logical_not(t.at("mask.attn"));  // the fixture stores keep masks
  a.key_keep_mask = t.at("mask.padding");                      // true = real token
  b.key_padding_mask = logical_not(t.at("mask.padding"));      // torch's: true = padding
  Tensor oa = mha(x, x, x, a).first, ob = mha(x, x, x, b).first;
  CHECK(max_abs_diff(ob, t.at("output")) < 1e-9);
  CHECK(max_abs_diff(oa, ob) == 0);
  nn::AttentionArgs both = b;
  both.key_keep_mask = a.key_keep_mask;
  std::string e = error_of<ValueError>([&] { mha(x, x, x, both); });
  CHECK(contains(e, "MultiheadAttention: give key_keep_mask"));
  nn::GroupedQueryAttention gqa(nn::GroupedQueryAttentionOptions(8, 2));
  gqa->to(DType::f64);
  e = error_of<ValueError>([&] { gqa(x, x, x, both); });
  CHECK(contains(e, "GroupedQueryAttention: give key_keep_mask"));
  nn::AttentionArgs wrong;
  wrong.key_padding_mask = t.at("mask.padding").narrow(1, 0, 4);
  e = error_of<ShapeError>([&] { gqa(x, x, x, wrong); });
  CHECK(contains(e, "key_padding_mask shape [2, 4] must be (B, S) = [2, 5]"));
}

TEST_CASE("GroupedQueryAttention with g == h equals MultiheadAttention with the same weights") {
  nn::GroupedQueryAttention gqa(nn::GroupedQueryAttentionOptions(8, 4));
  gqa->to(DType::f64);
  randomize(*gqa, 3);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 4));
  mha->to(DType::f64);
  TensorMap sd;
  sd.insert("in_proj_weight", cat({gqa->q_proj->weight, gqa->k_proj->weight, gqa->v_proj->weight}, 0));
  sd.insert("in_proj_bias", cat({gqa->q_proj->bias, gqa->k_proj->bias, gqa->v_proj->bias}, 0));
  sd.insert("out_proj.weight", gqa->out_proj->weight);
  sd.insert("out_proj.bias", gqa->out_proj->bias);
  mha->load_state_dict(sd);
  Generator gen(1);
  Tensor x = randn({2, 6, 8}, DType::f64, &gen);
  nn::AttentionArgs args;
  args.causal = true;
  args.need_weights = true;
  auto [o1, w1] = gqa(x, x, x, args);
  auto [o2, w2] = mha(x, x, x, args);
  CHECK(max_abs_diff(o1, o2) < 1e-12);
  CHECK(max_abs_diff(w1, w2) < 1e-12);
}

TEST_CASE("GroupedQueryAttention: cached decoding equals full recomputation, g in {h, h/2, 1}") {
  const int64_t E = 16, h = 4, B = 2, T = 11;
  for (int64_t g : {h, h / 2, int64_t(1)})
    for (bool fused : {true, false}) {  // need_weights forces the composite path
      INFO("g = ", g, ", fused ", fused);
      nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(E, h).num_kv_heads(g));
      attn->to(DType::f64);
      randomize(*attn, 7 + static_cast<uint64_t>(g));
      Generator gen(5);
      Tensor x = randn({B, T, E}, DType::f64, &gen);
      nn::AttentionArgs causal;
      causal.causal = true;
      Tensor full = attn(x, x, x, causal).first;  // (B, T, E)
      nn::AttentionArgs step_args;
      step_args.need_weights = !fused;
      check_cached_decoding(attn, x, full, step_args, Shape({B, g, T, E / h}));
    }
}

TEST_CASE("MultiheadAttention: cached decoding equals the full causal forward, with and without add_bias_kv") {
  // forward_step over a prefill of 3 positions and then one per step gives the rows of
  // forward(x, x, x, causal) to 1e-12 in f64; bias_k / bias_v (seen by every query) stay
  // out of the cache, so its length counts positions.
  const int64_t E = 16, h = 4, B = 2, T = 11;
  for (bool bias_kv : {false, true})
    for (bool fused : {true, false}) {  // need_weights forces the composite path
      INFO("add_bias_kv ", bias_kv, ", fused ", fused);
      nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h).add_bias_kv(bias_kv));
      mha->to(DType::f64);
      randomize(*mha, 11);
      mha->eval();
      Generator gen(6);
      Tensor x = randn({B, T, E}, DType::f64, &gen);
      nn::AttentionArgs causal;
      causal.causal = true;
      Tensor full = mha(x, x, x, causal).first;  // (B, T, E)
      nn::AttentionArgs step_args;
      step_args.need_weights = !fused;
      check_cached_decoding(mha, x, full, step_args, Shape({B, h, T, E / h}));
    }
  // A padding mask over the cached keys, (B, t + n), applies on top of the causal part.
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, h));
  mha->to(DType::f64);
  randomize(*mha, 12);
  Generator gen(8);
  Tensor x = randn({B, 5, E}, DType::f64, &gen);
  Tensor kpm = zeros({B, 5}, DType::b8);
  kpm.select(0, 1).select(0, 0).fill_(1.0);  // batch 1 ignores position 0
  nn::AttentionArgs a;
  a.causal = true;
  a.key_padding_mask = kpm;
  Tensor full = mha(x, x, x, a).first;
  nn::DecoderKVCache cache(1);
  nn::AttentionArgs pad;
  pad.key_padding_mask = kpm.narrow(1, 0, 4);  // (B, t + n) = (B, 4)
  mha->forward_step(x.narrow(1, 0, 4), cache.layers[0], pad);
  pad.key_padding_mask = kpm;  // (B, 5)
  Tensor last = mha->forward_step(x.narrow(1, 4, 1), cache.layers[0], pad);
  CHECK(max_abs_diff(last, full.narrow(1, 4, 1)) < 1e-12);
  // Cross-attention widths cannot be cached self-attention.
  nn::MultiheadAttention cross(nn::MultiheadAttentionOptions(E, h).kdim(5).vdim(7));
  nn::DecoderKVCache c2(1);
  std::string e = error_of<ValueError>([&] { cross->forward_step(zeros({1, 1, E}), c2.layers[0]); });
  CHECK(contains(e, "MultiheadAttention.forward_step"));
  CHECK(contains(e, "kdim 5, vdim 7"));
  e = error_of<ShapeError>([&] { mha->forward_step(zeros({1, 1, E + 1}), cache.layers[0]); });
  CHECK(contains(e, "[1, 1, 17]"));
}

TEST_CASE("GroupedQueryAttention: a bf16 / f16 module decodes into a cache of its dtype, half the bytes") {
  // The cache takes the dtype of the keys and values it is given: a module converted by
  // to(bf16) fills a bf16 cache of half the f32 cache's bytes per token, and its cached
  // decoding gives the rows of its own full causal forward, and of the f32 module's on the
  // same (rounded) input, within the dtype's tolerance (relative to the largest output).
  const int64_t E = 16, h = 4, g = 2, B = 2, T = 11;
  for (DType dt : {DType::bf16, DType::f16}) {
    const char* name = dt == DType::bf16 ? "bf16" : "f16";
    INFO("dtype ", name);
    nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(E, h).num_kv_heads(g));
    randomize(*attn, 21);
    Generator gen(9);
    const Tensor x = randn({B, T, E}, DType::f32, &gen).to(dt);  // (B, T, E), rounded once
    nn::AttentionArgs causal;
    causal.causal = true;
    NoGradGuard no_grad;
    const Tensor full32 = attn(x.to(DType::f32), x.to(DType::f32), x.to(DType::f32), causal).first;  // (B, T, E)
    nn::DecoderKVCache cache32(1);
    attn->forward_step(x.to(DType::f32), cache32.layers[0]);
    attn->to(dt);
    const Tensor full = attn(x, x, x, causal).first;  // (B, T, E) in dt
    nn::DecoderKVCache cache(1);
    std::vector<Tensor> rows{attn->forward_step(x.narrow(1, 0, 3), cache.layers[0])};  // prefill 3
    for (int64_t t = 3; t < T; ++t) rows.push_back(attn->forward_step(x.narrow(1, t, 1), cache.layers[0]));
    const Tensor got = cat(rows, 1);  // (B, T, E)
    CHECK(got.dtype() == dt);
    CHECK(cache.layers[0].keys().dtype() == dt);
    CHECK(cache.layers[0].values().dtype() == dt);
    CHECK(cache.length() == T);
    CHECK(cache.bytes_per_token() == 2 * g * (E / h) * 2);
    CHECK(2 * cache.bytes_per_token() == cache32.bytes_per_token());
    const double scale = max(abs(full32)).item<double>();
    const double tol = dt == DType::bf16 ? 2e-2 : 4e-3;  // a few units of 2^-8 / 2^-11
    MESSAGE(name, ": cached vs full ", max_abs_diff(got, full) / scale, ", vs f32 ", max_abs_diff(got, full32) / scale);
    CHECK(max_abs_diff(got, full) / scale < tol);
    CHECK(max_abs_diff(got, full32) / scale < tol);
  }
}

TEST_CASE("GroupedQueryAttention: cached decoding passes NaN on, as PyTorch (issue 23)") {
  // A NaN token in the cache reaches every later query (its key is visible to all), on the
  // fused decode path and the composite one; batch row 1, all finite, stays finite.
  const int64_t E = 16, h = 4, g = 2, B = 2;
  for (bool fused : {true, false}) {
    INFO("fused ", fused);
    nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(E, h).num_kv_heads(g));
    attn->to(DType::f64);
    randomize(*attn, 3);
    Generator gen(4);
    Tensor x = randn({B, 4, E}, DType::f64, &gen);
    x.select(0, 0).select(0, 1).fill_(std::nan(""));  // batch 0, position 1
    nn::AttentionArgs args;
    args.need_weights = !fused;
    nn::DecoderKVCache cache(1);
    attn->forward_step(x.narrow(1, 0, 3), cache.layers[0], args);
    Tensor out = attn->forward_step(x.narrow(1, 3, 1), cache.layers[0], args);  // (B, 1, E)
    CHECK(all(isnan(out.select(0, 0))).item<bool>());
    CHECK(all(isfinite(out.select(0, 1))).item<bool>());
  }
}

TEST_CASE("DecoderKVCache grows by doubling; bytes per token at d_model 512, h 8") {
  nn::DecoderKVCache::Layer c;
  Generator gen(2);
  int64_t last_cap = 0, grows = 0;
  for (int64_t t = 0; t < 100; ++t) {
    c.append(randn({1, 2, 1, 4}, DType::f32, &gen), randn({1, 2, 1, 4}, DType::f32, &gen));
    if (c.capacity() != last_cap) ++grows, last_cap = c.capacity();
  }
  CHECK(c.length() == 100);
  CHECK(c.capacity() == 128);
  CHECK(grows == 8);  // 1, 2, 4, ..., 128: log2 reallocations, not one per step
  CHECK(c.keys().shape() == Shape({1, 2, 100, 4}));
  std::string e = error_of<ShapeError>([&] { c.append(zeros({1, 3, 1, 4}), zeros({1, 3, 1, 4})); });
  CHECK(contains(e, "DecoderKVCache.append"));
  CHECK(contains(e, "[1, 3, 1, 4]"));
  // Errors of the ops inside carry the cache's name in front (they said "empty: ...").
  nn::DecoderKVCache::Layer huge;
  Tensor big = zeros({1, 1, 1, 1}).expand({int64_t(1) << 16, int64_t(1) << 16, 1, int64_t(1) << 16});
  std::string eh = error_of<Error>([&] { huge.append(big, big); });
  CHECK(eh.rfind("DecoderKVCache.append: ", 0) == 0);
  CHECK(huge.length() == 0);
  huge.append(zeros({1, 2, 0, 4}), zeros({1, 2, 0, 3}));  // n = 0 first: it used to throw "Tensor: ... undefined"
  CHECK(huge.keys().shape() == Shape({1, 2, 0, 4}));

  // Measured, not computed: the bytes the cache's K and V views hold per position, after
  // a 16-token prefill of one layer of GroupedQueryAttention(512, 8), float32.
  for (int64_t g : {8, 2, 1}) {
    nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(512, 8).num_kv_heads(g));
    nn::DecoderKVCache cache(1);
    NoGradGuard no_grad;
    attn->forward_step(randn({1, 16, 512}, DType::f32, &gen), cache.layers[0]);
    const auto& l = cache.layers[0];
    const int64_t bytes = (l.keys().numel() + l.values().numel()) * 4 / 16;
    MESSAGE("KV cache, d_model 512, h 8, g ", g, ": ", bytes, " bytes per token per layer (float32)");
    CHECK(bytes == l.bytes_per_token());
    CHECK(bytes == 2 * g * 64 * 4);
  }
}

TEST_CASE("GroupedQueryAttention: state-dict keys, printing, errors") {
  nn::GroupedQueryAttention attn(nn::GroupedQueryAttentionOptions(8, 4).num_kv_heads(2));
  TensorMap sd = attn->state_dict();
  CHECK(sd.size() == 8);
  CHECK(sd.at("q_proj.weight").shape() == Shape({8, 8}));
  CHECK(sd.at("k_proj.weight").shape() == Shape({4, 8}));  // g * d = 2 * 2
  CHECK(sd.at("v_proj.bias").shape() == Shape({4}));
  CHECK(sd.at("out_proj.weight").shape() == Shape({8, 8}));
  nn::GroupedQueryAttention nb(nn::GroupedQueryAttentionOptions(8, 4).num_kv_heads(1).bias(false));
  CHECK(nb->state_dict().size() == 4);
  std::ostringstream os;
  attn->pretty_print(os);
  CHECK(os.str() == "GroupedQueryAttention(embed_dim=8, num_heads=4, num_kv_heads=2, dropout=0, bias=true)");
  std::string e =
      error_of<ShapeError>([] { nn::GroupedQueryAttention(nn::GroupedQueryAttentionOptions(8, 4).num_kv_heads(3)); });
  CHECK(contains(e, "num_heads 4 must be divisible by num_kv_heads 3"));
  e = error_of<ShapeError>([&] { attn(zeros({2, 3, 6}), zeros({2, 3, 8}), zeros({2, 3, 8})); });
  CHECK(contains(e, "query must be (B, len, E) with E = 8, got [2, 3, 6]"));
}
