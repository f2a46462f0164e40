// The engine's hooks: Tensor::register_hook and retain_grad (PyTorch's, on leaves and
// non-leaves, with backward, ag::grad and create_graph), and those for
// DistributedDataParallel: Tensor::register_post_accumulate_grad_hook (runs once per
// backward per leaf, after the leaf's last gradient of that pass was added into .grad)
// and ag::queue_callback (runs after the pass's last node).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>
#include <string>
#include <vector>

using ag::Tensor;
using test_util::contains;
using test_util::error_of;

namespace {

Tensor leaf(const std::vector<double>& v) { return Tensor::from_vector(v).requires_grad_(); }

}  // namespace

TEST_CASE("post_accumulate_grad_hook: once per backward, after every contribution to a leaf used several times") {
  Tensor x = leaf({0.5, -1.0, 2.0});
  Tensor w = leaf({3.0, 0.25, -2.0});
  int calls = 0;
  std::vector<double> seen;
  bool same_leaf = false;
  auto h = x.register_post_accumulate_grad_hook([&](Tensor& t) {
    ++calls;
    same_leaf = t.impl() == x.impl();
    seen = t.grad().to_vector<double>();
  });
  // x is used four times, one of them through a view:
  // loss = sum(x^2) + sum(x w) + sum(exp(x)) + 5 x[1]
  // d loss / dx = 2x + w + exp(x) + (0, 5, 0)
  auto loss_of = [&] { return (x * x).sum() + (x * w).sum() + ag::exp(x).sum() + x.slice(0, 1, 2).sum() * 5.0; };
  std::vector<double> expect(3);
  const std::vector<double> xv{0.5, -1.0, 2.0}, wv{3.0, 0.25, -2.0};
  for (int i = 0; i < 3; ++i) expect[i] = 2 * xv[i] + wv[i] + std::exp(xv[i]) + (i == 1 ? 5.0 : 0.0);

  loss_of().backward();
  CHECK(calls == 1);
  CHECK(same_leaf);
  REQUIRE(seen.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(seen[i] == doctest::Approx(expect[i]).epsilon(1e-14));

  // A second backward without zeroing: the hook sees the accumulated .grad, once.
  loss_of().backward();
  CHECK(calls == 2);
  for (int i = 0; i < 3; ++i) CHECK(seen[i] == doctest::Approx(2 * expect[i]).epsilon(1e-14));
  h.remove();
}

TEST_CASE("post_accumulate_grad_hook: every hooked leaf, in registration order, also a root leaf") {
  Tensor a = leaf({1.0, 2.0}), b = leaf({3.0});
  std::vector<std::string> order;
  auto h1 = a.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("a1"); });
  auto h2 = b.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("b"); });
  auto h3 = a.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("a2"); });
  // b only feeds the last op before the loss, a is deeper: b is final first.
  Tensor y = ag::tanh(a).sum() * b;
  y.sum().backward();
  CHECK(order == std::vector<std::string>{"b", "a1", "a2"});

  // Backward from a leaf itself: its hooks run too.
  order.clear();
  b.backward(Tensor::from_vector(std::vector<double>{1.0}));
  CHECK(order == std::vector<std::string>{"b"});
}

TEST_CASE("post_accumulate_grad_hook: not run by ag::grad, which touches no .grad") {
  Tensor x = leaf({1.0, 2.0});
  int calls = 0;
  auto h = x.register_post_accumulate_grad_hook([&](Tensor&) { ++calls; });
  auto g = ag::grad({(x * x).sum()}, {x});
  CHECK(calls == 0);
  CHECK_FALSE(x.grad().defined());
  CHECK(g[0].to_vector<double>() == std::vector<double>{2.0, 4.0});
}

