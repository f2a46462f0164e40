// einsum: values by hand and from PyTorch 1.13 (literals), gradients, errors, and the
// Transformer's contractions: each must equal the explicit matmul and be computed by a
// single matmul with no copy.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
// 0, 1, ..., n-1 as f64 of shape s, scaled and shifted (torch: arange(n).view(s) * a + b).
Tensor ar(const Shape& s, double a = 1, double b = 0) {
  std::vector<double> v(static_cast<std::size_t>(numel(s)));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = double(k) * a + b;
  return f64(v, s);
}

// How many nodes of each op the graph behind y holds.
std::map<std::string, int> graph_ops(const Tensor& y) {
  std::map<std::string, int> count;
  std::set<const Node*> seen;
  std::function<void(const std::shared_ptr<Node>&)> walk = [&](const std::shared_ptr<Node>& n) {
    if (!n || !seen.insert(n.get()).second) return;
    ++count[n->name];
    for (const Edge& e : n->inputs) walk(e.node);
  };
  walk(y.grad_fn());
  return count;
}

}  // namespace

TEST_CASE("einsum by hand: matmul, outer, dot, trace, diagonal, permutation, sums") {
  Tensor a = ar({2, 3}), b = ar({3, 2}, 1, 1);
  // [[0,1,2],[3,4,5]] @ [[1,2],[3,4],[5,6]] = [[13, 16], [40, 52]]
  CHECK(tc::diff(einsum("ij,jk->ik", {a, b}), {13, 16, 40, 52}) == "");
  CHECK(tc::diff(einsum("ij,jk", {a, b}), {13, 16, 40, 52}) == "");  // implicit: i, k
  // outer [1, 2] x [3, 4, 5]
  CHECK(tc::diff(einsum("i,j->ij", {f64({1, 2}, {2}), f64({3, 4, 5}, {3})}), {3, 4, 5, 6, 8, 10}) == "");
  // sum of a * a = 0 + 1 + 4 + 9 + 16 + 25 = 55
  Tensor dot = einsum("ij,ij->", {a, a});
  CHECK(dot.shape() == Shape{});
  CHECK(dot.item<double>() == 55.0);
  // trace of arange(9).view(3, 3) = 0 + 4 + 8; torch.einsum('ii', ...) = 12 too
  CHECK(einsum("ii->", {ar({3, 3})}).item<double>() == 12.0);
  CHECK(einsum("ii", {ar({3, 3})}).item<double>() == 12.0);
  CHECK(tc::diff(einsum("ii->i", {ar({3, 3})}), {0, 4, 8}) == "");
  CHECK(tc::diff(einsum("ij->ji", {a}), {0, 3, 1, 4, 2, 5}) == "");
  CHECK(tc::diff(einsum("ij->i", {a}), {3, 12}) == "");
  CHECK(tc::diff(einsum("bij->bj", {ar({2, 2, 3})}), {3, 5, 7, 15, 17, 19}) == "");
  CHECK(einsum("ij->", {a}).item<double>() == 15.0);
}

