// LLaMA's building blocks: rotary position embedding, RMS norm (fused kernel against its
// composite) and the SwiGLU feed-forward, against PyTorch fixtures (rope, rms_norm,
// swiglu in tools/make_fixtures.py) and their defining properties.
// Shape legend: B batch, h heads, L positions, d head dim, E model dim, H hidden dim.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;
using test_util::max_abs_diff;

namespace {

// The rotation written with primitives (HF's formula), for comparison with the op.
Tensor rotate_half_composite(const Tensor& x) {
  const int64_t h = x.shape()[x.dim() - 1] / 2;
  return cat({neg(narrow(x, -1, h, h)), narrow(x, -1, 0, h)}, -1);
}
Tensor rope_composite(const Tensor& x, const Tensor& c, const Tensor& s) {
  return x * c + rotate_half_composite(x) * s;
}

// PyTorch 2.4's rms_norm composite.
Tensor rms_norm_composite(const Tensor& x, int64_t n_dims, const Tensor& w, double eps) {
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - n_dims; i < x.dim(); ++i) dims.push_back(i);
  Tensor y = x * rsqrt(mean(square(x), dims, true) + eps);
  return w.defined() ? y * w : y;
}

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(); }

// Element (i, j) of a 2-D tensor.
double at(const Tensor& t, int64_t i, int64_t j) {
  return t.contiguous().to_vector<double>()[static_cast<std::size_t>(i * t.shape()[1] + j)];
}

}  // namespace

// ---- rotary embedding ------------------------------------------------------------------

TEST_CASE("rotary_embedding matches Hugging Face's rotate_half formula in PyTorch (fixture rope)") {
  const test_util::Fixture f = test_util::load_fixture("rope");
  struct Case {
    const char* name;
    double base;
    int64_t offset;
  };
  for (const Case& c : {Case{"base10000.offset0", 10000.0, 0}, Case{"base500.offset7", 500.0, 7}}) {
    const std::string p = c.name;
    INFO("case ", p);
    Tensor x = leaf(f.at(p + ".input.x"));  // (B, h, L, d)
    const int64_t L = x.shape()[2], d = x.shape()[3];
    auto [cs, sn] = rotary_cos_sin(L, d, c.base, c.offset, DType::f64);
    CHECK(max_abs_diff(cs, f.at(p + ".cos")) < 1e-14);
    CHECK(max_abs_diff(sn, f.at(p + ".sin")) < 1e-14);
    Tensor y = rotary_embedding(x, cs, sn);
    CHECK(y.grad_fn()->name == std::string("rotary_embedding"));
    CHECK(max_abs_diff(y, f.at(p + ".output")) < 1e-13);
    sum(y * f.at(p + ".upstream")).backward();
    CHECK(max_abs_diff(x.grad(), f.at(p + ".grad.input.x")) < 1e-13);

    // The module, tables cached for 16 positions, read at the offset.
    nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(d).base(c.base).max_position(16));
    CHECK(max_abs_diff(rope(x.detach(), c.offset), f.at(p + ".output")) < 1e-13);
    // f32: tables and rotation in float, within float rounding of the reference.
    Tensor y32 = rope(x.detach().to(DType::f32), c.offset);
    CHECK(y32.dtype() == DType::f32);
    CHECK(max_abs_diff(y32, f.at(p + ".output")) < 1e-5);
  }
}

