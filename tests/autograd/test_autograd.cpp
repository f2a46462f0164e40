// The engine: accumulation, multi-path graphs, views, detach, grad mode, retain_graph,
// backward's checks, ag::grad, integer tensors, printing. In-place ops, long chains and
// graph lifetime, user ops and higher-order gradients: tests/autograd/test_autograd/.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "autograd_test_util.h"

#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;

using test_util::contains;
using test_util::error_of;
using namespace autograd_test_util;

// ---- accumulation ---------------------------------------------------------------------
TEST_CASE("gradients accumulate into .grad() over backward calls until zero_grad") {
  Tensor x = leaf({1, -2, 3});
  CHECK_FALSE(x.grad().defined());
  (x * x).sum().backward();  // d/dx = 2x
  CHECK(ag::allclose(x.grad(), f64({2, -4, 6})));
  Tensor g_ref = x.grad();  // an optimizer's reference sees the later sums (in place)
  (x * x).sum().backward();
  CHECK(ag::allclose(x.grad(), f64({4, -8, 12})));
  CHECK(ag::allclose(g_ref, f64({4, -8, 12})));
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  (x * 3.0).sum().backward();
  CHECK(ag::allclose(x.grad(), f64({3, 3, 3})));
}

TEST_CASE("a tensor used on several paths gets the sum of their gradients") {
  // y = x * x + 3 x + exp(x) -> dy/dx = 2x + 3 + exp(x)
  Tensor x = leaf({0.5, -1.0});
  (x * x + x * 3.0 + ag::exp(x)).sum().backward();
  CHECK(ag::allclose(x.grad(), f64({2 * 0.5 + 3 + std::exp(0.5), -2 + 3 + std::exp(-1.0)})));
}

TEST_CASE("self-attention: x as query, key and value gets the sum of three paths") {
  ag::Generator rng(42);
  Tensor x = ag::randn({2, 3, 4}, DType::f64, &rng).requires_grad_();
  Tensor w = ag::randn({2, 3, 4}, DType::f64, &rng);  // fixed upstream weights
  auto loss = [&w](const Tensor& q, const Tensor& k, const Tensor& v) {
    return (ag::scaled_dot_product_attention(q, k, v, causal()).first * w).sum();
  };
  loss(x, x, x).backward();

  // The three paths separately, on detached copies that share x's values.
  Tensor q = x.detach().requires_grad_(), k = x.detach().requires_grad_(), v = x.detach().requires_grad_();
  loss(q, k, v).backward();
  CHECK(ag::allclose(x.grad(), q.grad() + k.grad() + v.grad(), 1e-10, 1e-12));
  // All three paths carry gradient.
  for (const Tensor& g : {q.grad(), k.grad(), v.grad()}) CHECK(ag::max(ag::abs(g)).item<double>() > 1e-3);

  auto r = ag::gradcheck(
      [](const std::vector<Tensor>& in) {
        return ag::scaled_dot_product_attention(in[0], in[0], in[0], causal()).first;
      },
      {x}, {.name = "self-attention"});
  CHECK_MESSAGE(r.ok, r.message);
}

// ---- views and detach -----------------------------------------------------------------
TEST_CASE("gradients of views flow to the base") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  // A transposed view, a slice, a selected row and a reshape of x all feed one loss.
  Tensor loss = (x.t() * f64({1, 2, 3, 4, 5, 6}, {3, 2})).sum()  // x^T weights -> [[1,3,5],[2,4,6]]
                + x.slice(1, 0, 3, 2).sum() * 10.0               // columns 0 and 2
                + x.select(0, 1).sum() * 100.0                   // row 1
                + x.reshape({6}).select(0, 0) * 1000.0;          // element (0, 0)
  loss.backward();
  CHECK(ag::allclose(x.grad(), f64({1 + 10 + 1000, 3, 5 + 10, 2 + 10 + 100, 4 + 100, 6 + 10 + 100}, {2, 3})));
  // A view of a leaf shares its storage and is itself not a leaf.
  Tensor v = x.t();
  CHECK(v.shares_storage(x));
  CHECK_FALSE(v.is_leaf());
  CHECK(v.requires_grad());
}

TEST_CASE("detach() stops gradients and shares storage") {
  Tensor x = leaf({2, 3});
  Tensor d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.shares_storage(x));
  // y = stop(x) * x: only the second factor carries gradient -> dy/dx = x
  (d * x).sum().backward();
  CHECK(ag::allclose(x.grad(), f64({2, 3})));
  // Everything detached: nothing to differentiate.
  Tensor y = d * d;
  CHECK_FALSE(y.requires_grad());
  CHECK_THROWS_AS(y.sum().backward(), ag::AutogradError);
}

