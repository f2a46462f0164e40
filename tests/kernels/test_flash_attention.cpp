// The fused attention kernel against the composite path (matmul, masks, softmax,
// matmul): forward values and gradients in float64, masks included, and float64
// gradcheck of the fused path itself. Shapes cross the 64 x 64 tile edges.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "kernels/dispatch.h"
#include "kernels/flash_attention.h"
#include "attograd/detail/attention.h"  // sdpa_causal_and_mask: causal with attn_mask, the modules' entry
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace ag;

using test_util::max_abs_diff;

namespace {

struct Case {
  const char* name;
  Shape q, k, v;
  int mask;  // 0 none, 1 bool (with fully masked query rows), 2 float (with -inf)
  bool causal;
};

Tensor make_mask(int kind, int64_t L, int64_t S, Generator& g) {
  if (kind == 0) return {};
  Tensor r = rand({L, S}, DType::f64, &g);
  Tensor allowed = gt(r, 0.3);
  allowed.select(0, 1).fill_(0.0);  // query 1 sees no key at all
  if (kind == 1) return allowed;
  return where(allowed, r, -INFINITY);
}

}  // namespace

TEST_CASE("fused attention equals the composite path, values and gradients") {
  const Case cases[] = {
      {"small, no mask", {2, 3, 5, 4}, {2, 3, 7, 4}, {2, 3, 7, 6}, 0, false},
      {"causal, L = S across tiles", {1, 2, 130, 8}, {1, 2, 130, 8}, {1, 2, 130, 8}, 0, true},
      {"bool mask with an empty row", {2, 1, 70, 4}, {2, 1, 90, 4}, {2, 1, 90, 3}, 1, false},
      {"float mask with -inf, causal", {1, 2, 66, 4}, {1, 2, 80, 4}, {1, 2, 80, 4}, 2, true},
      {"3-D", {3, 65, 8}, {3, 65, 8}, {3, 65, 5}, 0, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Generator g(11);
    Tensor q = randn(c.q, DType::f64, &g).requires_grad_(), k = randn(c.k, DType::f64, &g).requires_grad_(),
           v = randn(c.v, DType::f64, &g).requires_grad_();
    SdpaOptions o;
    o.attn_mask = make_mask(c.mask, c.q[c.q.size() - 2], c.k[c.k.size() - 2], g);
    o.causal = c.causal;
    Shape out_shape = c.q;  // (..., L, dv)
    out_shape[out_shape.size() - 1] = c.v[c.v.size() - 1];
    Tensor up = randn(out_shape, DType::f64, &g);
    auto run = [&](bool fused) {
      SdpaOptions oo = o;
      oo.fused = fused;
      Tensor out = ag::detail::sdpa_causal_and_mask(q, k, v, oo).first;
      auto gr = grad({sum(out * up)}, {q, k, v});
      return std::make_tuple(out, gr[0], gr[1], gr[2]);
    };
    auto [o1, q1, k1, v1] = run(true);
    auto [o2, q2, k2, v2] = run(false);
    CHECK(o1.grad_fn()->name == std::string("scaled_dot_product_attention"));  // the fused node
    CHECK(max_abs_diff(o1, o2) < 1e-12);
    CHECK(max_abs_diff(q1, q2) < 1e-11);
    CHECK(max_abs_diff(k1, k2) < 1e-11);
    CHECK(max_abs_diff(v1, v2) < 1e-11);
    if (c.mask != 0) {  // the fully masked query row: zero output, zero gradient
      CHECK(max_abs_diff(o1.select(-2, 1), zeros_like(o1.select(-2, 1))) == 0.0);
      CHECK(max_abs_diff(q1.select(-2, 1), zeros_like(q1.select(-2, 1))) == 0.0);
    }
  }
}

TEST_CASE("fused attention passes float64 gradcheck, on head-split views") {
  Generator g(5);
  // (B, L, h*d) projections split into heads by a transposed view, as MultiheadAttention does.
  Tensor x = randn({2, 5, 6}, DType::f64, &g).requires_grad_();
  Tensor y = randn({2, 4, 6}, DType::f64, &g).requires_grad_();
  Tensor mask = gt(rand({5, 4}, DType::f64, &g), 0.2);
  auto fn = [&](const std::vector<Tensor>& in) {
    Tensor q = in[0].reshape({2, 5, 2, 3}).transpose(1, 2), k = in[1].reshape({2, 4, 2, 3}).transpose(1, 2);
    SdpaOptions o;
    o.attn_mask = mask;
    return scaled_dot_product_attention(q, k, k, o).first;
  };
  CHECK(fn({x, y}).grad_fn()->name == std::string("scaled_dot_product_attention"));
  auto r = gradcheck(fn, {x, y}, {.name = "fused attention"});
  CHECK_MESSAGE(r.ok, r.message);
  auto rc = gradcheck(
      [&](const std::vector<Tensor>& in) {
        SdpaOptions o;
        o.causal = true;
        return scaled_dot_product_attention(in[0], in[1], in[1], o).first;
      },
      {x, y}, {.name = "fused attention, causal, L > S"});
  CHECK_MESSAGE(rc.ok, rc.message);
}

TEST_CASE("fused attention lays out its output and gradients like q; strided dO and O are read in place") {
  // q, k, v as modules make them: (B, H, L, d) views of (B, L, H, d) projections. The
  // output and the gradients come out in that layout (PyTorch's empty_like), so merging
  // the heads back is a view; every value is the contiguous inputs' bit for bit, for any
  // upstream gradient layout (heads-last, contiguous, expanded), in f64, f32 and bf16,
  // with GQA groups (2 kv heads for 4), causal across a tile edge (L 70).
  for (DType dt : {DType::f64, DType::f32, DType::bf16}) {
    CAPTURE(dt);
    Generator g(21);
    const int64_t B = 2, L = 70, d = 8;
    auto proj = [&](int64_t heads) { return randn({B, L, heads, d}, DType::f32, &g).to(dt); };
    Tensor qb = proj(4), kb = proj(2), vb = proj(2);
    Tensor up_merged = randn({B, L, 4 * d}, DType::f32, &g).to(dt);  // through the heads' merge: dO heads-last
    Tensor up_contig = randn({B, 4, L, d}, DType::f32, &g).to(dt);
    SdpaOptions o;
    o.causal = true;
    o.enable_gqa = true;
    auto run = [&](bool heads_last, const Tensor& up) {
      Tensor q = qb.detach().requires_grad_(), k = kb.detach().requires_grad_(), v = vb.detach().requires_grad_();
      auto view = [&](const Tensor& t) { return heads_last ? t.transpose(1, 2) : t.transpose(1, 2).contiguous(); };
      Tensor out = scaled_dot_product_attention(view(q), view(k), view(v), o).first;
      if (!up.defined())
        sum(out).backward();  // an expanded upstream gradient (strides 0)
      else if (up.dim() == 3)
        sum(out.transpose(1, 2).reshape({B, L, 4 * d}) * up).backward();
      else
        out.backward(up);
      return std::make_tuple(out, q.grad(), k.grad(), v.grad());
    };
    // Each upstream form against its values as a contiguous dO and contiguous inputs.
    const Tensor dense_merged = up_merged.reshape({B, L, 4, d}).transpose(1, 2).contiguous();
    const Tensor dense_ones = ones({B, 4, L, d}, DType::f32).to(dt);
    const std::pair<Tensor, Tensor> forms[] = {{up_merged, dense_merged}, {up_contig, up_contig}, {{}, dense_ones}};
    for (const auto& [up, dense] : forms) {
      auto [o1, q1, k1, v1] = run(true, up);
      auto [o2, q2, k2, v2] = run(false, dense);
      CHECK(o1.grad_fn()->name == std::string("scaled_dot_product_attention"));
      CHECK(o1.transpose(1, 2).is_contiguous());  // (B, L, H, d): merging heads is a view
      CHECK(o2.is_contiguous());                  // contiguous q: a contiguous output
      CHECK(max_abs_diff(o1, o2) == 0.0);
      CHECK(max_abs_diff(q1, q2) == 0.0);
      CHECK(max_abs_diff(k1, k2) == 0.0);
      CHECK(max_abs_diff(v1, v2) == 0.0);
    }
  }
}

TEST_CASE("fused attention with q, k, v expanded along their rows (row stride 0) equals the composite") {
  // BLAS refuses a leading dimension of 0; the kernel copies such operands first. L 70
  // crosses a tile edge; L 3 keeps the NT product that reads k's rows in place.
  for (DType dt : {DType::f64, DType::f32, DType::bf16}) {
    for (int64_t L : {3, 70}) {
      CAPTURE(dt);
      CAPTURE(L);
      Generator g(31);
      auto one_row = [&](int64_t rows) {
        return randn({2, 2, 1, 8}, DType::f32, &g).to(dt).expand({2, 2, rows, 8}).requires_grad_();
      };
      Tensor q = one_row(L), k = one_row(40), v = randn({2, 2, 40, 8}, DType::f32, &g).to(dt).requires_grad_();
      auto run = [&](bool fused) {
        SdpaOptions o;
        o.fused = fused;
        Tensor out = scaled_dot_product_attention(q, k, v, o).first;
        auto gr = grad({sum(out.to(DType::f64))}, {q, k, v});
        return std::make_tuple(out.to(DType::f64), gr[0], gr[1], gr[2]);
      };
      auto [o1, q1, k1, v1] = run(true);
      auto [o2, q2, k2, v2] = run(false);
      auto close = [&](const Tensor& a, const Tensor& b) {  // bf16: two roundings apart
        return dt == DType::bf16 ? allclose(a.to(DType::f64), b.to(DType::f64), 0.02, 0.02)
                                 : max_abs_diff(a.to(DType::f64), b.to(DType::f64)) < 1e-5;
      };
      CHECK(close(o1, o2));
      CHECK(close(q1, q2));
      CHECK(close(k1, k2));
      CHECK(close(v1, v2));
    }
  }
}

TEST_CASE("the composite path is used when weights, dropout or a mask gradient are asked for") {
  Tensor q = randn({1, 3, 2}, DType::f64), k = randn({1, 4, 2}, DType::f64);
  SdpaOptions o;
  o.need_weights = true;
  auto [out, w] = scaled_dot_product_attention(q, k, k, o);
  CHECK(w.defined());
  CHECK(w.shape() == Shape{1, 3, 4});
  Tensor fm = zeros({3, 4}, DType::f64).requires_grad_();
  SdpaOptions om;
  om.attn_mask = fm;
  Tensor qq = q.detach().requires_grad_();
  sum(scaled_dot_product_attention(qq, k, k, om).first).backward();
  CHECK(fm.grad().defined());  // gradient reached the float mask through the composite path
}

TEST_CASE("fused attention with dropout: gradcheck, repeatable masks, unbiased on average") {
  Generator g(21);
  Tensor q = randn({1, 2, 70, 3}, DType::f64, &g).requires_grad_(), k = randn({1, 2, 67, 3}, DType::f64, &g),
         v = randn({1, 2, 67, 2}, DType::f64, &g).requires_grad_();
  Tensor mask = gt(rand({70, 67}, DType::f64, &g), 0.1);
  Generator drop_gen(3);
  auto fn = [&](const std::vector<Tensor>& in) {
    drop_gen.manual_seed(3);  // the same mask on every evaluation
    SdpaOptions o;
    o.attn_mask = mask;
    o.causal = true;
    o.dropout_p = 0.25;
    o.generator = &drop_gen;
    return ag::detail::sdpa_causal_and_mask(in[0], k, in[1], o).first;
  };
  Tensor a = fn({q, v}), b = fn({q, v});
  CHECK(a.grad_fn()->name == std::string("scaled_dot_product_attention"));  // fused, dropout included
  CHECK(max_abs_diff(a, b) == 0.0);
  auto r = gradcheck(fn, {q, v}, {.name = "fused attention with dropout"});
  CHECK_MESSAGE(r.ok, r.message);

  // E[dropout(weights)] = weights: the mean over many masks approaches the plain output.
  NoGradGuard no_grad;
  Tensor qs = randn({1, 1, 4, 3}, DType::f64, &g), ks = randn({1, 1, 5, 3}, DType::f64, &g),
         vs = randn({1, 1, 5, 2}, DType::f64, &g);
  Tensor plain = scaled_dot_product_attention(qs, ks, vs).first;
  Tensor acc = zeros_like(plain);
  Generator seeds(8);
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    SdpaOptions o;
    o.dropout_p = 0.5;
    o.generator = &seeds;
    acc = acc + scaled_dot_product_attention(qs, ks, vs, o).first;
  }
  CHECK(max_abs_diff(acc / static_cast<double>(n), plain) < 0.06);
  SdpaOptions once;
  once.dropout_p = 0.5;
  once.generator = &seeds;
  CHECK(max_abs_diff(scaled_dot_product_attention(qs, ks, vs, once).first, plain) > 1e-3);  // it does drop
}

