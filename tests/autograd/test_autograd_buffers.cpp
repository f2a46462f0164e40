// The engine's gradient buffers: a gradient that a closure passes straight through
// (add, views) is adopted by the next node or leaf instead of copied, but only when no
// one else holds it. These tests check the aliasing that must never happen: a leaf's
// .grad sharing storage with the caller's gradient, with another leaf's .grad or with
// a tensor a closure keeps, so that an in-place update of .grad (an optimizer step)
// would change something else.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "tensor_checks.h"

using ag::Tensor;
using tc::diff;

namespace {

Tensor leaf(const std::vector<float>& v) {
  Tensor t = Tensor::from_vector(v);
  t.requires_grad_();
  return t;
}

// y = x, with a backward that returns the tensor `k` it keeps (not the incoming g).
Tensor returns_kept(const Tensor& x, const Tensor& k) {
  Tensor out = x.detach().clone();
  return ag::record("returns_kept", out, {x}, [k](const Tensor&, ag::NeedsGrad) { return ag::Grads{k}; });
}

}  // namespace

TEST_CASE("a gradient passed through a chain of adds reaches the leaf without aliasing the caller's") {
  Tensor a = leaf({1, 2, 3});
  Tensor c = Tensor::from_vector(std::vector<float>{10, 20, 30});  // no grad
  Tensor x = a;
  for (int i = 0; i < 50; ++i) x = x + c;
  Tensor g = Tensor::from_vector(std::vector<float>{0.5f, -1.f, 2.f});
  x.backward(g);
  // d(a + 50 c)/da = 1: a.grad is g itself, value for value.
  CHECK(diff(a.grad(), {0.5, -1, 2}) == "");
  CHECK_FALSE(a.grad().shares_storage(g));
  g.fill_(7.0);  // the caller reuses its gradient buffer
  CHECK(diff(a.grad(), {0.5, -1, 2}) == "");
}

TEST_CASE("add with two leaves gives each its own .grad buffer") {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  (a + b).backward(Tensor::from_vector(std::vector<float>{1, 1}));
  // d(a + b) = 1 for every element of both.
  CHECK(diff(a.grad(), {1, 1}) == "");
  CHECK(diff(b.grad(), {1, 1}) == "");
  CHECK_FALSE(a.grad().shares_storage(b.grad()));
  {
    ag::NoGradGuard no_grad;
    a.grad().add_(5.0);  // as an optimizer would write it
  }
  CHECK(diff(b.grad(), {1, 1}) == "");
}

TEST_CASE("a gradient a closure keeps is copied into .grad, not adopted") {
  Tensor x = leaf({1, 2});
  Tensor k = Tensor::from_vector(std::vector<float>{3, 4});
  returns_kept(x, k).backward(Tensor::from_vector(std::vector<float>{1, 1}));
  CHECK(diff(x.grad(), {3, 4}) == "");
  CHECK_FALSE(x.grad().shares_storage(k));
  {
    ag::NoGradGuard no_grad;
    x.grad().mul_(0.0);
  }
  CHECK(diff(k, {3, 4}) == "");
}

TEST_CASE("a view's gradient and a second backward add into the same .grad in place") {
  Tensor a = leaf({1, 2, 3, 4});
  Tensor y = a.reshape({2, 2}).transpose(0, 1);
  Tensor g = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  y.backward(g, /*retain_graph=*/true);
  // transpose back: g^T flattened = [1, 3, 2, 4].
  CHECK(diff(a.grad(), {1, 3, 2, 4}) == "");
  CHECK_FALSE(a.grad().shares_storage(g));
  Tensor first = a.grad();
  y.backward(g);
  CHECK(diff(a.grad(), {2, 6, 4, 8}) == "");
  CHECK(diff(first, {2, 6, 4, 8}) == "");  // accumulated in place: references see the sum
  CHECK(diff(g, {1, 2, 3, 4}) == "");
}

TEST_CASE("ag::grad with a retained graph gives equal, independent results twice") {
  Tensor a = leaf({1, 2});
  Tensor c = Tensor::from_vector(std::vector<float>{1, 1});
  Tensor y = ((a + c) + c).sum();
  auto g1 = ag::grad({y}, {a}, {}, /*retain_graph=*/true);
  auto g2 = ag::grad({y}, {a});
  CHECK(diff(g1[0], {1, 1}) == "");
  CHECK(diff(g2[0], {1, 1}) == "");
  CHECK_FALSE(g1[0].shares_storage(g2[0]));
}
