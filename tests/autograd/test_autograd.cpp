// The engine: accumulation, multi-path graphs, views, detach, grad mode, retain_graph,
// in-place (version) errors, ag::grad, long chains, graph lifetime, record() for user
// ops and gradcheck's failure report.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

using ag::DType;
using ag::Shape;
using ag::Tensor;

using test_util::contains;
using test_util::error_of;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor f64(const std::vector<double>& v) { return Tensor::from_vector(v); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }
Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }

ag::SdpaOptions causal() {  // set by name: a designated initializer would warn
  ag::SdpaOptions o;
  o.causal = true;
  return o;
}

// Runs f on a thread with a 1 MiB stack, where a recursion per graph node overflows on a
// long chain (falls back to the calling thread without POSIX threads).
void run_on_small_stack(const std::function<void()>& f) {
#if defined(__unix__) || defined(__APPLE__)
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::size_t{1} << 20);
  pthread_t thread;
  void* (*body)(void*) = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  int rc = pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&f));
  pthread_attr_destroy(&attr);
  if (rc == 0) {
    pthread_join(thread, nullptr);
    return;
  }
#endif
  f();
}

// A user-defined op built with ag::record: out = x * x, with the backward given.
// `right` picks the correct derivative 2 g x or a deliberately wrong g x.
Tensor my_square(const Tensor& x, bool right) {
  Tensor out = x.detach() * x.detach();  // fresh, no graph
  return ag::record(right ? "my_square" : "my_square_wrong", out, {x},
                    [sx = ag::Saved(x), right](const Tensor& g, ag::NeedsGrad) {
                      return ag::Grads{right ? g * sx.get() * 2.0 : g * sx.get()};
                    });
}

}  // namespace

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

// ---- in-place writes ------------------------------------------------------------------
TEST_CASE("an in-place write to a tensor saved for backward throws VersionError naming the op") {
  Tensor a = leaf({1, 2, 3});
  Tensor b = f64({4, 5, 6});  // needs no grad, but mul saves it for a's gradient
  Tensor c = a * b;
  b.mul_(2);
  std::string msg = error_of<ag::VersionError>([&] { c.sum().backward(); });
  CHECK(contains(msg, "mul"));
  CHECK(contains(msg, "modified in place"));
}

TEST_CASE("an in-place write under NoGradGuard to a saved leaf is caught at backward") {
  Tensor w = leaf({1, 2, 3});
  Tensor x = leaf({4, 5, 6});
  Tensor y = (w * x).sum();  // saves w for x's gradient and x for w's
  {
    ag::NoGradGuard no_grad;  // as an optimizer step would
    w.mul_(0.5);
  }
  std::string msg = error_of<ag::VersionError>([&] { y.backward(); });
  CHECK(contains(msg, "mul"));
  // A view shares the version counter: writing through it is caught too.
  Tensor u = leaf({1, 2, 3, 4}, {2, 2});
  Tensor z = ag::exp(u).sum();  // exp saves its output, not u
  Tensor s = ag::sin(u).sum();  // sin saves u
  {
    ag::NoGradGuard no_grad;
    u.t().select(0, 1).fill_(0.0);  // a view of u
  }
  z.backward();  // exp's saved output was not touched
  CHECK_THROWS_AS(s.backward(), ag::VersionError);
}