// ---- NaN in, NaN out (issue 23) ----------------------------------------------------
// NaN in one query row, one key or one value element, on every path: the fused kernel at
// each vector level (one tile or several, K^T copied or not, decode L = 1), bool and float
// masks, causal (both variants), padding lengths (keys skipped), and the composite path.
// The reference is PyTorch's math path: a query row with a NaN score among its visible keys
// is NaN; a masked key's score never counts; a fully masked row stays zeros (MASKS.md).
namespace {

struct NanCase {
  const char* name;
  int64_t L, S;
  int mask;    // 0 none, 1 bool (query 1 sees nothing), 2 float, 3 padding lengths (60, S)
  int causal;  // 0 none, 1 upper_left, 2 lower_right
};

// (B, 1, L, S) true where query i of slice b sees key j: the clean weights are > 0.
std::vector<double> visible(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& o) {
  SdpaOptions w = o;
  w.need_weights = true;
  return scaled_dot_product_attention(q, k, v, w).second.to(DType::f64).to_vector<double>();
}

}  // namespace

TEST_CASE("attention: NaN in q, k or v gives NaN where PyTorch's math path does, on every path") {
  const NanCase cases[] = {
      {"decode L = 1, causal lower_right", 1, 100, 0, 2},
      {"small", 5, 7, 0, 0},
      {"tiles, K^T copied", 70, 90, 0, 0},
      {"bool mask, an empty row", 70, 90, 1, 0},
      {"float mask", 20, 40, 2, 0},
      {"causal", 70, 70, 0, 1},
      {"causal lower_right", 20, 70, 0, 2},
      {"padding lengths", 20, 90, 3, 0},
  };
  const int64_t B = 2, d = 4, dv = 3;
  kernels::SimdLevel saved = kernels::simd_level();
  for (kernels::SimdLevel level : kernels::available_simd_levels()) {
    kernels::set_simd_level(level);
    for (DType dt : {DType::f32, DType::f64})
      for (const NanCase& c : cases)
        for (int where_nan = 0; where_nan < 3; ++where_nan)  // q row, k row, v element
          for (bool fused : {true, false}) {
            CAPTURE(kernels::to_string(level));
            CAPTURE(dt);
            INFO((std::string(c.name) + ", NaN in " + "qkv"[where_nan] + (fused ? ", fused" : ", composite")));
            Generator g(7);
            Tensor q = randn({B, 1, c.L, d}, dt, &g), k = randn({B, 1, c.S, d}, dt, &g),
                   v = randn({B, 1, c.S, dv}, dt, &g);
            SdpaOptions o;
            o.causal = c.causal != 0;
            o.causal_variant = c.causal == 2 ? CausalVariant::lower_right : CausalVariant::upper_left;
            if (c.mask == 1 || c.mask == 2)
              o.attn_mask = make_mask(c.mask, c.L, c.S, g).to(c.mask == 1 ? DType::b8 : dt);
            if (c.mask == 3)
              o.attn_mask = keep_mask_from_lengths(Tensor::from_vector<int64_t>({60, c.S}), c.S).view({B, 1, 1, c.S});
            const std::vector<double> vis = visible(q, k, v, o);
            // A float mask adds: NaN + -inf is NaN, so a NaN score counts even where masked.
            auto sees = [&](int64_t b, int64_t i, int64_t j) {
              return c.mask == 2 || vis[size_t((b * c.L + i) * c.S + j)] > 0;
            };
            const double nan = std::nan("");
            const int64_t j0 = std::min<int64_t>(3, c.S - 1), c0 = 1, i_last = c.L - 1;
            if (where_nan == 0) {
              q.select(0, 0).select(1, i_last).fill_(nan);
              if (c.L > 1) q.select(0, 0).select(1, 1).fill_(nan);  // the empty row with a bool mask
            } else if (where_nan == 1) {
              k.select(0, 0).select(1, j0).fill_(nan);
            } else {
              v.select(0, 0).select(1, j0).select(1, c0).fill_(nan);
            }
            o.fused = fused;
            const std::vector<double> out =
                ag::detail::sdpa_causal_and_mask(q, k, v, o).first.to(DType::f64).to_vector<double>();
            int wrong = 0;
            for (int64_t b = 0; b < B; ++b)
              for (int64_t i = 0; i < c.L; ++i) {
                bool any = false;
                for (int64_t j = 0; j < c.S; ++j) any = any || sees(b, i, j);
                for (int64_t col = 0; col < dv; ++col) {
                  const double x = out[size_t((b * c.L + i) * dv + col)];
                  bool want_nan = false, either = false;
                  if (b == 0 && where_nan == 0) want_nan = (i == i_last || i == 1) && any;
                  if (b == 0 && where_nan == 1) want_nan = sees(b, i, j0);
                  if (b == 0 && where_nan == 2 && col == c0) {
                    want_nan = vis[size_t((b * c.L + i) * c.S + j0)] > 0;
                    either = !want_nan;  // 0 * NaN: the composite reaches it, a skipped tile not
                  }
                  if (!either && std::isnan(x) != want_nan) ++wrong;
                  if (!std::isnan(x) && !std::isfinite(x)) ++wrong;
                }
              }
            CHECK(wrong == 0);
          }
  }
  kernels::set_simd_level(saved);
}

