// Op semantics against PyTorch 1.13 (tests/fixtures, ops_losses): every loss case,
// outputs and gradients for each reduction, in f64 and f32; cosine_similarity, normalize.
// Part of the test_parity_semantics program (special values: test_parity_semantics.cpp).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

using namespace ag;

// ---- ops_losses -----------------------------------------------------------------------
namespace {

const test_util::Fixture& losses() {
  static const test_util::Fixture f = test_util::load_fixture("ops_losses");
  return f;
}

// Elementwise |got - want| <= rtol (|want| + max |want|): relative, with a floor at the
// tensor's scale so that a cancelled gradient element (1e-18 against 0) passes. Shapes
// must match, except that a [1] reference stands for a 0-d result.
void check_close(const std::string& what, const Tensor& got, const Tensor& want, double rtol) {
  REQUIRE_MESSAGE(got.defined(), what, ": undefined");
  const bool scalar_ok = got.dim() == 0 && want.shape() == Shape{1};
  REQUIRE_MESSAGE((scalar_ok || got.shape() == want.shape()), what, ": shape ", got.shape(), " != reference ",
                  want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i) {
    INFO(what, " (", got.dtype(), ") element ", i, ": got ", g[i], ", torch ", w[i]);
    CHECK(std::abs(g[i] - w[i]) <= rtol * (std::abs(w[i]) + scale));
  }
}

// One loss case: `leaves` are the fixture keys of the differentiable arguments and the
// suffix of their stored gradients (<case>.<r>.grad.<suffix>); fn gets them as leaves
// (in dtype) and the reduction's name.
struct LossLine {
  const char* name;
  std::vector<const char*> reductions;
  std::vector<std::pair<const char*, const char*>> leaves;  // {fixture key, grad suffix}
  std::function<Tensor(const std::vector<Tensor>&, const std::string&, DType)> fn;
};

Reduction red(const std::string& r) {
  return r == "none" ? Reduction::none : r == "sum" ? Reduction::sum : Reduction::mean;
}
KLDivReduction kl_red(const std::string& r) {
  return r == "none" ? KLDivReduction::none : r == "sum" ? KLDivReduction::sum : KLDivReduction::batchmean;
}
Tensor fx(const char* key, DType dt) { return losses().at(key).to(dt); }

// cross_entropy on ce.input with ce.target (class indices) or ce_prob.target.
LossLine ce_line(const char* name, const char* target, bool weight, int64_t ignore, double smooth) {
  return {name,
          {"none", "mean", "sum"},
          {{"ce.input", "input"}},
          [=](const std::vector<Tensor>& x, const std::string& r, DType dt) {
            CrossEntropyOptions o;
            o.ignore_index = ignore;
            o.label_smoothing = smooth;
            o.reduction = red(r);
            if (weight) o.weight = fx("ce.class_weight", dt);
            const Tensor t = losses().at(target);
            return cross_entropy(x[0], t.dtype() == DType::i64 ? t : t.to(dt), o);
          }};
}

const std::vector<LossLine>& loss_lines() {
  const std::vector<const char*> nms = {"none", "mean", "sum"}, kl = {"none", "batchmean", "sum"};
  const std::vector<std::pair<const char*, const char*>> reg = {{"reg.input", "input"}, {"reg.target", "target"}};
  static const std::vector<LossLine> lines = {
      {"bce",
       nms,
       {{"bce.input", "input"}},
       [](const auto& x, const std::string& r, DType dt) {
         return binary_cross_entropy(x[0], fx("bce.target", dt), fx("bce.weight", dt), red(r));
       }},
      {"bce_logits",
       nms,
       {{"bce_logits.input", "input"}},
       [](const auto& x, const std::string& r, DType dt) {
         return binary_cross_entropy_with_logits(x[0], fx("bce_logits.target", dt), fx("bce_logits.weight", dt),
                                                 fx("bce_logits.pos_weight", dt), red(r));
       }},
      ce_line("ce.weight", "ce.target", true, -100, 0),
      ce_line("ce.weight_ignore", "ce.target", true, 3, 0),
      ce_line("ce.weight_ignore_smooth", "ce.target", true, 3, 0.2),
      ce_line("ce.smooth", "ce.target", false, -100, 0.2),
      ce_line("ce_prob.plain", "ce_prob.target", false, -100, 0),
      ce_line("ce_prob.smooth", "ce_prob.target", false, -100, 0.2),
      ce_line("ce_prob.weight_smooth", "ce_prob.target", true, -100, 0.2),
      {"nll",
       nms,
       {{"nll.input", "input"}},
       [](const auto& x, const std::string& r, DType dt) {
         return nll_loss(x[0], losses().at("ce.target"), NLLOptions{fx("ce.class_weight", dt), 3, red(r)});
       }},
      {"l1", nms, reg, [](const auto& x, const std::string& r, DType) { return l1_loss(x[0], x[1], red(r)); }},
      {"smooth_l1", nms, reg,
       [](const auto& x, const std::string& r, DType) { return smooth_l1_loss(x[0], x[1], red(r), 0.5); }},
      {"huber", nms, reg,
       [](const auto& x, const std::string& r, DType) { return huber_loss(x[0], x[1], red(r), 1.5); }},
      {"kl",
       kl,
       {{"kl.input", "input"}, {"kl.target", "target"}},
       [](const auto& x, const std::string& r, DType) { return kl_div(x[0], x[1], kl_red(r), false); }},
      {"kl_log",
       kl,
       {{"kl.input", "input"}, {"kl.log_target", "target"}},
       [](const auto& x, const std::string& r, DType) { return kl_div(x[0], x[1], kl_red(r), true); }},
  };
  return lines;
}

void check_loss_line(const LossLine& line, DType dt, double rtol) {
  const std::string name = line.name;
  for (const std::string r : line.reductions) {
    std::vector<Tensor> leaves;
    for (const auto& [key, suffix] : line.leaves) leaves.push_back(fx(key, dt).clone().requires_grad_());
    const Tensor out = line.fn(leaves, r, dt);
    const std::string pre = name + "." + r;
    check_close(pre + ".out", out, losses().at(pre + ".out"), rtol);
    if (r == "none")
      out.backward(fx((name + ".none.upstream").c_str(), dt));
    else
      out.backward();
    for (size_t i = 0; i < leaves.size(); ++i)
      check_close(pre + ".grad." + line.leaves[i].second, leaves[i].grad(),
                  losses().at(pre + ".grad." + line.leaves[i].second), rtol);
  }
}

}  // namespace