TEST_CASE("post_accumulate_grad_hook: remove() unregisters; a hook may remove itself") {
  Tensor x = leaf({1.0});
  int first = 0, second = 0;
  auto h1 = x.register_post_accumulate_grad_hook([&](Tensor&) { ++first; });
  ag::RemovableHandle h2;
  h2 = x.register_post_accumulate_grad_hook([&](Tensor&) {
    ++second;
    h2.remove();  // one-shot
  });
  (x * 2.0).sum().backward();
  CHECK(first == 1);
  CHECK(second == 1);
  h1.remove();
  h1.remove();  // twice is harmless
  (x * 2.0).sum().backward();
  CHECK(first == 1);
  CHECK(second == 1);
  CHECK(x.impl()->post_accumulate_grad_hooks.empty());
  {
    Tensor y = leaf({1.0});
    h1 = y.register_post_accumulate_grad_hook([](Tensor&) {});
  }
  h1.remove();  // after the tensor died: nothing to do
}

TEST_CASE("post_accumulate_grad_hook: only on leaves that require grad") {
  Tensor x = leaf({1.0});
  Tensor y = x * 2.0;
  CHECK(contains(error_of<ag::AutogradError>([&] { y.register_post_accumulate_grad_hook([](Tensor&) {}); }),
                 "register_post_accumulate_grad_hook"));
  Tensor c = Tensor::from_vector(std::vector<double>{1.0});
  CHECK(contains(error_of<ag::AutogradError>([&] { c.register_post_accumulate_grad_hook([](Tensor&) {}); }),
                 "register_post_accumulate_grad_hook"));
}

TEST_CASE("queue_callback: outside a backward pass it throws AutogradError") {
  CHECK(contains(error_of<ag::AutogradError>([] { ag::queue_callback([] {}); }), "no backward pass"));
}

TEST_CASE("queue_callback: queued from a hook, runs once after the pass's last node") {
  // b is final early (near the loss), a late (deep): a callback queued by b's hook runs
  // after a's hook and sees a's final .grad.
  Tensor a = leaf({0.3, -0.7}), b = leaf({2.0});
  bool a_done = false;
  int callbacks = 0, chained = 0;
  std::vector<double> a_grad_in_callback;
  auto ha = a.register_post_accumulate_grad_hook([&](Tensor&) { a_done = true; });
  auto hb = b.register_post_accumulate_grad_hook([&](Tensor&) {
    CHECK_FALSE(a_done);
    ag::queue_callback([&] {
      ++callbacks;
      CHECK(a_done);
      a_grad_in_callback = a.grad().to_vector<double>();
      ag::queue_callback([&] { ++chained; });  // a callback may queue another
    });
  });
  // loss = b * sum(sin(a)): d/da = b cos(a)
  (ag::sin(a).sum() * b).sum().backward();
  CHECK(callbacks == 1);
  CHECK(chained == 1);
  REQUIRE(a_grad_in_callback.size() == 2);
  CHECK(a_grad_in_callback[0] == doctest::Approx(2.0 * std::cos(0.3)).epsilon(1e-14));
  CHECK(a_grad_in_callback[1] == doctest::Approx(2.0 * std::cos(-0.7)).epsilon(1e-14));
  // Each pass has its own list: the next backward runs only what it queues.
  a_done = false;
  (ag::sin(a).sum() * b).sum().backward();
  CHECK(callbacks == 2);
  CHECK(chained == 2);
  // Outside the pass again.
  CHECK_THROWS_AS(ag::queue_callback([] {}), ag::AutogradError);
}

// ---- Tensor::register_hook, retain_grad ----

namespace {

std::vector<double> vec(const Tensor& t) { return t.to_vector<double>(); }

}  // namespace

TEST_CASE("register_hook: a non-leaf's hook sees its whole gradient once and its result flows on") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;  // y = (3, 6)
  int calls = 0;
  std::vector<double> seen;
  auto h = y.register_hook([&](const Tensor& g) {
    ++calls;
    seen = vec(g);
    return g * 2.0;
  });
  // loss = sum(y^2) + 2 sum(y): dloss/dy = 2y + 2 = (8, 14), doubled by the hook to
  // (16, 28); dx = 3 * that = (48, 84) (without the hook (24, 42)).
  ((y * y).sum() + y.sum() * 2.0).backward(Tensor(), /*retain_graph=*/true);
  CHECK(calls == 1);
  CHECK(seen == std::vector<double>{8.0, 14.0});
  CHECK(vec(x.grad()) == std::vector<double>{48.0, 84.0});
  CHECK_FALSE(y.grad().defined());  // not retained
  h.remove();
  x.zero_grad();
  ((y * y).sum() + y.sum() * 2.0).backward();
  CHECK(calls == 1);
  CHECK(vec(x.grad()) == std::vector<double>{24.0, 42.0});
}