TEST_CASE("in-place ops on a leaf that requires grad throw while grad mode is on") {
  Tensor x = leaf({1, 2});
  CHECK_THROWS_AS(x.mul_(2), ag::AutogradError);
  CHECK_THROWS_AS(x.fill_(0), ag::AutogradError);
  CHECK_THROWS_AS(x.add_(f64({1, 1})), ag::AutogradError);
  CHECK_THROWS_AS(x.copy_(f64({1, 1})), ag::AutogradError);
  CHECK_THROWS_AS(x.masked_fill_(ag::gt(f64({1, 0}), 0.5), 0.0), ag::AutogradError);
  Tensor v = (x * 2.0).view({2});  // a view inside the graph
  CHECK_THROWS_AS(v.mul_(2), ag::AutogradError);
  CHECK(contains(error_of<ag::AutogradError>([&] { v.relu_(); }), "relu_: in-place write to a view"));
  CHECK(ag::allclose(x, f64({1, 2})));  // nothing was written
  ag::NoGradGuard no_grad;
  x.mul_(2);
  CHECK(ag::allclose(x, f64({2, 4})));
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

// ---- long chains ----------------------------------------------------------------------
TEST_CASE("a 100,000-op chain runs backward and is destroyed without deep recursion") {
  // On a 1 MiB stack: recursing once per node would need several MiB here (the default
  // 8 MiB stack can hold a 100,000-deep recursion in a Release build).
  constexpr int kOps = 100000;
  double grad_x = 0;
  bool alive_before_drop = false, expired_after_backward = false, expired_unused = false;
  std::string error;
  run_on_small_stack([&] {
    try {
      std::weak_ptr<ag::Node> first;
      {
        Tensor x = leaf({1.0});
        Tensor y = x;
        for (int i = 0; i < kOps; ++i) {
          y = i % 2 ? y * 1.0000001 : y + 1e-6;
          if (i == 0) first = y.grad_fn();
        }
        y.backward();
        grad_x = x.grad().item<double>();
        alive_before_drop = !first.expired();  // y still holds the (released) chain
      }
      expired_after_backward = first.expired();

      // Dropped without a backward (closures and saved tensors still alive).
      {
        Tensor x = leaf({1.0});
        Tensor y = x;
        for (int i = 0; i < kOps; ++i) y = y * 1.0000001;
        first = y.grad_fn();
      }
      expired_unused = first.expired();
    } catch (const std::exception& e) { error = e.what(); }
  });
  CHECK(error == "");
  // d/dx = 1.0000001^(kOps / 2) = e^0.005 approximately
  CHECK(grad_x == doctest::Approx(std::pow(1.0000001, kOps / 2)).epsilon(1e-9));
  CHECK(alive_before_drop);
  CHECK(expired_after_backward);
  CHECK(expired_unused);
}

// ---- graph lifetime -------------------------------------------------------------------
TEST_CASE("graphs die with their last tensor: no cycles after many iterations") {
  ag::Generator rng(5);
  Tensor x = ag::randn({2, 3, 4}, DType::f64, &rng).requires_grad_();
  Tensor w = ag::randn({5, 4}, DType::f64, &rng).requires_grad_();
  Tensor b = ag::randn({5}, DType::f64, &rng).requires_grad_();
  Tensor targets = Tensor::from_vector(std::vector<int64_t>{0, 4, 2, 1, 3, 0}, {2, 3});
  std::weak_ptr<ag::Node> root, inner;
  for (int it = 0; it < 1000; ++it) {
    Tensor h = ag::layer_norm(ag::linear(x, w, b), {5});  // (2, 3, 5)
    Tensor a = ag::scaled_dot_product_attention(h, h, h, causal()).first;
    Tensor loss = ag::cross_entropy(a.transpose(1, 2), targets);  // (N, C, d) layout
    inner = h.grad_fn();
    root = loss.grad_fn();
    if (it % 2) loss.backward();  // half with backward, half dropped as built
  }
  CHECK(root.expired());
  CHECK(inner.expired());
  // Nothing else holds the leaves (their .grad is their own).
  CHECK(x.impl_ptr().use_count() == 1);
  CHECK(w.impl_ptr().use_count() == 1);
  CHECK(x.grad().defined());

  Tensor y = ag::exp(x).sum();
  std::weak_ptr<ag::Node> node = y.grad_fn();
  CHECK_FALSE(node.expired());
  y = Tensor();
  CHECK(node.expired());
}

// ---- record() for user-defined ops, and gradcheck's report ----------------------------
TEST_CASE("record() builds a user op; gradcheck passes it and reports a wrong backward") {
  Tensor x = leaf({1.5, -2.0});
  Tensor y = my_square(x, true);
  CHECK(y.requires_grad());
  CHECK(std::string(y.grad_fn()->name) == "my_square");
  y.sum().backward();
  CHECK(ag::allclose(x.grad(), f64({3, -4})));

  auto good =
      ag::gradcheck([](const std::vector<Tensor>& in) { return my_square(in[0], true); }, {x}, {.name = "my_square"});
  CHECK_MESSAGE(good.ok, good.message);

  auto bad = ag::gradcheck([](const std::vector<Tensor>& in) { return my_square(in[0], false); }, {x},
                           {.name = "my_square_wrong"});
  CHECK_FALSE(bad.ok);
  CHECK_FALSE(static_cast<bool>(bad));
  // The worst element is x[1] = -2: analytic g x = -2, numeric 2 x = -4.
  INFO(bad.message);
  CHECK(contains(bad.message, "gradcheck(my_square_wrong)"));
  CHECK(contains(bad.message, "input 0"));
  CHECK(contains(bad.message, "element [1]"));
  CHECK(contains(bad.message, "analytic -2"));
  CHECK(contains(bad.message, "numeric -4"));

  // record() does nothing when no input requires grad or under NoGradGuard.
  CHECK_FALSE(my_square(f64({1.0}), true).requires_grad());
  ag::NoGradGuard no_grad;
  CHECK_FALSE(my_square(x, true).requires_grad());
}

TEST_CASE("the engine refuses a gradient of the wrong shape, naming the op") {
  Tensor x = leaf({1, 2, 3});
  Tensor out = x.detach() * 2.0;
  Tensor y = ag::record("bad_shape_op", out, {x}, [](const Tensor& g, ag::NeedsGrad) {
    return ag::Grads{g.sum()};  // [] instead of [3]
  });
  std::string msg = error_of<ag::AutogradError>([&] { y.sum().backward(); });
  CHECK(contains(msg, "bad_shape_op"));
  CHECK(contains(msg, "[3]"));
}

TEST_CASE("NeedsGrad tells a closure which inputs need a gradient") {
  Tensor a = leaf({1, 2});
  Tensor b = f64({3, 4});
  std::vector<bool> seen;
  Tensor out = a.detach() * b;
  Tensor y = ag::record("probe", out, {a, b}, [&seen, b](const Tensor& g, ag::NeedsGrad need) {
    seen = {need[0], need[1]};
    return ag::Grads{g * b, Tensor{}};
  });
  y.sum().backward();
  CHECK(seen == std::vector<bool>{true, false});
  CHECK(ag::allclose(a.grad(), f64({3, 4})));
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

// ---- higher-order gradients ---------------------------------------------------------
using ag::allclose;
using ag::exp;
using ag::gradcheck;
using ag::GradcheckResult;
using ag::gradgradcheck;
using ag::Grads;
using ag::NeedsGrad;
using ag::pow;
using ag::record;
using ag::Saved;
using ag::sum;

TEST_CASE("create_graph: a Hessian-vector product by hand") {
  // f(x) = sum(x^3): grad = 3 x^2, and H v = 6 x v.
  Tensor x = f64({1, -2, 0.5}, {3}).requires_grad_();
  Tensor v = f64({1, 2, 3}, {3});
  Tensor gx = ag::grad({sum(pow(x, 3.0))}, {x}, {}, {}, /*create_graph=*/true)[0];
  CHECK(gx.requires_grad());
  CHECK(allclose(gx, f64({3, 12, 0.75}, {3})));
  Tensor hv = ag::grad({sum(gx * v)}, {x})[0];
  CHECK(allclose(hv, f64({6, -24, 9}, {3})));
}

TEST_CASE("create_graph: backward() leaves a differentiable .grad") {
  // y = sum(exp(x)): x.grad = exp(x), connected to the graph; d sum(x.grad) / dx = exp(x).
  Tensor x = f64({0.0, 1.0}, {2}).requires_grad_();
  sum(exp(x)).backward({}, {}, /*create_graph=*/true);
  Tensor g1 = x.grad();
  REQUIRE(g1.requires_grad());
  Tensor g2 = ag::grad({sum(g1)}, {x})[0];
  CHECK(allclose(g2, f64({1.0, std::exp(1.0)}, {2})));
  // A second create_graph backward adds out of place into the connected .grad.
  sum(exp(x)).backward({}, {}, /*create_graph=*/true);
  CHECK(allclose(x.grad(), f64({2.0, 2 * std::exp(1.0)}, {2})));
  CHECK(x.grad().requires_grad());
  // x.grad's graph holds x: the cycle is broken by dropping .grad, as in PyTorch.
  x.zero_grad();
}

TEST_CASE("grad runs only the part of the graph between outputs and inputs") {
  // h = x * 2 is computed once; grad(y, h) must not run (or free) x's part of the graph,
  // so a later backward to x still works without retain_graph.
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  Tensor h = x * 2.0;
  Tensor y = sum(h * h);
  Tensor gh = ag::grad({y}, {h}, {}, /*retain_graph=*/true)[0];
  CHECK(allclose(gh, f64({4, 8}, {2})));
  CHECK_FALSE(x.grad().defined());
  y.backward();
  CHECK(allclose(x.grad(), f64({8, 16}, {2})));
}

TEST_CASE("gradgradcheck catches a backward that is not differentiable") {
  // A square whose closure uses a detached copy of x: first derivatives are right, the
  // second derivative (through x) is lost.
  auto bad_square = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor y = x.detach() * x.detach();
    return record("bad_square", y, {x}, [xd = x.detach()](const Tensor& g, NeedsGrad) { return Grads{g * xd * 2.0}; });
  };
  auto good_square = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor y = x.detach() * x.detach();
    return record("good_square", y, {x},
                  [sx = Saved(x)](const Tensor& g, NeedsGrad) { return Grads{g * sx.get() * 2.0}; });
  };
  Tensor x = f64({0.5, -1.5, 2.0}, {3}).requires_grad_();
  CHECK(gradcheck(bad_square, {x}).ok);
  GradcheckResult r = gradgradcheck(bad_square, {x}, {.name = "bad_square"});
  CHECK_FALSE(r.ok);
  CHECK(contains(r.message, "gradgrad bad_square"));
  CHECK(gradgradcheck(good_square, {x}).ok);
}