TEST_CASE("einsum matches torch 1.13") {
  // torch.einsum('bn,anm,bm->ba', arange(6).view(2,3), arange(60).view(4,3,5) - 10,
  //              arange(10).view(2,5) * 0.5)
  CHECK(tc::diff(einsum("bn,anm,bm->ba", {ar({2, 3}), ar({4, 3, 5}, 1, -10), ar({2, 5}, 0.5)}),
                 {20, 245, 470, 695, -395, 2755, 5905, 9055}) == "");
  // torch.einsum('iji->ij', arange(8).view(2,2,2)) = [[0, 2], [5, 7]]
  CHECK(tc::diff(einsum("iji->ij", {ar({2, 2, 2})}), {0, 2, 5, 7}) == "");
  // Implicit output sorts upper case first: torch.einsum('bA', arange(6).view(2, 3)) is (3, 2)
  Tensor t = einsum("bA", {ar({2, 3})});
  CHECK(t.shape() == Shape{3, 2});
  CHECK(tc::diff(t, {0, 3, 1, 4, 2, 5}) == "");
  // Ellipsis dims (2, 1) and (3) broadcast to (2, 3):
  // torch.einsum('...ij,...jk->...ik', arange(12).view(2,1,2,3), arange(18).view(3,3,2))
  Tensor e = einsum("...ij,...jk->...ik", {ar({2, 1, 2, 3}), ar({3, 3, 2})});
  CHECK(e.shape() == Shape{2, 3, 2, 2});
  CHECK(tc::diff(e, {10, 13, 28, 40, 28,  31,  100, 112, 46,  49,  172, 184,
                     46, 67, 64, 94, 172, 193, 244, 274, 298, 319, 424, 454}) == "");
  // A contracted letter of size 1 broadcasts: torch.einsum('ij,jk->ik', [[1],[2]],
  // [[1,2],[3,4]]) = [[4, 6], [8, 12]]
  CHECK(tc::diff(einsum("ij,jk->ik", {ar({2, 1}, 1, 1), ar({2, 2}, 1, 1)}), {4, 6, 8, 12}) == "");
  // Ellipsis dims left out of an explicit output are summed: torch gives [60, 66, 72, 78]
  CHECK(tc::diff(einsum("...i->i", {ar({2, 3, 4})}), {60, 66, 72, 78}) == "");
  CHECK(einsum("i...->", {ar({2, 3})}).item<double>() == 15.0);
  // Spaces are ignored; an ellipsis in the output may cover no dims.
  CHECK(tc::diff(einsum(" i j -> j ", {ar({2, 3})}), {3, 5, 7}) == "");
  CHECK(einsum("i->...", {ar({2}, 1, 1)}).item<double>() == 3.0);
  // 0-d operands: torch.einsum(',->', tensor(2.), tensor(3.)) = 6
  CHECK(einsum(",->", {f64({2}, {}), f64({3}, {})}).item<double>() == 6.0);
  // inf * 0 makes NaN as in torch: einsum('i,i->', [inf, 1], [0, 2]) = nan
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(std::isnan(einsum("i,i->", {f64({inf, 1}, {2}), f64({0, 2}, {2})}).item<double>()));
  // Empty contractions give zeros; empty outputs keep their shape.
  CHECK(tc::diff(einsum("ij,jk->ik", {zeros({2, 0}, DType::f64), zeros({0, 3}, DType::f64)}),
                 std::vector<double>(6, 0.0)) == "");
  CHECK(einsum("i,j->ij", {zeros({0}, DType::f64), ones({2}, DType::f64)}).shape() == Shape{0, 2});
}

TEST_CASE("einsum matches the ops_einsum fixture (torch 1.13): outputs and operand gradients") {
  // tests/fixtures/ops_einsum.safetensors (tools/make_fixtures.py, seed 12): eight
  // equations; gradients of sum(output * upstream), a 0-d output stored as [1].
  const test_util::Fixture f = test_util::load_fixture("ops_einsum");
  for (int i = 0; i < 8; ++i) {
    const std::string e = "e" + std::to_string(i);
    const std::string& eq = f.meta(e);
    INFO("equation ", e, ": ", eq);
    std::vector<Tensor> ops;
    for (int j = 0; f.contains(e + ".input." + std::to_string(j)); ++j)
      ops.push_back(f.at(e + ".input." + std::to_string(j)).detach().requires_grad_());
    REQUIRE(!ops.empty());
    Tensor out = einsum(eq, ops);
    const Tensor& up = f.at(e + ".upstream");
    Tensor flat = out.dim() == 0 ? out.reshape({1}) : out;
    CHECK(tc::diff(flat, f.at(e + ".output"), 1e-9) == "");
    std::vector<Tensor> g = grad({sum(flat * up)}, ops);
    for (std::size_t j = 0; j < ops.size(); ++j)
      CHECK(tc::diff(g[j], f.at(e + ".grad.input." + std::to_string(j)), 1e-9) == "");
  }
}

