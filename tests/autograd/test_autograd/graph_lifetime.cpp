// test_autograd, part: a 100,000-op chain on a small stack (backward and destruction
// without deep recursion) and graphs that die with their last tensor.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../autograd_test_util.h"

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

using ag::DType;
using ag::Shape;
using ag::Tensor;

using test_util::contains;
using test_util::error_of;
using namespace autograd_test_util;

namespace {

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

}  // namespace

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