TEST_CASE("ops_losses: every loss, reduction and gradient as torch 1.13 (f64 to 1e-12, f32 to 1e-5)") {
  for (const auto& line : loss_lines()) {
    SUBCASE(line.name) {
      check_loss_line(line, DType::f64, 1e-12);
      check_loss_line(line, DType::f32, 1e-5);
    }
  }
}

TEST_CASE("ops_losses: cosine_similarity (a row below eps) and normalize (a zero row) as torch 1.13") {
  for (auto [dt, rtol] : {std::pair{DType::f64, 1e-12}, std::pair{DType::f32, 1e-5}}) {
    Tensor x1 = fx("cosine.x1", dt).clone().requires_grad_(), x2 = fx("cosine.x2", dt).clone().requires_grad_();
    Tensor c = cosine_similarity(x1, x2, 1, 1e-8);
    check_close("cosine.out", c, losses().at("cosine.out"), rtol);
    c.backward(fx("cosine.upstream", dt));
    check_close("cosine.grad.x1", x1.grad(), losses().at("cosine.grad.x1"), rtol);
    check_close("cosine.grad.x2", x2.grad(), losses().at("cosine.grad.x2"), rtol);

    Tensor x = fx("normalize.input", dt).clone().requires_grad_();
    Tensor n = normalize(x, 2, 1, 1e-12);
    check_close("normalize.out", n, losses().at("normalize.out"), rtol);
    n.backward(fx("normalize.upstream", dt));
    check_close("normalize.grad", x.grad(), losses().at("normalize.grad"), rtol);
  }
}