TEST_CASE("einsum gradients (torch 1.13)") {
  // d/dx of einsum('ii->i', x) . [1, 2, 3] puts [1, 2, 3] on the diagonal.
  Tensor x = ar({3, 3}).requires_grad_();
  einsum("ii->i", {x}).backward(f64({1, 2, 3}, {3}));
  CHECK(tc::diff(x.grad(), {1, 0, 0, 0, 2, 0, 0, 0, 3}) == "");
  // einsum('ij,jk->ik') with g = ones: dx = ones @ y^T, dy = x^T @ ones
  Tensor a = ar({2, 3}).requires_grad_(), b = ar({3, 2}, 1, 1).requires_grad_();
  einsum("ij,jk->ik", {a, b}).backward(ones({2, 2}, DType::f64));
  CHECK(tc::diff(a.grad(), {3, 7, 11, 3, 7, 11}) == "");
  CHECK(tc::diff(b.grad(), {3, 3, 5, 5, 7, 7}) == "");
  // Double backward by hand: f = einsum('ij,ij->', x, x) = sum(x^2), df/dx = 2x, and the
  // gradient of <df/dx, v> is 2v; through a diagonal, d/dx <2 diag(x) v> likewise.
  Tensor xx = ar({2, 3}, 0.5, -1).requires_grad_();
  Tensor vv = ar({2, 3}, 1, 1);
  Tensor dx = grad({einsum("ij,ij->", {xx, xx})}, {xx}, {}, {}, true)[0];
  CHECK(tc::diff(dx, ar({2, 3}, 1, -2), 1e-15) == "");
  CHECK(tc::diff(grad({sum(dx * vv)}, {xx})[0], ar({2, 3}, 2, 2), 1e-15) == "");
  Tensor sq = ar({2, 2}).requires_grad_();
  Tensor dd = grad({sum(square(einsum("ii->i", {sq})))}, {sq}, {}, {}, true)[0];  // 2 diag(x) on the diagonal
  CHECK(tc::diff(dd, {0, 0, 0, 6}, 1e-15) == "");
  CHECK(tc::diff(grad({sum(dd)}, {sq})[0], {2, 0, 0, 2}, 1e-15) == "");
  // The diagonal's backward is itself recorded (double backward ready).
  Tensor d = einsum("ii->i", {ar({3, 3}).requires_grad_()});
  Tensor g = ones({3}, DType::f64).requires_grad_();
  std::vector<bool> need{true};
  const std::shared_ptr<Node>& n = d.grad_fn();
  REQUIRE(n);
  CHECK(std::string(n->name) == "einsum_diagonal");
  CHECK(n->backward(g, NeedsGrad(need))[0].requires_grad());
}

TEST_CASE("einsum: the Transformer's contractions equal the explicit matmul, one matmul and no copy") {
  Generator rng(7);
  Tensor q = randn({2, 3, 4, 8}, DType::f64, &rng).requires_grad_();  // (B, h, L, d)
  Tensor k = randn({2, 3, 5, 8}, DType::f64, &rng).requires_grad_();  // (B, h, S, d)
  Tensor p = randn({2, 3, 4, 5}, DType::f64, &rng).requires_grad_();  // (B, h, L, S)
  Tensor v = randn({2, 3, 5, 8}, DType::f64, &rng).requires_grad_();  // (B, h, S, d)
  Tensor a = randn({2, 4, 6}, DType::f64, &rng), b = randn({2, 6, 3}, DType::f64, &rng);
  Tensor m = randn({4, 6}, DType::f64, &rng), n = randn({6, 3}, DType::f64, &rng);
  Tensor u = randn({4}, DType::f64, &rng), w = randn({6}, DType::f64, &rng);
  struct Case {
    const char* eq;
    std::vector<Tensor> ops;
    Tensor want;
  };
  const std::vector<Case> cases = {
      {"bhld,bhsd->bhls", {q, k}, matmul(q, k.transpose(-1, -2))},
      {"bhls,bhsd->bhld", {p, v}, matmul(p, v)},
      {"bij,bjk->bik", {a, b}, matmul(a, b)},
      {"ij,jk->ik", {m, n}, matmul(m, n)},
      {"...ij,...jk->...ik", {a, b}, matmul(a, b)},
      {"i,j->ij", {u, w}, matmul(u.unsqueeze(1), w.unsqueeze(0))},
      {"ij,ij->", {m, m}, sum(m * m)},
  };
  for (const Case& c : cases) {
    INFO("equation: ", c.eq);
    Tensor got = einsum(c.eq, c.ops);
    CHECK(tc::diff(got, c.want, 1e-12) == "");
    if (!got.requires_grad()) {
      // the graph is only recorded with an input that requires grad
      std::vector<Tensor> ops;
      for (const Tensor& t : c.ops) ops.push_back(t.detach().requires_grad_());
      got = einsum(c.eq, ops);
    }
    auto ops = graph_ops(got);
    CHECK(ops["matmul"] == 1);
    CHECK(ops["contiguous"] == 0);
    CHECK(ops["sum"] == 0);
  }
  // Gradients through the attention contractions equal the explicit ones.
  Tensor s1 = einsum("bhld,bhsd->bhls", {q, k});
  Tensor o1 = einsum("bhls,bhsd->bhld", {softmax(s1, -1), v});
  auto g1 = grad({o1.sum()}, {q, k, v});
  Tensor o2 = matmul(softmax(matmul(q, k.transpose(-1, -2)), -1), v);
  auto g2 = grad({o2.sum()}, {q, k, v});
  for (int i = 0; i < 3; ++i) CHECK(tc::diff(g1[size_t(i)], g2[size_t(i)], 1e-12) == "");
  // Single-operand patterns are views and sums: no matmul at all.
  Tensor x = ar({3, 3}).requires_grad_();
  CHECK(graph_ops(einsum("ij->ji", {x}))["matmul"] == 0);
  CHECK(graph_ops(einsum("ii->", {x}))["contiguous"] == 0);
}

