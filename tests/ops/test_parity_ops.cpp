// Parity with PyTorch 1.13 (the reference tensors in tests/fixtures, see its README):
// masked softmax rows, an Embedding -> Linear -> LayerNorm -> cross_entropy chain, and
// the worked multi-head attention example of nn/ATTENTION.md. Each fixture is replayed in f64
// (to 1e-9 relative) and in f32 (to 1e-4 relative); gradients are those of the stored
// loss, or of sum(output * upstream).
// Legend: B batch, L target length, S source length, E embed dim, h heads, d head dim,
// V vocabulary, C classes.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

// |got - want| <= atol + rtol * |want|, elementwise. atol only keeps elements that are
// zero up to rounding (a softmax weight of 1e-17, a cancelled gradient) from failing a
// purely relative test; it is far below every tensor's scale.
struct Tol {
  double rtol, atol;
};
Tol tol_for(DType t) { return t == DType::f64 ? Tol{1e-9, 1e-13} : Tol{1e-4, 1e-7}; }

// Compares got (f32 or f64) with the f64 reference and returns the worst relative error
// (|got - want| / |want| over elements with |want| > atol). Set AG_PARITY_REPORT=1 to
// print it.
double check_close(const std::string& what, const Tensor& got, const Tensor& want, Tol tol) {
  REQUIRE_MESSAGE(got.defined(), what, ": result is undefined");
  REQUIRE_MESSAGE(got.shape() == want.shape(), what, ": shape ", got.shape(), " != reference ", want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst_rel = 0, worst_abs = 0;
  int64_t bad = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    const double diff = std::abs(g[i] - w[i]);
    if (!(diff <= tol.atol + tol.rtol * std::abs(w[i])) && bad < 0) bad = int64_t(i);
    worst_abs = std::max(worst_abs, diff);
    if (std::abs(w[i]) > tol.atol) worst_rel = std::max(worst_rel, diff / std::abs(w[i]));
  }
  CHECK_MESSAGE(bad < 0, what, " (", got.dtype(), "): element ", bad, " is ", bad < 0 ? 0.0 : g[size_t(bad)],
                ", reference ", bad < 0 ? 0.0 : w[size_t(bad)], " (rtol ", tol.rtol, ", atol ", tol.atol, ")");
  if (std::getenv("AG_PARITY_REPORT"))
    std::printf("  %-40s %-4s max rel %.3e  max abs %.3e\n", what.c_str(), std::string(ag::name(got.dtype())).c_str(),
                worst_rel, worst_abs);
  return worst_rel;
}

// A fresh leaf in `dtype` that requires grad (never the fixture's own tensor).
Tensor leaf(const Tensor& t, DType dtype) { return t.to(dtype).clone().requires_grad_(); }

// Every key of the file that starts with `prefix`, in file order.
std::vector<std::string> keys_with_prefix(const test_util::Fixture& m, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& [k, t] : m)
    if (k.rfind(prefix, 0) == 0) out.push_back(k);
  return out;
}

// Compares every "grad.<name>" of the file with the gradient of `loss` with respect to
// leaves["<name>"]; a stored gradient with no matching leaf fails the test.
void check_all_grads(const test_util::Fixture& file, const Tensor& loss, const std::map<std::string, Tensor>& leaves,
                     const Tensor& upstream = {}) {
  const std::vector<std::string> keys = keys_with_prefix(file, "grad.");
  std::vector<Tensor> inputs;
  for (const std::string& k : keys) {
    auto it = leaves.find(k.substr(5));
    REQUIRE_MESSAGE(it != leaves.end(), "the fixture stores ", k, " but the test has no leaf for it");
    inputs.push_back(it->second);
  }
  if (inputs.empty()) return;
  std::vector<Tensor> grads = upstream.defined() ? ag::grad({loss}, inputs, {upstream}) : ag::grad({loss}, inputs);
  for (size_t i = 0; i < keys.size(); ++i) check_close(keys[i], grads[i], file.at(keys[i]), tol_for(loss.dtype()));
}

}  // namespace

