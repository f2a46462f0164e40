// Activation checkpointing (attograd/activation_checkpoint.h, PyTorch's torch.utils.checkpoint):
// the same gradients as without it, to the bit in float64, for an MLP block whose
// parameters fn captures; dropout draws the same masks in the recomputation; the
// activations are freed after the forward; double backward, ag::grad, hooks and a
// checkpoint inside a bigger graph work as without it.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;

namespace {

// A residual MLP block x (N, 4) -> (N, 4): x + W2 dropout(gelu(W1 x + b1)) + b2, its
// parameters leaves that fn reaches only through the closure.
struct Block {
  Tensor w1, b1, w2, b2;
  double p = 0.0;  // dropout probability (training mode)
  Block() {
    manual_seed(11);
    w1 = randn({8, 4}, DType::f64).requires_grad_();
    b1 = randn({8}, DType::f64).requires_grad_();
    w2 = randn({4, 8}, DType::f64).requires_grad_();
    b2 = randn({4}, DType::f64).requires_grad_();
  }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
  // `hidden` (optional): the pre-activation (N, 8), which gelu saves for backward.
  Tensor operator()(const Tensor& x, std::weak_ptr<Storage>* hidden = nullptr) const {
    Tensor a = linear(x, w1, b1);  // (N, 8)
    if (hidden) *hidden = a.storage();
    return x + linear(dropout(gelu(a), p, /*training=*/true), w2, b2);
  }
};

Tensor input() {
  manual_seed(5);
  return randn({3, 4}, DType::f64).requires_grad_();
}

// Gradients of loss = sum(tanh(block(x))^2) for x and the parameters, with or without
// checkpointing the block, the generator seeded the same way.
std::vector<Tensor> grads(const Block& blk, const Tensor& x, bool ckpt, bool preserve = true) {
  manual_seed(3);
  Tensor y = ckpt ? checkpoint([&](const std::vector<Tensor>& v) { return blk(v[0]); }, {x}, preserve) : blk(x);
  Tensor loss = sum(pow(tanh(y), 2.0));
  std::vector<Tensor> wrt{x};
  for (auto& p : blk.params()) wrt.push_back(p);
  return grad({loss}, wrt);
}

void check_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol = 0.0) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    REQUIRE(a[i].defined());
    REQUIRE(b[i].defined());
    CHECK(test_util::max_abs_diff(a[i], b[i]) <= tol);
  }
}

}  // namespace

TEST_CASE("checkpoint: an MLP block's gradients equal those without checkpointing, bit for bit") {
  Block blk;
  Tensor x = input();
  check_same(grads(blk, x, true), grads(blk, x, false));
}

TEST_CASE("checkpoint: dropout draws the same mask in the recomputation; the generator ends where it would") {
  Block blk;
  blk.p = 0.5;
  Tensor x = input();
  std::vector<Tensor> plain = grads(blk, x, false);
  const std::string after_plain = default_generator().state();
  std::vector<Tensor> ckpt = grads(blk, x, true);
  CHECK(default_generator().state() == after_plain);  // the recomputation's draws are undone
  check_same(ckpt, plain);
  // Without the state, the recomputation draws a new mask: other gradients, and the
  // generator has advanced past the plain run's position.
  std::vector<Tensor> fresh = grads(blk, x, true, /*preserve=*/false);
  CHECK(default_generator().state() != after_plain);
  CHECK(test_util::max_abs_diff(fresh[1], plain[1]) > 1e-3);
}

TEST_CASE("checkpoint: the block's activations are freed after the forward") {
  Block blk;
  Tensor x = input();
  std::weak_ptr<Storage> plain_hidden, ckpt_hidden;
  Tensor y_plain = blk(x, &plain_hidden);
  CHECK_FALSE(plain_hidden.expired());  // gelu saved its input for backward
  Tensor y_ckpt = checkpoint([&](const Tensor& v) { return blk(v, &ckpt_hidden); }, x);
  CHECK(ckpt_hidden.expired());  // only inputs and output are kept
  CHECK(test_util::max_abs_diff(y_ckpt, y_plain) == 0.0);
  // The graph holds one node, whose inputs are x and the four parameters.
  REQUIRE(y_ckpt.grad_fn());
  CHECK(std::string(y_ckpt.grad_fn()->name) == "checkpoint");
  CHECK(y_ckpt.grad_fn()->inputs.size() == 5);
}