// The 16-bit forward and backward widen each slice's rows into f32 scratch as they go;
// their contract is the f32 kernel on the widened tensors, each result rounded once: the
// same bits.
// Decoding's K/V are narrowed views of a longer cache, causal lower-right; grouped
// heads share a K/V slice; 70 queries take the transposed-K path; key lengths leave
// NaN rows that must never be read; dropout hashes the same indices.
TEST_CASE("16-bit fused attention: the f32 kernel's bits on widened inputs, rounded once") {
  struct Case16 {
    const char* name;
    Shape q, kv;  // kv: the cache's (..., capacity, d); S of them in use
    int64_t S, group;
    int mask;  // 0 none, 1 bool, 2 float (in the 16-bit dtype), 3 key lengths with NaN past them
    bool causal;
    double dropout;
  };
  const Case16 cases[] = {
      {"decode step, narrowed cache", {2, 4, 1, 32}, {2, 4, 64, 32}, 37, 1, 0, true, 0.0},
      {"grouped heads", {2, 4, 5, 8}, {2, 2, 12, 8}, 9, 2, 0, true, 0.0},
      {"70 queries, bool mask", {1, 2, 70, 8}, {1, 2, 90, 8}, 90, 1, 1, false, 0.0},
      {"float mask", {1, 2, 20, 8}, {1, 2, 33, 8}, 33, 1, 2, false, 0.0},
      {"key lengths, NaN past them", {2, 1, 3, 8}, {2, 1, 40, 8}, 40, 1, 3, false, 0.0},
      {"dropout", {1, 2, 6, 8}, {1, 2, 10, 8}, 10, 1, 0, false, 0.3},
  };
  for (DType dt : {DType::bf16, DType::f16}) {
    for (const auto& c : cases) {
      INFO(name(dt), " ", c.name);
      Generator g(16);
      const int64_t L = c.q[c.q.size() - 2];
      Tensor q = randn(c.q, DType::f32, &g).to(dt);
      Tensor k = randn(c.kv, DType::f32, &g).to(dt).narrow(-2, 0, c.S);
      Tensor v = randn(c.kv, DType::f32, &g).to(dt).narrow(-2, 0, c.S);
      kernels::FlashConfig cfg;
      cfg.scale = 0.3;
      cfg.group = c.group;
      cfg.causal = c.causal;
      cfg.causal_offset = c.causal ? c.S - L : 0;
      cfg.dropout_p = c.dropout;
      cfg.seed = 77;
      Tensor mask;
      if (c.mask == 1 || c.mask == 2) mask = make_mask(c.mask, L, c.S, g).to(c.mask == 1 ? DType::b8 : dt);
      cfg.bool_mask = c.mask == 1;
      if (c.mask == 3) {
        std::vector<int64_t> lengths{25, 1};
        Tensor keep = keep_mask_from_lengths(Tensor::from_vector(lengths), c.S).view({2, 1, 1, c.S});
        auto kl = kernels::flash_key_lengths(q, k, keep);
        REQUIRE(kl.exact);
        cfg.key_len = kl.len;
        k = where(keep.view({2, 1, c.S, 1}), k, NAN);  // rows past each length: never read
        v = where(keep.view({2, 1, c.S, 1}), v, NAN);
      }
      kernels::FlashForward got = kernels::flash_attention_forward(q, k, v, mask, cfg);
      kernels::FlashForward ref = kernels::flash_attention_forward(
          q.to(DType::f32), k.to(DType::f32), v.to(DType::f32),
          mask.defined() ? mask.to(mask.dtype() == DType::b8 ? DType::b8 : DType::f32) : mask, cfg);
      CHECK(got.out.dtype() == dt);
      CHECK(got.lse.dtype() == DType::f32);
      Tensor want = ref.out.to(dt).to(DType::f32), have = got.out.to(DType::f32);
      CHECK(!std::isnan(sum(have).item<double>()));
      CHECK(max_abs_diff(have, want) == 0.0);
      CHECK(max_abs_diff(exp(got.lse), exp(ref.lse)) == 0.0);
      // The backward's contract is the same: the f32 kernel on widened q, k, v, out and
      // dout, each gradient rounded once (dK, dV after their group is summed).
      const Tensor dout = randn(got.out.shape(), DType::f32, &g).to(dt);
      kernels::FlashGrads gb = kernels::flash_attention_backward(q, k, v, mask, cfg, got.out, got.lse, dout);
      kernels::FlashGrads rb = kernels::flash_attention_backward(
          q.to(DType::f32), k.to(DType::f32), v.to(DType::f32),
          mask.defined() ? mask.to(mask.dtype() == DType::b8 ? DType::b8 : DType::f32) : mask, cfg,
          got.out.to(DType::f32), got.lse, dout.to(DType::f32));
      const std::pair<Tensor, Tensor> grads[] = {{gb.dq, rb.dq}, {gb.dk, rb.dk}, {gb.dv, rb.dv}};
      for (const auto& [h16, r32] : grads) {
        CHECK(h16.dtype() == dt);
        CHECK(h16.shape() == r32.shape());
        CHECK(!std::isnan(sum(h16.to(DType::f32)).item<double>()));
        CHECK(max_abs_diff(h16.to(DType::f32), r32.to(dt).to(DType::f32)) == 0.0);
      }
    }
  }
}
