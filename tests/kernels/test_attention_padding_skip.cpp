// Padding masks known by structure: the fused attention kernel turns a key-padding mask
// into per-slice key lengths and skips the K/V tiles past them (flash_key_lengths,
// FlashConfig::key_len). Checked against the composite path (which reads every mask
// element), for lengths at and around the 64-key tile edges, with causal, GQA and
// dropout; and that padded K/V rows are really never read (NaN there stays out).
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/nn/attention.h>
#include "attograd/detail/attention.h"  // sdpa_causal_and_mask: causal with attn_mask, the modules' entry

#include <cmath>
#include <vector>

#include "kernels/flash_attention.h"
#include "test_util.h"

using namespace ag;

using test_util::max_abs_diff;

namespace {

// (B) lengths -> (B, 1, 1, S) bool, true on keys j < lengths[b] (real keys, right padding).
Tensor prefix_mask(const std::vector<int64_t>& lengths, int64_t S) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  return keep_mask_from_lengths(Tensor::from_vector(lengths), S).view({B, 1, 1, S});
}

struct Grads4 {
  Tensor out, dq, dk, dv;
};

// out and the gradients of sum(out * up) for q, k, v, on the fused or composite path.
Grads4 run_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& up, SdpaOptions o, bool fused) {
  o.fused = fused;
  Tensor out = ag::detail::sdpa_causal_and_mask(q, k, v, o).first;
  if (fused) REQUIRE(out.grad_fn()->name == std::string("scaled_dot_product_attention"));
  auto g = grad({sum(out * up)}, {q, k, v});
  return {out, g[0], g[1], g[2]};
}

void check_close(const Grads4& a, const Grads4& b, double tol) {
  CHECK(max_abs_diff(a.out, b.out) < tol);
  CHECK(max_abs_diff(a.dq, b.dq) < tol);
  CHECK(max_abs_diff(a.dk, b.dk) < tol);
  CHECK(max_abs_diff(a.dv, b.dv) < tol);
}

struct Case {
  const char* name;
  int64_t hq, hkv, L, S;
  std::vector<int64_t> lengths;  // one per batch row
  bool causal = false;
  CausalVariant variant = CausalVariant::upper_left;
  bool float_mask = false;
};

}  // namespace

TEST_CASE("padding lengths: fused (tiles skipped) equals the composite path, f32 and f64") {
  Generator lg(4);  // random lengths in [0, 150]
  std::vector<int64_t> random_lengths;
  for (int i = 0; i < 6; ++i) random_lengths.push_back(static_cast<int64_t>(lg.next_u64() % 151));
  const Case cases[] = {
      {"lengths 0, 63, 64, 65, S; S = 130 not a multiple of 64", 2, 2, 70, 130, {0, 63, 64, 65, 130}},
      {"random lengths, S = 150", 2, 2, 33, 150, random_lengths},
      {"float mask (0 / -inf)", 2, 2, 65, 200, {63, 0, 200, 129}, false, CausalVariant::upper_left, true},
      {"causal + padding, L = S = 130", 2, 2, 130, 130, {1, 64, 100, 130}, true},
      {"causal lower_right + padding, L 40 < S 130", 1, 1, 40, 130, {129, 70, 30}, true, CausalVariant::lower_right},
      {"GQA 4 query heads on 2 K/V heads + padding", 4, 2, 66, 128, {65, 128, 3}},
      {"GQA + causal + padding", 4, 1, 100, 100, {64, 99}, true},
  };
  for (DType dt : {DType::f64, DType::f32}) {
    for (const auto& c : cases) {
      INFO(c.name << ", " << dt);
      Generator g(7);
      const int64_t B = static_cast<int64_t>(c.lengths.size()), d = 8, dv = 6;
      Tensor q = randn({B, c.hq, c.L, d}, dt, &g).requires_grad_(),
             k = randn({B, c.hkv, c.S, d}, dt, &g).requires_grad_(),
             v = randn({B, c.hkv, c.S, dv}, dt, &g).requires_grad_();
      Tensor up = randn({B, c.hq, c.L, dv}, dt, &g);
      SdpaOptions o;
      Tensor bmask = prefix_mask(c.lengths, c.S);
      o.attn_mask = c.float_mask ? additive_mask(bmask, dt) : bmask;
      o.causal = c.causal;
      o.causal_variant = c.variant;
      o.enable_gqa = c.hq != c.hkv;

      // The mask is recognized: exactly the lengths, one per (b, head) slice.
      auto kl = kernels::flash_key_lengths(q, k, o.attn_mask);
      CHECK(kl.exact);
      bool all_full = true;
      for (int64_t n : c.lengths) all_full = all_full && n == c.S;
      REQUIRE(kl.len.defined() == !all_full);
      if (kl.len.defined()) {
        std::vector<int64_t> want;  // slices are (B, hq) flattened
        for (int64_t n : c.lengths)
          for (int64_t h = 0; h < c.hq; ++h) want.push_back(n);
        CHECK(kl.len.to_vector<int64_t>() == want);
      }

      const double tol = dt == DType::f64 ? 1e-11 : 3e-5;
      check_close(run_sdpa(q, k, v, up, o, true), run_sdpa(q, k, v, up, o, false), tol);
    }
  }
}