TEST_CASE("Saved::output reconnects an op's output to its node under create_graph") {
  // exp saves its output y; d/dx (g * y) needs y's own gradient, exp(x).
  Tensor x = f64({0.3, -0.7}, {2}).requires_grad_();
  Tensor g1 = ag::grad({sum(exp(x) * 3.0)}, {x}, {}, {}, true)[0];  // 3 exp(x)
  Tensor g2 = ag::grad({sum(g1)}, {x})[0];                          // 3 exp(x)
  CHECK(allclose(g2, exp(x.detach()) * 3.0));
}

// ---- in-place ops inside the graph --------------------------------------------------
TEST_CASE("in-place ops on non-leaf tensors are recorded (gradcheck and gradgradcheck)") {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const Tensor mask = ag::gt(f64({1, 0, 1, 0, 0, 1}, {2, 3}), 0.5);
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"relu_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 1.5;
         return y.relu_();
       }},
      {"mul_ tensor",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] + 0.0;
         return y.mul_(x[1]);
       }},
      {"mul_ scalar",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::sin(x[0]);
         return y.mul_(2.0);
       }},
      {"add_ alpha",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::sin(x[0]);
         return y.add_(x[1], -0.5);
       }},
      {"sub_ div_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * x[1];
         y.sub_(x[1]);
         return y.div_(3.0);
       }},
      {"div_ tensor",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 2.0;
         return y.div_(ag::exp(x[1]));
       }},
      {"masked_fill_",
       [mask](const std::vector<Tensor>& x) {
         Tensor y = x[0] * x[1];
         return y.masked_fill_(mask, 0.25);
       }},
      {"exp_ tanh_ sigmoid_ neg_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 0.5;
         y.exp_().tanh_();
         return y.sigmoid_().neg_();
       }},
      {"clamp_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 1.0;
         return y.clamp_(-0.3, 0.4);
       }},
      {"copy_ into a buffer",
       [](const std::vector<Tensor>& x) {
         Tensor buf = ag::zeros({2, 3}, DType::f64);  // a leaf that needs no grad
         buf.copy_(x[0] * x[1]);
         return buf * 2.0;
       }},
      {"fill_ then add_",
       [](const std::vector<Tensor>& x) {
         Tensor y = x[0] * 3.0;
         y.fill_(1.0);
         return y.add_(x[1]);
       }},
      {"add_ into a constant",
       [](const std::vector<Tensor>& x) {
         Tensor y = ag::ones({2, 3}, DType::f64);
         return y.add_(x[0]);
       }},
  };
  ag::Generator rng(5);
  for (auto& name_fn : cases) {
    auto& name = name_fn.first;
    auto& fn = name_fn.second;
    INFO(std::string(name));
    // Values away from clamp's and relu's kinks: 0.05 off every multiple of 0.1.
    std::vector<Tensor> x = {(ag::randint(-9, 9, {2, 3}, &rng).to(DType::f64) * 0.1 + 0.05).requires_grad_(),
                             ag::uniform({2, 3}, 0.5, 2.0, DType::f64, &rng).requires_grad_()};
    Tensor y = fn(x);
    CHECK(y.requires_grad());
    CHECK(ag::gradcheck(fn, x, {.name = name}).ok);
    CHECK(ag::gradgradcheck(fn, x, {.name = name}).ok);
  }
}