TEST_CASE("rotary_embedding: q . k depends only on the relative position") {
  // Scores of every (query m, key n) pair at positions m + s and n + s equal those at m
  // and n, for shifts s up to 1000: R(m)^T R(n) = R(n - m) per frequency pair.
  Generator gen(31);
  const int64_t B = 2, h = 3, L = 6, d = 16;
  Tensor q = randn({B, h, L, d}, DType::f64, &gen), k = randn({B, h, L, d}, DType::f64, &gen);
  auto scores = [&](int64_t offset) {
    auto [c, s] = rotary_cos_sin(L, d, 10000.0, offset, DType::f64);
    return matmul(rotary_embedding(q, c, s), rotary_embedding(k, c, s).transpose(-1, -2));  // (B, h, L, L)
  };
  Tensor s0 = scores(0);
  for (int64_t shift : {1, 5, 37, 1000}) {
    INFO("shift ", shift);
    CHECK(max_abs_diff(s0, scores(shift)) < 1e-12);
  }
  // And it does depend on it: the same vector as query at position 0 and key at 0 or 3.
  Tensor c, s;  // not a structured binding: clang before 16 cannot capture one
  std::tie(c, s) = rotary_cos_sin(4, d, 10000.0, 0, DType::f64);
  Tensor v = q.narrow(2, 0, 1);  // (B, h, 1, d)
  auto at_pos = [&](int64_t p) { return rotary_embedding(v, c.narrow(0, p, 1), s.narrow(0, p, 1)); };
  CHECK(max_abs_diff(sum(at_pos(0) * at_pos(0)), sum(at_pos(0) * at_pos(3))) > 1e-3);
  // A rotation keeps each vector's norm.
  Tensor r = rotary_embedding(q.narrow(2, 0, 4), c, s);  // (B, h, 4, d)
  CHECK(max_abs_diff(sum(square(r), {-1}), sum(square(q.narrow(2, 0, 4)), {-1})) < 1e-12);
}

TEST_CASE("rotary_cos_sin: HF's frequencies, offsets slice the longer table, layout of the halves") {
  auto [c, s] = rotary_cos_sin(10, 8, 10000.0, 0, DType::f64);
  CHECK(c.shape() == Shape{10, 8});
  // Column i and i + d/2 share frequency 10000^(-2i/8); row p is position p.
  CHECK(std::abs(at(c, 3, 1) - std::cos(3.0 * std::pow(10000.0, -0.25))) < 1e-15);
  CHECK(std::abs(at(s, 3, 5) - std::sin(3.0 * std::pow(10000.0, -0.25))) < 1e-15);
  CHECK(at(c, 0, 2) == 1.0);
  CHECK(at(s, 0, 2) == 0.0);
  auto [c4, s4] = rotary_cos_sin(3, 8, 10000.0, 4, DType::f64);
  CHECK(max_abs_diff(c4, c.narrow(0, 4, 3)) == 0.0);
  CHECK(max_abs_diff(s4, s.narrow(0, 4, 3)) == 0.0);
  CHECK(rotary_cos_sin(2, 4).first.dtype() == get_default_dtype());
  // bf16 / f16 tables (q and k under autocast): the f64 tables rounded once.
  for (DType half : {DType::bf16, DType::f16}) {
    CAPTURE(half);
    auto [ch, sh] = rotary_cos_sin(10, 8, 10000.0, 0, half);
    CHECK(ch.dtype() == half);
    CHECK(max_abs_diff(ch.to(DType::f64), c.to(half).to(DType::f64)) == 0.0);
    CHECK(max_abs_diff(sh.to(DType::f64), s.to(half).to(DType::f64)) == 0.0);
  }
  CHECK_THROWS_WITH_AS(rotary_cos_sin(2, 4, 10000.0, 0, DType::i64),
                       doctest::Contains("rotary_cos_sin: dtype must be a floating dtype (f64, f32, bf16, f16), got "),
                       DTypeError);
}