TEST_CASE("einsum errors name einsum, the equation and the shapes (messages after torch 1.13)") {
  Tensor a = zeros({2, 3}, DType::f64), b = zeros({4, 5}, DType::f64), c = zeros({2}, DType::f64);
  CHECK_THROWS_MSG(einsum("ij,jk->ik", {a}), ValueError,
                   "einsum: the equation has 2 operand(s) but 1 were given (equation \"ij,jk->ik\", "
                   "operand shapes [2, 3])");
  CHECK_THROWS_MSG(einsum("ij", {a, a}), ValueError, "einsum: the equation has 1 operand(s) but 2 were given");
  CHECK_THROWS_MSG(einsum("ij", {}), ValueError, "einsum: at least one operand is required");
  CHECK_THROWS_MSG(einsum("ij,jk", {a, b}), ValueError,
                   "einsum: subscript j has size 4 for operand 1, which does not broadcast with the size 3 "
                   "seen before (equation \"ij,jk\", operand shapes [2, 3], [4, 5])");
  CHECK_THROWS_MSG(einsum("ii->i", {a}), ValueError,
                   "einsum: subscript i is repeated for operand 0 but the sizes don't match (2 != 3)");
  CHECK_THROWS_MSG(einsum("i#->i", {c}), ValueError,
                   "einsum: invalid subscript '#' at index 1 of the equation, subscripts must be in [a-zA-Z]");
  CHECK_THROWS_MSG(einsum("ij->i->j", {a}), ValueError, "invalid subscript '-' at index 5");
  CHECK_THROWS_MSG(einsum("i-j", {a}), ValueError, "invalid subscript '-' at index 1");
  CHECK_THROWS_MSG(einsum("ij", {c}), ValueError, "einsum: operand 0 has 1 dims but 2 subscripts and no ellipsis");
  CHECK_THROWS_MSG(einsum("ij...", {c}), ValueError, "einsum: operand 0 has 1 dims, fewer than its 2 subscripts");
  CHECK_THROWS_MSG(einsum("..i->i", {a}), ValueError,
                   "einsum: found '.' for operand 0 that is not part of an ellipsis");
  CHECK_THROWS_MSG(einsum("i...j...->", {a}), ValueError, "einsum: found more than one ellipsis '...' for operand 0");
  CHECK_THROWS_MSG(einsum("i->..", {c}), ValueError, "found '.' for the output that is not part of an ellipsis");
  CHECK_THROWS_MSG(einsum("...i,...i->...", {zeros({2, 3}, DType::f64), zeros({4, 3}, DType::f64)}), ValueError,
                   "einsum: ellipsis dim 0 has size 4 for operand 1, which does not broadcast with the size 2");
  CHECK_THROWS_MSG(einsum("i->ii", {c}), ValueError, "einsum: output subscript i appears more than once");
  CHECK_THROWS_MSG(einsum("i->j", {c}), ValueError, "einsum: output subscript j does not appear in any operand");
  CHECK_THROWS_MSG(einsum("ij,ij->", {a, zeros({2, 3}, DType::f32)}), DTypeError,
                   "einsum: operand 1 has dtype f32 but operand 0 has f64");
  CHECK_THROWS_MSG(einsum("i->i", {zeros({2}, DType::i64)}), DTypeError, "einsum: expected a floating tensor");
}