// ---- grad mode ------------------------------------------------------------------------
TEST_CASE("NoGradGuard records nothing and is thread-local; EnableGradGuard re-enables") {
  Tensor x = leaf({1, 2});
  CHECK(ag::grad_enabled());
  {
    ag::NoGradGuard no_grad;
    CHECK_FALSE(ag::grad_enabled());
    Tensor y = ag::exp(x * 2.0).sum();
    CHECK_FALSE(y.requires_grad());
    CHECK(y.is_leaf());
    CHECK(y.grad_fn() == nullptr);

    bool other_thread_grad = false;
    std::thread t([&other_thread_grad] { other_thread_grad = ag::grad_enabled(); });
    t.join();
    CHECK(other_thread_grad);  // grad mode is per thread

    {
      ag::EnableGradGuard enable;
      CHECK(ag::grad_enabled());
      Tensor z = x * 2.0;
      CHECK(z.requires_grad());
      CHECK(z.grad_fn() != nullptr);
      {
        ag::NoGradGuard nested;
        CHECK_FALSE(ag::grad_enabled());
      }
      CHECK(ag::grad_enabled());
    }
    CHECK_FALSE(ag::grad_enabled());  // restored, not just turned on
  }
  CHECK(ag::grad_enabled());

  // A thread's own guard does not leak into this one.
  std::thread t([] {
    ag::NoGradGuard g;
    CHECK_FALSE(ag::grad_enabled());
  });
  t.join();
  CHECK(ag::grad_enabled());
}

// ---- retain_graph ---------------------------------------------------------------------
TEST_CASE("a second backward through a freed graph throws; retain_graph keeps it") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = (ag::exp(x) * x).sum();
  y.backward();
  std::string msg = error_of<ag::AutogradError>([&] { y.backward(); });
  CHECK(contains(msg, "retain_graph"));

  x.zero_grad();
  Tensor z = (x * x).sum();
  z.backward({}, /*retain_graph=*/true);
  CHECK(ag::allclose(x.grad(), f64({2, 4, 6})));
  z.backward();  // allowed, and this one frees the graph
  CHECK(ag::allclose(x.grad(), f64({4, 8, 12})));
  CHECK_THROWS_AS(z.backward(), ag::AutogradError);
}

// ---- backward's checks ----------------------------------------------------------------
TEST_CASE("backward of a non-scalar needs a gradient; a wrongly shaped one is refused") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;
  std::string msg = error_of<ag::AutogradError>([&] { y.backward(); });
  CHECK(contains(msg, "[2, 3]"));
  CHECK_THROWS_AS(y.backward(ag::ones({3, 2}, DType::f64)), ag::ShapeError);
  CHECK_THROWS_AS(y.backward(ag::ones({2, 3}, DType::f32)), ag::ShapeError);
  y.backward(f64({1, 0, 0, 0, 0, 2}, {2, 3}));
  CHECK(ag::allclose(x.grad(), f64({2, 0, 0, 0, 0, 4}, {2, 3})));
}

// ---- ag::grad -------------------------------------------------------------------------
TEST_CASE("ag::grad returns gradients without touching .grad()") {
  Tensor x = leaf({1, 2, 3});
  Tensor w = leaf({0.5, -1, 2});
  Tensor h = x * w;          // intermediate
  Tensor y = (h * h).sum();  // dy/dh = 2h, dy/dx = 2 h w, dy/dw = 2 h x
  auto g = ag::grad({y}, {x, h, w}, {}, /*retain_graph=*/true);
  REQUIRE(g.size() == 3);
  CHECK(ag::allclose(g[0], f64({2 * 0.5 * 0.5, 2 * -2 * -1, 2 * 6 * 2})));
  CHECK(ag::allclose(g[1], f64({1, -4, 12})));
  CHECK(ag::allclose(g[2], f64({2 * 0.5 * 1, 2 * -2 * 2, 2 * 6 * 3})));
  CHECK_FALSE(x.grad().defined());
  CHECK_FALSE(w.grad().defined());
  CHECK_FALSE(g[0].requires_grad());

  // With an explicit output gradient.
  auto gx = ag::grad({h}, {x}, {f64({1, 10, 100})}, true);
  CHECK(ag::allclose(gx[0], f64({0.5, -10, 200})));

  // The same input twice gets its gradient twice, in separate tensors.
  auto gd = ag::grad({y}, {x, h, x}, {}, true);
  CHECK(ag::allclose(gd[0], g[0]));
  CHECK(ag::allclose(gd[2], g[0]));
  CHECK_FALSE(gd[0].shares_storage(gd[2]));

  // An input the outputs do not depend on.
  Tensor unused = leaf({7});
  std::string msg = error_of<ag::AutogradError>([&] { ag::grad({y}, {x, unused}, {}, true); });
  CHECK(contains(msg, "allow_unused"));
  auto gu = ag::grad({y}, {x, unused}, {}, true, /*create_graph=*/false, /*allow_unused=*/true);
  CHECK(gu[0].defined());
  CHECK_FALSE(gu[1].defined());
  // An input that does not require grad.
  CHECK_THROWS_AS(ag::grad({y}, {f64({1})}), ag::AutogradError);
}