TEST_CASE("rotary_embedding: gradients equal the composite's, for x, cos and sin; layouts agree") {
  Generator gen(32);
  Tensor x = leaf(randn({2, 3, 4, 6}, DType::f64, &gen));
  Tensor c = leaf(randn({4, 6}, DType::f64, &gen)), s = leaf(randn({4, 6}, DType::f64, &gen));
  Tensor up = randn({2, 3, 4, 6}, DType::f64, &gen);
  Tensor y1 = rotary_embedding(x, c, s), y2 = rope_composite(x, c, s);
  CHECK(max_abs_diff(y1, y2) < 1e-14);
  auto g1 = grad({sum(y1 * up)}, {x, c, s}), g2 = grad({sum(y2 * up)}, {x, c, s});
  for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(g1[i], g2[i]) < 1e-13);
  // Second derivatives (create_graph): the backward, itself a rotary_embedding, against
  // the composite's.
  Tensor v = randn({2, 3, 4, 6}, DType::f64, &gen);
  auto second = [&](bool op) {
    Tensor y = op ? rotary_embedding(x, c, s) : rope_composite(x, c, s);
    Tensor gx = grad({sum(y * up)}, {x}, {}, true, /*create_graph=*/true)[0];
    if (op) CHECK(gx.grad_fn()->name == std::string("rotary_embedding"));
    return grad({sum(gx * v)}, {c, s});
  };
  auto h1 = second(true), h2 = second(false);
  CHECK(max_abs_diff(h1[0], h2[0]) < 1e-13);
  CHECK(max_abs_diff(h1[1], h2[1]) < 1e-13);
  // (B, L, h, d) with (L, 1, d) tables equals (B, h, L, d) with (L, d) tables, transposed.
  auto [tc, ts] = rotary_cos_sin(4, 6, 10000.0, 3, DType::f64);
  Tensor bhld = rotary_embedding(x.detach(), tc, ts);
  Tensor blhd = rotary_embedding(x.detach().transpose(1, 2), tc.unsqueeze(-2), ts.unsqueeze(-2));
  CHECK(max_abs_diff(blhd.transpose(1, 2), bhld) == 0.0);
}

TEST_CASE("rotary_embedding: errors name the op and the shapes") {
  Tensor c, s;  // not a structured binding: clang before 16 cannot capture one
  std::tie(c, s) = rotary_cos_sin(3, 4, 10000.0, 0, DType::f64);
  Tensor x = zeros({2, 3, 4}, DType::f64);
  std::string e = error_of<ShapeError>([&] { rotary_embedding(zeros({2, 3, 5}, DType::f64), c, s); });
  CHECK(contains(e, "rotary_embedding"));
  CHECK(contains(e, "[2, 3, 5]"));
  e = error_of<ShapeError>([&] { rotary_embedding(x, c, s.narrow(0, 0, 2)); });
  CHECK(contains(e, "[3, 4]"));
  CHECK(contains(e, "[2, 4]"));
  e = error_of<ShapeError>([&] { rotary_embedding(x, c.narrow(0, 0, 2), s.narrow(0, 0, 2)); });
  CHECK(contains(e, "broadcast"));
  CHECK(contains(e, "[2, 3, 4]"));
  e = error_of<ShapeError>([&] { rotary_embedding(x.narrow(1, 0, 1), c, s); });  // tables longer than L
  CHECK(contains(e, "[2, 1, 4]"));
  CHECK(contains(error_of<DTypeError>([&] { rotary_embedding(x.to(DType::f32), c, s); }), "f64"));
  CHECK(contains(error_of<ValueError>([&] { rotary_cos_sin(3, 5); }), "head_dim"));
  CHECK(contains(error_of<ValueError>([&] { rotary_cos_sin(3, 4, 10000.0, -1); }), "offset"));
  CHECK(contains(error_of<ValueError>([&] { nn::RotaryEmbedding(nn::RotaryEmbeddingOptions(7)); }), "head_dim"));
  nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(4));
  CHECK(contains(error_of<ShapeError>([&] { rope(zeros({2, 3, 6})); }), "[2, 3, 6]"));
}

