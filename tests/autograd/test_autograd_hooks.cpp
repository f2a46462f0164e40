// The engine's hooks for DistributedDataParallel: Tensor::register_post_accumulate_grad_hook
// (runs once per backward per leaf, after the leaf's last gradient of that pass was added
// into .grad) and ag::queue_callback (runs after the pass's last node).
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