// ---- misc -----------------------------------------------------------------------------
TEST_CASE("requires_grad_ on an integer tensor throws DTypeError") {
  Tensor i = ag::arange(4);  // i64
  CHECK_THROWS_AS(i.requires_grad_(), ag::DTypeError);
  CHECK_THROWS_AS(ag::zeros({2}, DType::b8).requires_grad_(), ag::DTypeError);
  // Turning it off on a non-leaf is refused too.
  Tensor y = leaf({1}) * 2.0;
  CHECK_THROWS_AS(y.requires_grad_(false), ag::AutogradError);
}

TEST_CASE("printing a tensor shows its grad_fn") {
  Tensor x = leaf({1, 2});
  std::ostringstream os;
  os << x * 2.0;
  CHECK(contains(os.str(), "grad_fn=<mul>"));
  CHECK(contains(x.to_string(), "requires_grad=True"));
  CHECK(contains(ag::softmax(x, 0).to_string(), "grad_fn=<softmax>"));
  CHECK_FALSE(contains(x.detach().to_string(), "requires_grad"));
}

// ---- gradient routing -----------------------------------------------------------------
using ag::Grads;
using ag::NeedsGrad;
using ag::record;

TEST_CASE("backward hands a residual add's gradient to both branches without copying it (as PyTorch)") {
  // Two ops that record the address of the gradient reaching them; both sit behind one
  // add, whose backward returns the same g for either input.
  const void* seen[2] = {nullptr, nullptr};
  auto probe = [&](const Tensor& x, int k) {
    return record("probe", x.detach() * 1.0, {x}, [&seen, k](const Tensor& g, NeedsGrad) {
      seen[k] = g.raw_data();
      return Grads{g};
    });
  };
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}).requires_grad_();
  (probe(x, 0) + probe(x, 1)).backward(Tensor::from_vector(std::vector<float>{1, 1, 1}));
  CHECK(seen[0] != nullptr);
  CHECK(seen[0] == seen[1]);
  // The leaf still owns its .grad: the sum of both branches, not an alias of either.
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 2, 2});
  CHECK(x.grad().raw_data() != seen[0]);
}

// record()'s composite overload (tape.h): a fused op passes its Composite as a callable,
// made only when a node is recorded, and a create_graph backward differentiates it. The
// op below squares x with a backward closure of detached tensors (a fused kernel's:
// not differentiable itself), so a second derivative of 2 can only come from the
// composite.
TEST_CASE("record with a composite callable: made only for a node, used by double backward") {
  int made = 0;
  auto square = [&made](const Tensor& x) {
    Tensor y = x.detach() * x.detach();
    return ag::record(
        "test_square", y, {x},
        [sx = ag::Saved(x)](const Tensor& g, ag::NeedsGrad) { return ag::Grads{g * (sx.get().detach() * 2.0)}; },
        [&made, &x] {
          ++made;
          return ag::Composite{[](const std::vector<Tensor>& in) { return in[0] * in[0]; }, {ag::Saved(x)}};
        });
  };
  Tensor x = leaf({1, -2, 3});
  {
    ag::NoGradGuard no_grad;
    CHECK_FALSE(square(x).requires_grad());
  }
  CHECK_FALSE(square(f64({1, 2})).requires_grad());  // no input requires grad
  CHECK(made == 0);
  Tensor y = square(x);
  CHECK(made == 1);
  CHECK(std::string(y.grad_fn()->name) == "test_square");
  auto g = ag::grad({y.sum()}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true);
  CHECK(ag::allclose(g[0], f64({2, -4, 6})));
  REQUIRE(g[0].requires_grad());
  auto gg = ag::grad({g[0].sum()}, {x});
  CHECK(ag::allclose(gg[0], f64({2, 2, 2})));
}