TEST_CASE("nn::RotaryEmbedding caches its tables per length and dtype, outside the state dict") {
  nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(8).base(500.0).max_position(4));
  CHECK(rope->cached_length() == 4);
  CHECK(rope->cached_dtype() == DType::f32);
  CHECK(rope->named_parameters().empty());
  CHECK(rope->named_buffers().empty());
  CHECK(rope->state_dict().size() == 0);

  Generator gen(33);
  Tensor x = randn({1, 2, 3, 8}, DType::f32, &gen);
  auto [c, s] = rotary_cos_sin(3, 8, 500.0, 1, DType::f32);
  CHECK(max_abs_diff(rope(x, 1), rotary_embedding(x, c, s)) == 0.0);
  CHECK(rope->cached_length() == 4);  // positions 1..3 fit: no rebuild
  rope(x, 2);                         // positions 2..4: a longer table
  CHECK(rope->cached_length() == 5);
  CHECK(rope->cached_dtype() == DType::f32);
  Tensor x64 = x.to(DType::f64);
  auto [c64, s64] = rotary_cos_sin(3, 8, 500.0, 2, DType::f64);
  CHECK(max_abs_diff(rope(x64, 2), rotary_embedding(x64, c64, s64)) == 0.0);  // rebuilt in f64
  CHECK(rope->cached_dtype() == DType::f64);
  CHECK(rope->cached_length() == 5);
  auto [vc, vs] = rope->cos_sin(2, 3, DType::f64);  // views of the cache
  CHECK(vc.shape() == Shape{2, 8});
  CHECK(max_abs_diff(vc, c64.narrow(0, 1, 2)) == 0.0);
  std::ostringstream os;
  os << rope;
  CHECK(os.str() == "RotaryEmbedding(head_dim=8, base=500, max_position=4)");
}

// ---- RMS norm ---------------------------------------------------------------------------

TEST_CASE("rms_norm matches PyTorch 2.4's formula (fixture rms_norm), function and module") {
  const test_util::Fixture f = test_util::load_fixture("rms_norm");
  {  // normalized_shape (8), weight, eps 1e-6
    Tensor x = leaf(f.at("last_dim.input.x")), w = leaf(f.at("last_dim.param.weight"));
    Tensor y = rms_norm(x, {8}, w, 1e-6);
    CHECK(y.grad_fn()->name == std::string("rms_norm"));
    CHECK(max_abs_diff(y, f.at("last_dim.output")) < 1e-13);
    sum(y * f.at("last_dim.upstream")).backward();
    CHECK(max_abs_diff(x.grad(), f.at("last_dim.grad.input.x")) < 1e-13);
    CHECK(max_abs_diff(w.grad(), f.at("last_dim.grad.param.weight")) < 1e-12);

    nn::RMSNorm norm(nn::RMSNormOptions({8}).eps(1e-6));
    norm->to(DType::f64);
    TensorMap sd;
    sd.insert("weight", f.at("last_dim.param.weight"));
    norm->load_state_dict(sd);
    Tensor x2 = leaf(f.at("last_dim.input.x"));
    Tensor y2 = norm(x2);
    CHECK(max_abs_diff(y2, f.at("last_dim.output")) < 1e-13);
    sum(y2 * f.at("last_dim.upstream")).backward();
    CHECK(max_abs_diff(norm->weight.grad(), f.at("last_dim.grad.param.weight")) < 1e-12);
  }
  {  // normalized_shape (4, 8), no weight, eps None (finfo(float64).eps)
    Tensor x = leaf(f.at("two_dims_no_weight.input.x"));
    nn::RMSNorm norm(nn::RMSNormOptions({4, 8}).elementwise_affine(false));
    CHECK(norm->named_parameters().empty());
    Tensor y = norm(x);
    CHECK(max_abs_diff(y, f.at("two_dims_no_weight.output")) < 1e-13);
    sum(y * f.at("two_dims_no_weight.upstream")).backward();
    CHECK(max_abs_diff(x.grad(), f.at("two_dims_no_weight.grad.input.x")) < 1e-13);
  }
}