TEST_CASE("register_hook: a leaf's hook runs on its whole gradient of the pass, before .grad") {
  Tensor x = leaf({0.5, -1.0});
  std::vector<std::vector<double>> seen;
  auto h = x.register_hook([&](const Tensor& g) {
    seen.push_back(vec(g));
    return g * 10.0;
  });
  // loss = sum(x^2) + sum(x): the hook sees 2x + 1 = (2, -1) once, .grad gets 10 times it.
  auto loss_of = [&] { return (x * x).sum() + x.sum(); };
  loss_of().backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<double>{2.0, -1.0});
  CHECK(vec(x.grad()) == std::vector<double>{20.0, -10.0});
  // A second backward: the hook sees this pass's gradient only, .grad accumulates.
  loss_of().backward();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == std::vector<double>{2.0, -1.0});
  CHECK(vec(x.grad()) == std::vector<double>{40.0, -20.0});
  // Backward from the leaf itself.
  x.zero_grad();
  x.backward(Tensor::from_vector(std::vector<double>{1.0, 3.0}));
  CHECK(vec(x.grad()) == std::vector<double>{10.0, 30.0});
  h.remove();
}

TEST_CASE("register_hook: hooks run in registration order, each on the previous result; removal") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 1.0;
  std::vector<std::string> order;
  std::vector<double> second_saw, third_saw;
  auto h1 = y.register_hook([&](const Tensor& g) {
    order.push_back("1");
    return g + 1.0;
  });
  auto h2 = y.register_hook([&](const Tensor& g) {
    order.push_back("2");
    second_saw = vec(g);
    return g * 2.0;
  });
  auto h3 = y.register_hook([&](const Tensor& g) {  // returns void: keeps the gradient
    order.push_back("3");
    third_saw = vec(g);
  });
  auto h4 = y.register_hook([&](const Tensor&) { return Tensor(); });  // undefined: keeps it
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  CHECK(order == std::vector<std::string>{"1", "2", "3"});
  CHECK(second_saw == std::vector<double>{2.0, 2.0});  // 1 + 1
  CHECK(third_saw == std::vector<double>{4.0, 4.0});   // (1 + 1) * 2
  CHECK(vec(x.grad()) == std::vector<double>{4.0, 4.0});
  h2.remove();
  ag::RemovableHandle copy = h1;
  copy.remove();
  h1.remove();  // already removed through the copy: harmless
  order.clear();
  x.zero_grad();
  y.sum().backward();
  CHECK(order == std::vector<std::string>{"3"});
  CHECK(vec(x.grad()) == std::vector<double>{1.0, 1.0});
  CHECK(y.grad_fn()->tensor_pre_hooks.size() == 2);  // h3, h4
}

TEST_CASE("register_hook, retain_grad: refused on a tensor that does not require grad; bad replacement") {
  Tensor c = Tensor::from_vector(std::vector<double>{1.0});
  CHECK(contains(error_of<ag::AutogradError>([&] { c.register_hook([](const Tensor& g) { return g; }); }),
                 "cannot register a hook on a tensor that doesn't require gradient"));
  CHECK(contains(error_of<ag::AutogradError>([&] { c.retain_grad(); }),
                 "can't retain_grad on Tensor that has requires_grad=False"));
  Tensor x = leaf({1.0, 2.0});
  auto h = x.register_hook([](const Tensor& g) { return g.sum(); });
  CHECK(contains(error_of<ag::ShapeError>([&] { (x * 2.0).sum().backward(); }), "changed the size"));
}