// ---- masked softmax ------------------------------------------------------------
// The score rows of nn/ATTENTION.md, [[7, -8, 6], [-3, 2, 4], [1, 6, -2]] under a causal mask, a
// padding mask (last key is padding: columns are masked, not rows) and both. The fixture
// stores outputs only, so the gradient is checked against softmax's backward formula
// evaluated at the reference outputs: dx = y * (g - sum_j g_j y_j).
TEST_CASE("parity: masked softmax rows of nn/ATTENTION.md") {
  const test_util::Fixture f = test_util::load_fixture("masked_softmax");
  const Tensor& scores = f.at("input.scores");  // (3, 3)

  // The library's mask builders give the fixture's masks.
  CHECK(ag::all(ag::eq(ag::causal_mask(3, 3), f.at("mask.causal"))).item<bool>());
  Tensor pad = ag::keep_mask_from_lengths(Tensor::from_vector<int64_t>({2}), 3);  // (1, 3), broadcast over rows
  CHECK(ag::all(ag::eq(pad, f.at("mask.padding"))).item<bool>());
  CHECK(ag::all(ag::eq(ag::logical_and(ag::causal_mask(3, 3), pad), f.at("mask.both"))).item<bool>());

  // Upstream gradient, varying along each row (a constant row would give dx = 0).
  const Tensor g64 = Tensor::from_vector<double>({0.3, -1.2, 0.5, 0.7, 0.1, -0.4, -0.9, 0.25, 1.1}, {3, 3});

  for (const char* name : {"causal", "padding", "both"}) {
    CAPTURE(name);
    const Tensor& mask = f.at(std::string("mask.") + name);    // (3, 3) bool, true = may attend
    const Tensor& want = f.at(std::string("output.") + name);  // (3, 3)
    const std::vector<double> y = want.to_vector<double>(), gv = g64.to_vector<double>();
    std::vector<double> dx(9);
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int j = 0; j < 3; ++j) s += gv[size_t(3 * i + j)] * y[size_t(3 * i + j)];
      for (int j = 0; j < 3; ++j) dx[size_t(3 * i + j)] = y[size_t(3 * i + j)] * (gv[size_t(3 * i + j)] - s);
    }
    const Tensor want_dx = Tensor::from_vector<double>(dx, {3, 3});

    for (DType dt : {DType::f64, DType::f32}) {
      CAPTURE(dt);
      const Tol tol = tol_for(dt);
      const std::string tag = std::string("masked_softmax ") + name;

      Tensor x = leaf(scores, dt);
      Tensor filled = ag::softmax(ag::masked_fill(x, ag::logical_not(mask), -kInf), -1);
      check_close(tag + " (masked_fill)", filled, want, tol);
      Tensor dfill = ag::grad({filled}, {x}, {g64.to(dt)})[0];
      check_close(tag + " grad (masked_fill)", dfill, want_dx, tol);

      Tensor x2 = leaf(scores, dt);
      Tensor added = ag::softmax(x2 + ag::additive_mask(mask, dt), -1);
      check_close(tag + " (additive_mask)", added, want, tol);
      Tensor dadd = ag::grad({added}, {x2}, {g64.to(dt)})[0];
      check_close(tag + " grad (additive_mask)", dadd, want_dx, tol);

      // A masked score gets exactly zero gradient, whichever way the mask went in.
      CHECK(ag::all(ag::eq(ag::masked_fill(dfill, mask, 0.0), 0.0)).item<bool>());
      CHECK(ag::all(ag::eq(ag::masked_fill(dadd, mask, 0.0), 0.0)).item<bool>());
    }
  }
}

// ---- Embedding -> Linear -> LayerNorm -> cross_entropy ---------------------------
// logits = layer_norm(linear(embedding(tokens))); loss = cross_entropy(logits, targets,
// ignore_index 0, label_smoothing 0.1, mean over the targets not ignored). No padding_idx:
// token 0 occurs and its embedding row has a gradient in the fixture.
// PyTorch 1.13 (LossNLL.cpp, cross_entropy_loss_label_smoothing) divides the smoothing
// term's sum by the number of targets not ignored, as ops/loss.cpp does; dividing by all
// N*d targets would give 2.5944 instead of the stored 2.6116.
TEST_CASE("parity: embedding, linear, layer_norm, cross_entropy with label smoothing") {
  const test_util::Fixture f = test_util::load_fixture("layers_and_loss");
  const std::string model = f.meta("model");
  REQUIRE_MESSAGE(model.find("ignore_index=0") != std::string::npos, model);
  REQUIRE_MESSAGE(model.find("label_smoothing=0.1") != std::string::npos, model);
  REQUIRE_MESSAGE(model.find("padding_idx") == std::string::npos, model);
  const double eps = std::stod(f.meta("layer_norm_eps"));

  const Tensor& tokens = f.at("input.tokens");    // (B, L) i64
  const Tensor& targets = f.at("input.targets");  // (B, L) i64, 0 = ignored
  const int64_t C = f.at("param.linear.weight").size(0);
  ag::CrossEntropyOptions opt;
  opt.ignore_index = 0;
  opt.label_smoothing = 0.1;

  for (DType dt : {DType::f64, DType::f32}) {
    CAPTURE(dt);
    const Tol tol = tol_for(dt);
    std::map<std::string, Tensor> leaves;
    for (const std::string& k : keys_with_prefix(f, "param.")) leaves[k] = leaf(f.at(k), dt);
    const Tensor& emb_w = leaves.at("param.embedding.weight");  // (V, E)
    const Tensor& lin_w = leaves.at("param.linear.weight");     // (C, E)
    const Tensor& lin_b = leaves.at("param.linear.bias");       // (C)
    const Tensor& ln_w = leaves.at("param.layer_norm.weight");  // (C)
    const Tensor& ln_b = leaves.at("param.layer_norm.bias");    // (C)

    Tensor h = ag::embedding(tokens, emb_w);                                                         // (B, L, E)
    Tensor z = ag::linear(h, lin_w, lin_b);                                                          // (B, L, C)
    Tensor logits = ag::layer_norm(z, Shape{C}, ln_w, ln_b, eps);                                    // (B, L, C)
    Tensor loss = ag::cross_entropy(ag::reshape(logits, {-1, C}), ag::reshape(targets, {-1}), opt);  // []
    check_close("layers_and_loss logits", logits, f.at("logits"), tol);
    check_close("layers_and_loss loss", ag::reshape(loss, {1}), f.at("loss"), tol);

    // PyTorch's (N, C, d1) layout, classes on dim 1, gives the same loss.
    Tensor loss_ncd = ag::cross_entropy(ag::permute(logits, {0, 2, 1}), targets, opt);
    check_close("layers_and_loss loss (N, C, d1)", ag::reshape(loss_ncd, {1}), f.at("loss"), tol);

    check_all_grads(f, loss, leaves);
    CHECK(keys_with_prefix(f, "grad.").size() == 5);
  }
}