TEST_CASE("fused rms_norm equals the composite formula: values and gradients, f32 and f64") {
  struct Case {
    Shape x, norm;
    bool weight, transposed;
  };
  const Case cases[] = {{{5, 8}, {8}, true, false},
                        {{2, 3, 6}, {6}, false, false},
                        {{2, 3, 6}, {3, 6}, true, false},
                        {{4, 5}, {4}, true, true},  // non-contiguous input (a transposed view)
                        {{64, 300}, {300}, true, false}};
  for (DType dt : {DType::f64, DType::f32}) {
    const bool f64 = dt == DType::f64;
    const double tol_y = f64 ? 1e-13 : 2e-6, tol_g = f64 ? 1e-12 : 2e-5;
    for (const auto& c : cases) {
      INFO("x " << c.x << " normalized " << c.norm << " dtype " << ag::name(dt));
      Generator g(34);
      Tensor x = leaf(randn(c.x, dt, &g) * 3.0 + 1.0);
      Tensor xin = c.transposed ? x.t() : x;
      Tensor w = c.weight ? leaf(randn(c.norm, dt, &g)) : Tensor{};
      Tensor up = randn(xin.shape(), dt, &g);
      std::vector<Tensor> wrt{x};
      if (w.defined()) wrt.push_back(w);
      Tensor y1 = rms_norm(xin, c.norm, w, 1e-5);
      Tensor y2 = rms_norm_composite(xin, c.norm.size(), w, 1e-5);
      CHECK(y1.dtype() == dt);
      CHECK(max_abs_diff(y1, y2) < tol_y);
      auto g1 = grad({sum(y1 * up)}, wrt, {}, /*retain_graph=*/true), g2 = grad({sum(y2 * up)}, wrt);
      for (std::size_t i = 0; i < wrt.size(); ++i) CHECK(max_abs_diff(g1[i], g2[i]) < tol_g * (i ? 10 : 1));
    }
  }
}

TEST_CASE("rms_norm under create_graph: second derivatives equal the composite's") {
  Generator g(35);
  Tensor x = leaf(randn({3, 5}, DType::f64, &g)), w = leaf(randn({5}, DType::f64, &g));
  Tensor up = randn({3, 5}, DType::f64, &g), v = randn({3, 5}, DType::f64, &g);
  auto second = [&](bool fused) {
    Tensor y = fused ? rms_norm(x, {5}, w, 1e-5) : rms_norm_composite(x, 1, w, 1e-5);
    Tensor gx = grad({sum(y * up)}, {x}, {}, true, /*create_graph=*/true)[0];
    return grad({sum(gx * v)}, {x, w});
  };
  auto a = second(true), b = second(false);
  CHECK(max_abs_diff(a[0], b[0]) < 1e-12);
  CHECK(max_abs_diff(a[1], b[1]) < 1e-12);
}

TEST_CASE("rms_norm: eps defaults to the dtype's machine epsilon; errors") {
  // A row of 1e-4: mean(x^2) = 1e-8, so f32's eps 2^-23 dominates:
  // y = 1e-4 / sqrt(1e-8 + 2^-23) = 0.27810...; f64's 2^-52 leaves y = 1 (to 1e-7).
  Tensor x32 = full({2, 3}, 1e-4, DType::f32);
  const double expect = 1e-4 / std::sqrt(1e-8 + std::pow(2.0, -23));
  CHECK(std::abs(at(rms_norm(x32, {3}), 1, 2) - expect) < 1e-6);
  CHECK(max_abs_diff(rms_norm(x32, {3}), rms_norm(x32, {3}, {}, std::pow(2.0, -23))) == 0.0);
  Tensor x64 = full({2, 3}, 1e-4, DType::f64);
  CHECK(max_abs_diff(rms_norm(x64, {3}), rms_norm(x64, {3}, {}, std::pow(2.0, -52))) == 0.0);
  CHECK(std::abs(at(rms_norm(x64, {3}), 0, 0) - 1.0) < 1e-7);

  std::string e = error_of<ShapeError>([&] { rms_norm(zeros({2, 3}), {4}); });
  CHECK(contains(e, "rms_norm"));
  CHECK(contains(e, "[2, 3]"));
  CHECK(contains(e, "[4]"));
  e = error_of<ShapeError>([&] { rms_norm(zeros({2, 3}), {3}, zeros({2})); });
  CHECK(contains(e, "weight shape [2]"));
  CHECK(contains(error_of<DTypeError>([&] { rms_norm(zeros({2, 3}), {3}, zeros({3}, DType::f64)); }), "f64"));
  CHECK(contains(error_of<DTypeError>([&] { rms_norm(zeros({2, 3}, DType::i64), {3}); }), "rms_norm"));
  CHECK(contains(error_of<ValueError>([&] { nn::RMSNorm(nn::RMSNormOptions({})); }), "RMSNorm"));
  std::ostringstream os;
  os << nn::RMSNorm(nn::RMSNormOptions({8}));
  CHECK(os.str() == "RMSNorm([8], eps=None, elementwise_affine=true)");
}