TEST_CASE("retain_grad: a non-leaf's .grad after backward, accumulated, after its hooks") {
  Tensor x = leaf({1.0, -2.0});
  Tensor y = x * 2.0;  // (2, -4)
  CHECK_FALSE(y.retains_grad());
  y.retain_grad();
  CHECK(y.retains_grad());
  x.retain_grad();  // a leaf: no-op
  CHECK_FALSE(x.retains_grad());
  auto loss_of = [&] { return (y * y).sum(); };  // dloss/dy = 2y = (4, -8)
  loss_of().backward(Tensor(), /*retain_graph=*/true);
  CHECK(vec(y.grad()) == std::vector<double>{4.0, -8.0});
  loss_of().backward(Tensor(), /*retain_graph=*/true);  // accumulates, as PyTorch
  CHECK(vec(y.grad()) == std::vector<double>{8.0, -16.0});
  // A hook registered after retain_grad still runs before it (PyTorch 2.x's order).
  y.zero_grad();
  auto h = y.register_hook([](const Tensor& g) { return g * 10.0; });
  loss_of().backward();
  CHECK(vec(y.grad()) == std::vector<double>{40.0, -80.0});
  // retain_grad follows the tensor through an in-place op (its gradient w.r.t. the new value).
  Tensor z = x * 2.0;
  z.retain_grad();
  z.mul_(3.0);
  (z * z).sum().backward();  // z = 6x = (6, -12): dloss/dz = 2z = (12, -24)
  CHECK(vec(z.grad()) == std::vector<double>{12.0, -24.0});
}

TEST_CASE("register_hook, retain_grad with ag::grad: hooks of inputs run before the result is returned") {
  Tensor x = leaf({1.0, 2.0});
  int leaf_calls = 0;
  auto hx = x.register_hook([&](const Tensor& g) {
    ++leaf_calls;
    return g * 10.0;
  });
  Tensor y = x * 3.0;
  y.retain_grad();
  auto hy = y.register_hook([](const Tensor& g) { return g + 1.0; });
  // loss = sum(y^2): dy = 2y = (6, 12), hooked (7, 13); dx = 3 (7, 13) = (21, 39), hooked x10.
  auto gx = ag::grad({(y * y).sum()}, {x}, {}, /*retain_graph=*/true);
  CHECK(leaf_calls == 1);
  CHECK(vec(gx[0]) == std::vector<double>{210.0, 390.0});
  CHECK_FALSE(x.grad().defined());                         // ag::grad leaves .grad alone
  CHECK(vec(y.grad()) == std::vector<double>{7.0, 13.0});  // ... but retains, as PyTorch
  // A non-leaf input: its hooks run before it is captured.
  auto gy = ag::grad({(y * y).sum()}, {y});
  CHECK(vec(gy[0]) == std::vector<double>{7.0, 13.0});
  CHECK(leaf_calls == 1);  // x is not an input: its hook does not run
}

TEST_CASE("register_hook under create_graph: the hook's ops are recorded, so gradients of gradients see them") {
  // y = x^2, hook: g -> g * x^2. loss = sum(y): dx = x^2 * 2x = 2x^3, d(dx)/dx = 6x^2.
  // (A hook that captured y itself would make a cycle y -> node -> hook -> y.)
  Tensor x = leaf({1.5});
  Tensor y = x * x;
  auto h = y.register_hook([x](const Tensor& g) { return g * (x * x); });
  auto gx = ag::grad({y.sum()}, {x}, {}, {}, /*create_graph=*/true);
  CHECK(gx[0].item<double>() == doctest::Approx(6.75).epsilon(1e-14));
  auto ggx = ag::grad({gx[0].sum()}, {x});
  CHECK(ggx[0].item<double>() == doctest::Approx(13.5).epsilon(1e-14));
  // A leaf's hook too: loss = sum(x^3), hook g -> g * x: dx = 3x^3, d(dx)/dx = 9x^2.
  Tensor w = leaf({2.0});
  auto hw = w.register_hook([w](const Tensor& g) { return g * w; });  // a cycle until removed
  (w * w * w).sum().backward(Tensor(), {}, /*create_graph=*/true);
  Tensor gw = w.grad();
  CHECK(gw.item<double>() == doctest::Approx(24.0).epsilon(1e-14));
  hw.remove();
  auto ggw = ag::grad({gw.sum()}, {w});
  CHECK(ggw[0].item<double>() == doctest::Approx(36.0).epsilon(1e-14));
  w.zero_grad();  // .grad made under create_graph holds a graph that holds w
}