// ---- multi-head attention: the worked example of nn/ATTENTION.md ---------------------
// d_model 4, h 2, weights [d_in, d_out] (Q = X @ w_q), no bias. Functional: project,
// split heads (B, L, E) -> (B, L, h, d) -> (B, h, L, d), attention per head, merge heads
// back (transpose, then reshape), output projection.
namespace {

struct MhaResult {
  Tensor output;   // (B, L, E)
  Tensor weights;  // (B, h, L, S)
  Tensor concat;   // (B, L, E), the merged heads before w_o
};

MhaResult mha_forward(const Tensor& x, const Tensor& w_q, const Tensor& w_k, const Tensor& w_v, const Tensor& w_o,
                      int64_t h) {
  const int64_t B = x.size(0), L = x.size(1), E = x.size(2), d = E / h;
  auto split = [&](const Tensor& t) {  // (B, L, E) -> (B, h, L, d)
    return ag::transpose(ag::reshape(t, {B, L, h, d}), 1, 2);
  };
  Tensor q = split(ag::matmul(x, w_q)), k = split(ag::matmul(x, w_k)), v = split(ag::matmul(x, w_v));
  ag::SdpaOptions opt;
  opt.need_weights = true;
  auto [o, weights] = ag::scaled_dot_product_attention(q, k, v, opt);  // (B, h, L, d), (B, h, L, L)
  Tensor concat = ag::reshape(ag::transpose(o, 1, 2), {B, L, E});      // (B, L, E)
  return {ag::matmul(concat, w_o), weights, concat};
}

}  // namespace

TEST_CASE("parity: multi-head attention worked example of nn/ATTENTION.md") {
  const test_util::Fixture f = test_util::load_fixture("mha_worked_example");
  const int64_t h = std::stoll(f.meta("num_heads"));
  REQUIRE(std::stoll(f.meta("d_model")) == f.at("input.x").size(2));
  REQUIRE(f.meta("bias") == "False");

  for (DType dt : {DType::f64, DType::f32}) {
    CAPTURE(dt);
    const Tol tol = tol_for(dt);
    std::map<std::string, Tensor> leaves;
    for (const char* k : {"input.x", "w_q", "w_k", "w_v", "w_o"}) leaves[k] = leaf(f.at(k), dt);
    MhaResult r =
        mha_forward(leaves.at("input.x"), leaves.at("w_q"), leaves.at("w_k"), leaves.at("w_v"), leaves.at("w_o"), h);
    check_close("mha_worked_example output", r.output, f.at("output"), tol);
    check_close("mha_worked_example attn_weights", r.weights, f.at("attn_weights"), tol);
    check_close("mha_worked_example concat", r.concat, f.at("concat"), tol);

    // Gradients of sum(output * upstream), when the fixture stores them (this one
    // stores none; the gradcheck below covers the backward).
    if (f.contains("upstream")) {
      // Fixture gradients may name a weight as "grad.<key>" or "grad.param.<key>".
      std::map<std::string, Tensor> named = leaves;
      for (const char* k : {"w_q", "w_k", "w_v", "w_o"}) named[std::string("param.") + k] = leaves.at(k);
      check_all_grads(f, r.output, named, f.at("upstream").to(dt));
    } else {
      CHECK(keys_with_prefix(f, "grad.").empty());
    }
  }

  // The seven-step backward (ops/kernels/FLASH_ATTENTION.md), through every input, against central differences.
  std::vector<Tensor> in;
  for (const char* k : {"input.x", "w_q", "w_k", "w_v", "w_o"}) in.push_back(leaf(f.at(k), DType::f64));
  ag::GradcheckOptions gopt;
  gopt.name = "mha_worked_example";
  gopt.atol = 1e-7;
  gopt.rtol = 1e-5;
  auto res = ag::gradcheck(
      [h](const std::vector<Tensor>& t) { return mha_forward(t[0], t[1], t[2], t[3], t[4], h).output; }, in, gopt);
  CHECK_MESSAGE(res.ok, res.message);
}