// ---- SwiGLU -----------------------------------------------------------------------------

TEST_CASE("nn::SwiGLU matches LLaMA's feed-forward in PyTorch (fixture swiglu)") {
  const test_util::Fixture f = test_util::load_fixture("swiglu");
  nn::SwiGLU ffn(nn::SwiGLUOptions(6, 10));
  ffn->to(DType::f64);
  TensorMap sd;
  for (auto& [k, v] : f)
    if (k.rfind("param.", 0) == 0) sd.insert(k.substr(6), v);
  ffn->load_state_dict(sd);  // strict: w1.weight, w2.weight, w3.weight
  Tensor x = leaf(f.at("input.x"));
  Tensor y = ffn(x);
  CHECK(max_abs_diff(y, f.at("output")) < 1e-13);
  sum(y * f.at("upstream")).backward();
  CHECK(max_abs_diff(x.grad(), f.at("grad.input.x")) < 1e-13);
  for (auto& n_p : ffn->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO("parameter ", n);
    CHECK(max_abs_diff(p.grad(), f.at("grad.param." + n)) < 1e-12);
  }
}

TEST_CASE("nn::SwiGLU: LLaMA's parameter names, shapes, the bias option, errors") {
  nn::SwiGLU ffn(nn::SwiGLUOptions(4, 12));
  auto params = ffn->named_parameters();
  REQUIRE(params.size() == 3);
  CHECK(params[0].first == "w1.weight");
  CHECK(params[0].second.shape() == Shape{12, 4});
  CHECK(params[1].first == "w2.weight");
  CHECK(params[1].second.shape() == Shape{4, 12});
  CHECK(params[2].first == "w3.weight");
  nn::SwiGLU with_bias(nn::SwiGLUOptions(4, 12).bias(true));
  CHECK(with_bias->named_parameters().size() == 6);
  CHECK(with_bias->state_dict().contains("w2.bias"));
  Tensor x = randn({2, 5, 4});
  CHECK(ffn(x).shape() == Shape{2, 5, 4});
  CHECK(contains(error_of<ShapeError>([&] { ffn(randn({2, 5})); }), "[2, 5]"));
  CHECK(contains(error_of<ValueError>([&] { nn::SwiGLU(nn::SwiGLUOptions(0, 3)); }), "SwiGLU"));
  std::ostringstream os;
  os << ffn;
  CHECK(contains(os.str(), "SwiGLU(dim=4, hidden_dim=12, bias=false)"));
}

TEST_CASE("rms_norm and rotary_embedding kernels give the same bits on 1 and 2 threads") {
  Generator gen(36);
  Tensor x = randn({512, 300}, DType::f32, &gen), w = randn({300}, DType::f32, &gen);  // > 2 grains of rows
  Tensor up = randn({512, 300}, DType::f32, &gen);
  Tensor q = randn({8, 8, 64, 32}, DType::f32, &gen), upq = randn({8, 8, 64, 32}, DType::f32, &gen);
  Tensor c, s;  // not a structured binding: clang before 16 cannot capture one
  std::tie(c, s) = rotary_cos_sin(64, 32);
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor xl = leaf(x), wl = leaf(w), ql = leaf(q);
    Tensor y = rms_norm(xl, {300}, wl), r = rotary_embedding(ql, c, s);
    auto g = grad({y, r}, {xl, wl, ql}, {up, upq});
    return std::vector<Tensor>{y, g[0], g[1], r, g[2]};
  };
  const int before = get_num_threads();
  auto one = run(1), two = run(2);
  set_num_threads(before);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(max_abs_diff(one[i], two[i]) == 0.0);
}