TEST_CASE("padding lengths: the fully padded row gives zeros and zero gradients, as before") {
  Generator g(3);
  Tensor q = randn({2, 1, 5, 4}, DType::f64, &g).requires_grad_(), k = randn({2, 1, 70, 4}, DType::f64, &g),
         v = randn({2, 1, 70, 4}, DType::f64, &g).requires_grad_();
  SdpaOptions o;
  o.attn_mask = prefix_mask({0, 70}, 70);
  Tensor out = ag::detail::sdpa_causal_and_mask(q, k, v, o).first;
  sum(out).backward();
  Tensor row0 = out.select(0, 0), dq0 = q.grad().select(0, 0);
  CHECK(max_abs_diff(row0, zeros_like(row0)) == 0.0);  // the composite path's softmax gives zeros too
  CHECK(max_abs_diff(dq0, zeros_like(dq0)) == 0.0);
  CHECK(max_abs_diff(v.grad().select(0, 0), zeros_like(v.grad().select(0, 0))) == 0.0);
}

TEST_CASE("masks that are not a plain prefix: bounds only, the mask still read") {
  Generator g(9);
  const int64_t B = 3, h = 2, L = 70, S = 100, d = 4;
  Tensor q = randn({B, h, L, d}, DType::f64, &g).requires_grad_(),
         k = randn({B, h, S, d}, DType::f64, &g).requires_grad_(),
         v = randn({B, h, S, d}, DType::f64, &g).requires_grad_();
  Tensor up = randn({B, h, L, d}, DType::f64, &g);

  SUBCASE("left padding: the last key is real, nothing to skip but the empty row") {
    // key j real when j >= S - len: lengths 5, 100, 0
    Tensor pos = arange(S).view({1, S}), len = Tensor::from_vector(std::vector<int64_t>{5, 100, 0}).view({B, 1});
    Tensor mask = ge(pos + len, S).view({B, 1, 1, S});
    auto kl = kernels::flash_key_lengths(q, k, mask);
    CHECK_FALSE(kl.exact);
    REQUIRE(kl.len.defined());
    CHECK(kl.len.to_vector<int64_t>() == std::vector<int64_t>{100, 100, 100, 100, 0, 0});
    SdpaOptions o;
    o.attn_mask = mask;
    check_close(run_sdpa(q, k, v, up, o, true), run_sdpa(q, k, v, up, o, false), 1e-11);
  }
  SUBCASE("attn_mask (L, S) and padding merged into (B, 1, L, S)") {
    Tensor am = gt(rand({L, S}, DType::f64, &g), 0.4);
    const std::vector<int64_t> lengths{64, 31, 100};
    Tensor mask = logical_and(am, prefix_mask(lengths, S));  // (B, 1, L, S)
    // Expected bound: 1 + the last column j < length that some row of `am` allows.
    auto a = am.to_vector<bool>();
    std::vector<int64_t> want;
    for (int64_t n : lengths) {
      int64_t bound = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < L; ++i)
          if (a[static_cast<std::size_t>(i * S + j)]) bound = j + 1;
      want.push_back(bound), want.push_back(bound);  // h = 2 slices per batch row
    }
    auto kl = kernels::flash_key_lengths(q, k, mask);
    CHECK_FALSE(kl.exact);
    REQUIRE(kl.len.defined());
    CHECK(kl.len.to_vector<int64_t>() == want);
    SdpaOptions o;
    o.attn_mask = mask;
    o.causal = true;
    check_close(run_sdpa(q, k, v, up, o, true), run_sdpa(q, k, v, up, o, false), 1e-11);
  }
  SUBCASE("no key padded: the mask is dropped, nothing skipped") {
    Tensor mask = prefix_mask({S, S, S}, S);
    auto kl = kernels::flash_key_lengths(q, k, mask);
    CHECK(kl.exact);
    CHECK_FALSE(kl.len.defined());
    SdpaOptions o;
    o.attn_mask = mask;
    check_close(run_sdpa(q, k, v, up, o, true), run_sdpa(q, k, v, up, o, false), 1e-11);
  }
  SUBCASE("a float bias on every key: no lengths") {
    Tensor mask = randn({L, S}, DType::f64, &g);
    auto kl = kernels::flash_key_lengths(q, k, mask);
    CHECK_FALSE(kl.exact);
    CHECK_FALSE(kl.len.defined());
  }
}