TEST_CASE("checkpoint: double backward through it equals the plain one") {
  Block blk;
  Tensor x = input();
  auto second = [&](bool ckpt) {
    Tensor y = ckpt ? checkpoint([&](const Tensor& v) { return blk(v); }, x) : blk(x);
    Tensor loss = sum(pow(tanh(y), 2.0));
    std::vector<Tensor> g = grad({loss}, {x, blk.w1}, {}, {}, /*create_graph=*/true);
    Tensor penalty = sum(g[0] * g[0]) + sum(g[1] * g[1]);  // a gradient penalty
    return grad({penalty}, {x, blk.w1, blk.b1, blk.w2});
  };
  check_same(second(true), second(false), 1e-12);
}

TEST_CASE("checkpoint: inside a bigger graph, with backward, .grad and post-accumulate hooks") {
  Block blk, blk2;
  Tensor x = input();
  Tensor w0 = (eye(4, {}, DType::f64) * 0.5).requires_grad_();
  auto run = [&](bool ckpt) {
    for (Tensor t : {x, w0, blk.w1, blk.b1, blk.w2, blk.b2, blk2.w1}) t.zero_grad();
    int hook_calls = 0;
    double seen = 0;
    auto handle = blk.w1.register_post_accumulate_grad_hook([&](const Tensor& p) {
      ++hook_calls;
      seen = p.grad().sum().item<double>();
    });
    Tensor h = matmul(x, w0);  // a non-leaf input, made before the checkpoint
    Tensor y = ckpt ? checkpoint([&](const Tensor& v) { return blk(v); }, h) : blk(h);
    Tensor z = ckpt ? checkpoint([&](const Tensor& v) { return blk2(v); }, y) : blk2(y);
    (sum(z * z) + sum(h)).backward();
    handle.remove();
    CHECK(hook_calls == 1);
    CHECK(seen == blk.w1.grad().sum().item<double>());  // the hook saw the final .grad
    std::vector<Tensor> g;
    for (Tensor t : {x, w0, blk.w1, blk.b1, blk.w2, blk.b2, blk2.w1}) g.push_back(t.grad().clone());
    return g;
  };
  check_same(run(true), run(false));
}

TEST_CASE("checkpoint: several outputs, several inputs, the variadic form") {
  Block blk;
  Tensor x = input();
  manual_seed(8);
  Tensor s = randn({3, 4}, DType::f64).requires_grad_();
  auto fn = [&](const Tensor& a, const Tensor& b) { return std::vector<Tensor>{blk(a) * b, sum(a * blk.w1.sum({0}))}; };
  auto loss_of = [](const std::vector<Tensor>& o) { return sum(o[0] * o[0]) + o[1] * 3.0; };
  std::vector<Tensor> wrt{x, s, blk.w1, blk.b2};
  std::vector<Tensor> out = checkpoint(fn, x, s);
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape() == Shape{3, 4});
  CHECK(out[1].shape() == Shape{});
  check_same(grad({loss_of(out)}, wrt), grad({loss_of(fn(x, s))}, wrt));
  // Two tensors in, one out, through the vector form.
  Tensor y = checkpoint([&](const std::vector<Tensor>& v) { return blk(v[0]) * v[1]; }, std::vector<Tensor>{x, s});
  check_same(grad({sum(y)}, {x, s}), grad({sum(blk(x) * s)}, {x, s}));
}

TEST_CASE("checkpoint: errors and NoGradGuard") {
  Block blk;
  Tensor x = input();
  SUBCASE("a captured non-leaf that requires grad must be an input") {
    Tensor scale = blk.b2 * 2.0;  // made before the checkpoint
    std::string e =
        test_util::error_of<ValueError>([&] { (void)checkpoint([&](const Tensor& v) { return blk(v) * scale; }, x); });
    CHECK(test_util::contains(e, "checkpoint: fn uses a tensor that requires grad, is not a leaf"));
    CHECK(test_util::contains(e, "'mul'"));
    CHECK(test_util::contains(e, "pass it to checkpoint as an input"));
  }
  SUBCASE("an input changed in place after the forward") {
    Tensor h = x * 1.0;
    Tensor y = checkpoint([&](const Tensor& v) { return blk(v); }, h);
    {
      NoGradGuard no_grad;
      h.add_(1.0);
    }
    CHECK_THROWS_AS(sum(y).backward(), VersionError);
  }
  SUBCASE("under NoGradGuard checkpoint just calls fn") {
    NoGradGuard no_grad;
    Tensor y = checkpoint([&](const Tensor& v) { return blk(v); }, x);
    CHECK_FALSE(y.requires_grad());
  }
}
