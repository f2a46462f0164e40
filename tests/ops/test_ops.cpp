// The op table runner (the lines live in tests/ops/op_table/, one file per family), the
// coverage check that every public op has a line, and hand-computed values and edge
// cases that must not make NaN.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "op_table/op_table.h"
#include "public_ops.h"

using namespace ag;  // the checks read like the ops' own docs
using op_table::bools;
using op_table::i64;
using op_table::inputs_of;
using op_table::kInf;
using op_table::OpCase;
using test_ops::ops_by_header;
using test_ops::public_ops;

namespace {

std::vector<std::string> words(const char* name) {
  std::istringstream in(name);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool all_finite(const Tensor& t) {
  for (double v : t.to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

// ---- tiny helpers for the hand-computed checks ----
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }
SdpaOptions with_mask(const Tensor& m, bool need_weights = false) {
  SdpaOptions o;
  o.attn_mask = m;
  o.need_weights = need_weights;
  return o;
}

}  // namespace

// ---- the table runner ------------------------------------------------------------------
TEST_CASE("op table: forward and gradcheck for every line") {
  for (const OpCase& c : op_table::all()) {
    INFO("op table line: ", std::string(c.name));
    std::vector<Tensor> x = inputs_of(c);
    Tensor y = c.fn(x);
    REQUIRE(y.defined());
    CHECK(y.dtype() == DType::f64);
    CHECK_MESSAGE(y.requires_grad(), std::string(c.name), ": the output does not require grad");
    CHECK_MESSAGE(all_finite(y), std::string(c.name), ": the forward is not finite: ", y);
    GradcheckResult r = gradcheck(c.fn, x, {.name = c.name});
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_CASE("op table: gradgradcheck (double backward) for every line") {
  int checked = 0;
  for (const OpCase& c : op_table::all()) {
    if (!c.gradgrad) continue;
    INFO("op table line: ", std::string(c.name));
    std::vector<Tensor> x = inputs_of(c);
    GradcheckResult r = gradgradcheck(c.fn, x, {.name = c.name});
    CHECK_MESSAGE(r.ok, r.message);
    ++checked;
  }
  CHECK(checked > 200);
}

TEST_CASE("op table: every public op of the op headers has a line") {
  // A line's first word is the op it checks; an op that has no gradient of its own (a
  // comparison, a mask builder, an index op) is named among the other words of a line
  // that uses it.
  const std::set<std::string> ops = public_ops();
  REQUIRE(ops.size() > 50);  // the headers were found and parsed
  REQUIRE(ops.count("matmul"));
  std::set<std::string> mentioned;
  for (const OpCase& c : op_table::all()) {
    auto w = words(c.name);
    CHECK_MESSAGE(ops.count(w[0]), "op table line '", std::string(c.name), "' does not start with a public op");
    mentioned.insert(w.begin(), w.end());
  }
  for (const auto& op : ops) CHECK_MESSAGE(mentioned.count(op), "no op table line for ", op);
  MESSAGE(ops.size(), " public ops, ", op_table::all().size(), " op table lines");
}

TEST_CASE("op table: the table mirrors the op families") {
  // tests/ops/op_table/<family>.cpp registers AG_OP_TABLE(<family>) for the ops of
  // attograd/ops/<family>.h: each family header that declares ops has a table of that
  // name, and each line names at least one op of its own family (its first word, or
  // another word, as in "gather of argmax argmin").
  const auto by_header = ops_by_header();
  REQUIRE(by_header.count("unary"));
  std::set<std::string> tables;
  for (const OpCase& c : op_table::all()) {
    tables.insert(c.family);
    auto it = by_header.find(c.family);
    REQUIRE_MESSAGE(it != by_header.end(), "op table family '", std::string(c.family), "' has no header attograd/ops/",
                    std::string(c.family), ".h");
    auto w = words(c.name);
    bool own = std::any_of(w.begin(), w.end(), [&](const std::string& x) { return it->second.count(x) > 0; });
    CHECK_MESSAGE(own, "op table line '", std::string(c.name), "' in tests/ops/op_table/", std::string(c.family),
                  ".cpp names no op of attograd/ops/", std::string(c.family), ".h");
  }
  // (attograd/ops.h, the umbrella, declares nothing: an op declared there fails here too.)
  for (const auto& entry : by_header) {  // no structured binding: clang 14 cannot capture one
    const std::string& header = entry.first;
    CHECK_MESSAGE(tables.count(header), "no tests/ops/op_table/", header, ".cpp for attograd/ops/", header, ".h");
  }
}

// ---- nn::functional ------------------------------------------------------------------
// functional_names.cpp, generated by tests/ops/functional_names.cmake from the op family
// headers whose ops are functional forms (and a few functional ops of other families),
// names each op and option type as ag::nn::functional::<name>: it compiles only if
// nn::functional reaches them all. Here: the generation read the headers.
extern const char* const kFunctionalNames[];
extern const int kFunctionalNameCount;

TEST_CASE("nn::functional reaches every op of the functional families") {
  std::set<std::string> names(kFunctionalNames, kFunctionalNames + kFunctionalNameCount);
  for (const char* op : {"relu", "gelu", "softmax", "log_softmax", "cross_entropy", "layer_norm", "rms_norm",
                         "normalize", "cosine_similarity", "scaled_dot_product_attention", "causal_mask", "SdpaOptions",
                         "Reduction", "dropout", "pad", "one_hot", "embedding", "linear"})
    CHECK_MESSAGE(names.count(op), op, " is not among the generated nn::functional names");
  // Every op of the functional families' headers is in the list (it is generated from them).
  const auto by_header = ops_by_header();
  for (const char* family :
       {"activation", "attention", "conv", "loss", "norm", "pool", "position", "softmax", "upsample"}) {
    REQUIRE(by_header.count(family));
    for (const auto& op : by_header.at(family)) CHECK_MESSAGE(names.count(op), family, ": ", op, " is not checked");
  }
  MESSAGE(kFunctionalNameCount, " names checked as ag::nn::functional::<name>");
}

// ---- hand-computed values -------------------------------------------------------------
TEST_CASE("softmax and log_softmax of [0, ln 2]") {
  // exp: [1, 2], sum 3 -> softmax [1/3, 2/3]; log_softmax [-ln 3, ln 2 - ln 3].
  Tensor x = f64({0.0, std::log(2.0)});
  CHECK(allclose(softmax(x, 0), f64({1.0 / 3, 2.0 / 3})));
  CHECK(allclose(log_softmax(x, 0), f64({-std::log(3.0), std::log(2.0) - std::log(3.0)})));
  // Stable: adding 1000 changes nothing.
  CHECK(allclose(softmax(x + 1000.0, 0), f64({1.0 / 3, 2.0 / 3})));
}

TEST_CASE("sum_to undoes broadcasting") {
  // [[1, 2, 3], [4, 5, 6]]: columns sum to [5, 7, 9], rows to [6, 15].
  Tensor g = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(allclose(sum_to(g, {3}), f64({5, 7, 9})));
  CHECK(allclose(sum_to(g, {1, 3}), f64({5, 7, 9}, {1, 3})));
  CHECK(allclose(sum_to(g, {2, 1}), f64({6, 15}, {2, 1})));
  CHECK(allclose(sum_to(g, {}), f64({21}, {})));
  CHECK(allclose(sum_to(g, {2, 3}), g));
}

TEST_CASE("broadcast gradients are summed back: d/da sum(a * b) for a [3,1], b [1,4]") {
  // d/da_i = sum_j b_j = 1 + 2 + 3 + 4 = 10;  d/db_j = sum_i a_i = 1 + 2 + 3 = 6
  Tensor a = leaf({1, 2, 3}, {3, 1}), b = leaf({1, 2, 3, 4}, {1, 4});
  (a * b).sum().backward();
  CHECK(allclose(a.grad(), f64({10, 10, 10}, {3, 1})));
  CHECK(allclose(b.grad(), f64({6, 6, 6, 6}, {1, 4})));
}

TEST_CASE("var, logsumexp, matmul, layer_norm and gelu by hand") {
  // [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5.
  Tensor x = f64({1, 2, 3, 4});
  CHECK(var(x).item<double>() == doctest::Approx(5.0 / 3));
  CHECK(var(x, {}, 0).item<double>() == doctest::Approx(5.0 / 4));
  // logsumexp([0, ln 3]) = ln(1 + 3) = ln 4
  CHECK(logsumexp(f64({0.0, std::log(3.0)}), {0}).item<double>() == doctest::Approx(std::log(4.0)));
  // [[1, 2], [3, 4]] @ [5, 6] = [1*5 + 2*6, 3*5 + 4*6] = [17, 39]
  CHECK(allclose(matmul(f64({1, 2, 3, 4}, {2, 2}), f64({5, 6})), f64({17, 39})));
  // [1, 2, 3]: mean 2, biased var 2/3 -> (x - 2) / sqrt(2/3 + 1e-5) ~ [-1.2247, 0, 1.2247]
  double s = 1.0 / std::sqrt(2.0 / 3 + 1e-5);
  CHECK(allclose(layer_norm(f64({1, 2, 3}, {1, 3}), {3}), f64({-s, 0, s}, {1, 3})));
  // gelu(1) = 0.5 (1 + erf(1/sqrt 2)) = 0.841345; the tanh form gives 0.841192.
  CHECK(gelu(f64({1.0})).item<double>() == doctest::Approx(0.8413447).epsilon(1e-6));
  CHECK(gelu(f64({1.0}), GeluApprox::tanh).item<double>() == doctest::Approx(0.8411920).epsilon(1e-6));
  // max/min values and their indices: the gradient goes to the arg element.
  Tensor m = leaf({3, 9, 1, 4, 0, 7}, {2, 3});
  auto [vals, idx] = max(m, 1);
  CHECK(allclose(vals, f64({9, 7})));
  CHECK(idx.to_vector<int64_t>() == std::vector<int64_t>{1, 2});
  vals.sum().backward();
  CHECK(allclose(m.grad(), f64({0, 1, 0, 0, 0, 1}, {2, 3})));
}

TEST_CASE("cross_entropy by hand") {
  // logits [0, ln 2, ln 3]: exp [1, 2, 3], sum 6 -> p = [1/6, 1/3, 1/2].
  Tensor z = f64({0.0, std::log(2.0), std::log(3.0)}, {1, 3});
  Tensor t = i64({2}, {1});
  // -log p_2 = ln 2
  CHECK(cross_entropy(z, t).item<double>() == doctest::Approx(std::log(2.0)));
  // smoothing 0.3: 0.7 * ln 2 + 0.3 / 3 * (ln 6 + ln 3 + ln 2)
  double want = 0.7 * std::log(2.0) + 0.1 * (std::log(6.0) + std::log(3.0) + std::log(2.0));
  CHECK(cross_entropy(z, t, {.label_smoothing = 0.3}).item<double>() == doctest::Approx(want));
  // An ignored target drops out of the mean: (ln 2 + ignored) / 1.
  Tensor z2 = cat({z, z}, 0);
  CHECK(cross_entropy(z2, i64({2, -100}, {2})).item<double>() == doctest::Approx(std::log(2.0)));
  // d/dz = p - onehot(2) = [1/6, 1/3, -1/2]
  Tensor zl = z.detach().requires_grad_();
  cross_entropy(zl, t).backward();
  CHECK(allclose(zl.grad(), f64({1.0 / 6, 1.0 / 3, -0.5}, {1, 3})));
}

TEST_CASE("masked_fill and where by hand") {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = masked_fill(x, bools({0, 1}, {2}), -1.0);  // column 1 filled
  CHECK(allclose(y, f64({1, -1, 3, -1}, {2, 2})));
  y.sum().backward();
  CHECK(allclose(x.grad(), f64({1, 0, 1, 0}, {2, 2})));  // filled entries get no gradient
}

// ---- edge cases that must not make NaN --------------------------------------------------
TEST_CASE("softmax of an all -inf row is zeros with zero gradient") {
  // row 0 all -inf (a fully masked query), row 1 ordinary
  Tensor x = leaf({-kInf, -kInf, -kInf, 0.0, std::log(2.0), 0.0}, {2, 3});
  Tensor y = softmax(x, 1);
  CHECK(allclose(y, f64({0, 0, 0, 0.25, 0.5, 0.25}, {2, 3})));
  (y * f64({1, 2, 3, 4, 5, 6}, {2, 3})).sum().backward();
  std::vector<double> g = x.grad().to_vector<double>();
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  CHECK(g[2] == 0.0);
  CHECK(all_finite(x.grad()));
  // row 1: y (g - y.g) with y.g = 0.25*4 + 0.5*5 + 0.25*6 = 5 -> [-0.25, 0, 0.25]
  CHECK(allclose(x.grad().select(0, 1), f64({-0.25, 0, 0.25})));
}

TEST_CASE("log_softmax of an all -inf row is -inf with zero gradient") {
  Tensor x = leaf({-kInf, -kInf, 0.0, 0.0}, {2, 2});
  Tensor y = log_softmax(x, -1);
  std::vector<double> v = y.to_vector<double>();
  CHECK(v[0] == -kInf);
  CHECK(v[1] == -kInf);
  CHECK(v[2] == doctest::Approx(-std::log(2.0)));
  y.backward(ones_like(y));
  std::vector<double> g = x.grad().to_vector<double>();
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  // row 1: g - exp(y) sum(g) = 1 - 0.5 * 2 = 0
  CHECK(g[2] == doctest::Approx(0.0));
  CHECK(all_finite(x.grad()));
}

TEST_CASE("embedding: the padding_idx row gets zero gradient, repeated ids add up") {
  Tensor w = randn({4, 2}, DType::f64).requires_grad_();
  Tensor ids = i64({1, 2, 1, 1, 3, 2}, {2, 3});  // 2 is padding
  Tensor y = embedding(ids, w, 2);
  CHECK(y.shape() == Shape{2, 3, 2});
  // The padding row is still looked up in the forward.
  CHECK(allclose(y.select(0, 0).select(0, 1), w.detach().select(0, 2)));
  y.sum().backward();
  // row 0 unused, row 1 three times, row 2 padding, row 3 once
  CHECK(allclose(w.grad(), f64({0, 0, 3, 3, 0, 0, 1, 1}, {4, 2})));
  CHECK_THROWS_AS(embedding(i64({4}, {1}), w), IndexError);
}

TEST_CASE("scaled_dot_product_attention: a fully masked query row gives zeros and finite grads") {
  Generator rng(3);
  Tensor q = randn({2, 3, 2}, DType::f64, &rng).requires_grad_();
  Tensor k = randn({2, 4, 2}, DType::f64, &rng).requires_grad_();
  Tensor v = randn({2, 4, 3}, DType::f64, &rng).requires_grad_();
  Tensor m = bools({1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4});  // query 1 sees nothing
  auto [out, w] = scaled_dot_product_attention(q, k, v, with_mask(m, /*need_weights=*/true));
  CHECK(allclose(out.select(1, 1), zeros({2, 3}, DType::f64)));
  CHECK(allclose(w.select(1, 1), zeros({2, 4}, DType::f64)));
  CHECK(all_finite(out));
  (out * out).sum().backward();
  for (const Tensor& t : {q, k, v}) {
    REQUIRE(t.grad().defined());
    CHECK(all_finite(t.grad()));
  }
  CHECK(allclose(q.grad().select(1, 1), zeros({2, 2}, DType::f64)));  // no path from query 1

  // The same with an all -inf float mask row.
  Tensor fm = additive_mask(m, DType::f64);
  Tensor out2 = scaled_dot_product_attention(q, k, v, with_mask(fm)).first;
  CHECK(allclose(out2, out.detach()));
}

TEST_CASE("scaled_dot_product_attention with one key returns its value") {
  // One key: softmax over a single score is 1, so every query row is v.
  Tensor q = f64({1, 2, 3, 4}, {2, 2}), k = f64({5, 6}, {1, 2}), v = f64({7, 8, 9}, {1, 3});
  Tensor out = scaled_dot_product_attention(q, k, v).first;
  CHECK(allclose(out, f64({7, 8, 9, 7, 8, 9}, {2, 3})));
}