TEST_CASE("double backward through the fused kernel with a padding mask uses that mask") {
  // create_graph differentiates the composite path with the saved (original) mask, even
  // though the kernels got lengths only.
  Generator g(6);
  Tensor q = randn({2, 2, 9, 4}, DType::f64, &g).requires_grad_(), k = randn({2, 2, 70, 4}, DType::f64, &g),
         v = randn({2, 2, 70, 4}, DType::f64, &g).requires_grad_();
  SdpaOptions o;
  o.attn_mask = prefix_mask({66, 3}, 70);
  auto second = [&](bool fused) {
    SdpaOptions oo = o;
    oo.fused = fused;
    Tensor out = ag::detail::sdpa_causal_and_mask(q, k, v, oo).first;
    Tensor dq = grad({sum(out * out)}, {q}, {}, true, true)[0];
    return grad({sum(dq * dq)}, {v});
  };
  CHECK(max_abs_diff(second(true)[0], second(false)[0]) < 1e-10);
}

TEST_CASE("skipped tiles are never read: NaN in padded K/V rows stays out") {
  // Composite attention (and the kernel reading the mask) multiply the zero weight of a
  // padded key by its V row: 0 * NaN = NaN reaches the output. With lengths the kernels
  // never read those rows (the tiles past the length skipped, the boundary tile cut).
  Generator g(5);
  const int64_t B = 3, h = 2, L = 80, S = 140, d = 8;
  const std::vector<int64_t> lengths{63, 65, 128};
  Tensor keep = keep_mask_from_lengths(Tensor::from_vector(lengths), S).view({B, 1, S, 1});
  Tensor q = randn({B, h, L, d}, DType::f64, &g).requires_grad_();
  Tensor k0 = randn({B, h, S, d}, DType::f64, &g), v0 = randn({B, h, S, d}, DType::f64, &g);
  Tensor k = where(keep, k0, NAN).requires_grad_(), v = where(keep, v0, NAN).requires_grad_();
  Tensor kc = k0.clone().requires_grad_(), vc = v0.clone().requires_grad_();
  Tensor up = randn({B, h, L, d}, DType::f64, &g);
  SdpaOptions o;
  o.attn_mask = prefix_mask(lengths, S);
  o.causal = true;
  o.causal_variant = CausalVariant::lower_right;
  Grads4 nan_in = run_sdpa(q, k, v, up, o, true);
  Grads4 clean = run_sdpa(q, kc, vc, up, o, false);  // composite path, finite padded rows
  check_close(nan_in, clean, 1e-11);                 // NaN anywhere would fail here
  Tensor pad = logical_not(keep);
  CHECK(max_abs_diff(where(pad, nan_in.dk, 0.0), zeros_like(nan_in.dk)) == 0.0);  // really zero, not NaN
  CHECK(max_abs_diff(where(pad, nan_in.dv, 0.0), zeros_like(nan_in.dv)) == 0.0);

  // The same kernel without lengths reads the padded V rows: the check above can fail.
  NoGradGuard ng;
  kernels::FlashConfig cfg;
  cfg.scale = 1.0 / std::sqrt(8.0);
  cfg.bool_mask = true;
  Tensor read_all = kernels::flash_attention_forward(q, k, v, o.attn_mask, cfg).out;
  CHECK(std::isnan(max_abs_diff(read_all, clean.out)));
}