TEST_CASE("in-place ops inside the graph: self becomes the result; saved tensors notice") {
  Tensor x = leaf({-1, 2});
  Tensor y = x * 3.0;
  Tensor& same = y.relu_();
  CHECK(&same == &y);
  CHECK(ag::allclose(y, f64({0, 6})));
  CHECK(std::string(y.grad_fn()->name) == "relu");
  y.sum().backward();
  CHECK(ag::allclose(x.grad(), f64({0, 3})));

  // sin saved y before the write: backward through it throws, naming the op.
  Tensor a = leaf({0.5, 1.5});
  Tensor h = a * 2.0;
  Tensor s = ag::sin(h);
  h.mul_(2.0);
  std::string msg = error_of<ag::VersionError>([&] { s.sum().backward(); });
  CHECK(contains(msg, "backward of sin"));
  CHECK(contains(msg, "modified in place"));

  // exp saves its output: writing into it breaks exp's backward, as in PyTorch.
  Tensor e = ag::exp(a);
  e.mul_(2.0);
  CHECK(contains(error_of<ag::VersionError>([&] { e.sum().backward(); }), "backward of exp"));

  // The in-place op's own saved value is the old one (a clone), so it is fine.
  Tensor b = leaf({0.5, 1.5}), w = leaf({2, 3});
  Tensor z = b * 1.0;
  z.mul_(w);  // dz/dw needs the old z
  z.sum().backward();
  CHECK(ag::allclose(w.grad(), f64({0.5, 1.5})));
  CHECK(ag::allclose(b.grad(), f64({2, 3})));
}

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