TEST_CASE("padding lengths with dropout: the same dropout mask as the mask-reading kernel") {
  // Dropout factors are a hash of (seed, slice, i, j) with the full S in the index, so
  // skipping tiles leaves every kept weight's factor unchanged. Run the kernel with the
  // mask tensor (no lengths, as before) and with lengths only, same seed.
  Generator g(12);
  const int64_t B = 2, h = 3, L = 70, S = 130, d = 5;
  Tensor q = randn({B, h, L, d}, DType::f64, &g), k = randn({B, h, S, d}, DType::f64, &g),
         v = randn({B, h, S, d}, DType::f64, &g), dout = randn({B, h, L, d}, DType::f64, &g);
  Tensor mask = prefix_mask({65, 0}, S);
  kernels::FlashConfig with_mask;
  with_mask.scale = 0.4;
  with_mask.causal = true;
  with_mask.bool_mask = true;
  with_mask.dropout_p = 0.3;
  with_mask.seed = 0x1234567890abcdefull;
  kernels::FlashConfig with_len = with_mask;
  with_len.bool_mask = false;
  auto kl = kernels::flash_key_lengths(q, k, mask);
  REQUIRE(kl.exact);
  with_len.key_len = kl.len;
  auto a = kernels::flash_attention_forward(q, k, v, mask, with_mask);
  auto b = kernels::flash_attention_forward(q, k, v, Tensor{}, with_len);
  CHECK(max_abs_diff(a.out, b.out) < 1e-12);
  CHECK(max_abs_diff(exp(a.lse), exp(b.lse)) < 1e-10);  // exp: the empty slice's lse is -inf in both
  auto ga = kernels::flash_attention_backward(q, k, v, mask, with_mask, a.out, a.lse, dout);
  auto gb = kernels::flash_attention_backward(q, k, v, Tensor{}, with_len, b.out, b.lse, dout);
  CHECK(max_abs_diff(ga.dq, gb.dq) < 1e-12);
  CHECK(max_abs_diff(ga.dk, gb.dk) < 1e-12);
  CHECK(max_abs_diff(ga.dv, gb.dv) < 1e-12);
  // It does drop: without dropout the output differs.
  kernels::FlashConfig no_drop = with_len;
  no_drop.dropout_p = 0;
  CHECK(max_abs_diff(kernels::flash_attention_forward(q, k, v, Tensor{}, no_drop).out, b.out) > 1e-3);
}

TEST_CASE("MultiheadAttention with key_padding_mask skips padded keys") {
  // Cross-attention whose padded key/value inputs hold NaN: the in-projection keeps the
  // NaN in those rows, and the output stays equal to the one with finite padding.
  Generator g(2);
  const int64_t B = 3, L = 70, S = 130, E = 16;
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, 2));
  mha->to(DType::f64);
  const std::vector<int64_t> lengths{64, 1, 129};
  Tensor real = keep_mask_from_lengths(Tensor::from_vector(lengths), S);  // (B, S)
  Tensor x = randn({B, L, E}, DType::f64, &g).requires_grad_(), mem = randn({B, S, E}, DType::f64, &g);
  Tensor mem_nan = where(real.view({B, S, 1}), mem, NAN);
  nn::AttentionArgs args;
  args.key_padding_mask = logical_not(real);  // PyTorch's meaning: true = ignore
  args.causal = true;
  Tensor out_nan = mha(x, mem_nan, mem_nan, args).first;
  Tensor out = mha(x, mem, mem, args).first;
  CHECK(max_abs_diff(out_nan, out) < 1e-12);
  auto gx = grad({sum(out_nan)}, {x});
  CHECK(std::isfinite(sum(gx[0]).item<double>()));
}
