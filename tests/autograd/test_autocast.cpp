// ag::autocast, PyTorch's CPU autocast: the lower-precision list (matmul, linear, sdpa)
// computes in the autocast dtype, the f32 list (softmax, norms, losses, reductions) in
// f32, f64 is never cast, backward never autocasts, f32 parameters get f32 gradients
// (master weights), checkpoint recomputes in the forward's dtypes, and a GPT-style block
// trains under bf16 autocast within bf16 tolerance of f32.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "tensor_checks.h"

using namespace ag;

TEST_CASE("autocast: the guard nests, restores, and takes bf16 or f16 only") {
  CHECK_FALSE(is_autocast_enabled());
  {
    autocast a(DType::bf16);
    CHECK(is_autocast_enabled());
    CHECK(get_autocast_dtype() == DType::bf16);
    {
      autocast b(DType::f16);
      CHECK(get_autocast_dtype() == DType::f16);
      autocast off(DType::bf16, false);
      CHECK_FALSE(is_autocast_enabled());
    }
    CHECK(is_autocast_enabled());
    CHECK(get_autocast_dtype() == DType::bf16);
  }
  CHECK_FALSE(is_autocast_enabled());
  CHECK_THROWS_WITH_AS(autocast{DType::f32}, doctest::Contains("autocast: dtype must be bf16 or f16"), ValueError);
}

TEST_CASE("autocast: op lists, f64 untouched, f32 master gradients") {
  Generator gen(1);
  Tensor x = randn({4, 8}, DType::f32, &gen);
  Tensor w = randn({3, 8}, DType::f32, &gen).requires_grad_(), b = zeros({3}).requires_grad_();
  Tensor y, p, loss;
  {
    autocast guard(DType::bf16);
    y = linear(x, w, b);  // lower-precision list
    p = softmax(y, -1);   // f32 list
    loss = cross_entropy(y, Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0}));
    CHECK(matmul(x, x.t()).dtype() == DType::bf16);
    CHECK(matmul(x.to(DType::f64), x.to(DType::f64).t()).dtype() == DType::f64);  // f64 never cast
    CHECK(sum(y).dtype() == DType::f32);
    CHECK(layer_norm(y, {3}).dtype() == DType::f32);
    CHECK(exp(y).dtype() == DType::bf16);  // in neither list: the input's dtype
  }
  CHECK(y.dtype() == DType::bf16);
  CHECK(p.dtype() == DType::f32);
  CHECK(loss.dtype() == DType::f32);
  // The bf16 result equals the f32 linear on bf16-rounded operands, rounded once.
  Tensor want = linear(x.to(DType::bf16).to(DType::f32), w.detach().to(DType::bf16).to(DType::f32),
                       b.detach().to(DType::bf16).to(DType::f32));
  CHECK(tc::diff(y.to(DType::f32), want.to(DType::bf16).to(DType::f32)) == "");
  loss.backward();
  CHECK(w.grad().dtype() == DType::f32);  // master weights: f32 gradients through to()
  CHECK(b.grad().dtype() == DType::f32);
  // Against the f32 step: within bf16's precision.
  Tensor w32 = w.detach().clone().requires_grad_(), b32 = b.detach().clone().requires_grad_();
  cross_entropy(linear(x, w32, b32), Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0})).backward();
  CHECK(allclose(w.grad(), w32.grad(), 0.05, 0.02));
}

TEST_CASE("autocast: a tensor cast again shares the live cast; gradients sum in f32") {
  Generator gen(2);
  Tensor x = randn({256, 64}, DType::f32, &gen);
  {
    autocast guard(DType::bf16);
    Tensor a = detail::autocast_lower(x), b = detail::autocast_lower(x);
    CHECK(a.storage() == b.storage());  // one bf16 copy, not two
    CHECK(tc::diff(a.to(DType::f32), x.to(DType::bf16).to(DType::f32)) == "");
    x.add_(1.0);  // a write to the source: the next cast is fresh
    Tensor c = detail::autocast_lower(x);
    CHECK(c.storage() != a.storage());
    CHECK(tc::diff(c.to(DType::f32), x.to(DType::bf16).to(DType::f32)) == "");
    c.mul_(2.0);  // a write to the cast: not handed out again
    Tensor d = detail::autocast_lower(x);
    CHECK(d.storage() != c.storage());
    CHECK(tc::diff(d.to(DType::f32), x.to(DType::bf16).to(DType::f32)) == "");
    autocast f16(DType::f16);  // another dtype: its own cast
    CHECK(detail::autocast_lower(x).dtype() == DType::f16);
  }
  CHECK(detail::autocast_lower(x).storage() == x.storage());  // outside autocast: x itself

  // Two products of one input keep one bf16 copy of it for backward: the second product
  // adds its weight's cast (1 KiB) and its output (4 KiB), not x's 32 KiB again.
  Tensor w1 = randn({64, 8}, DType::f32, &gen).requires_grad_(), w2 = randn({64, 8}, DType::f32, &gen).requires_grad_();
  Tensor xg = x.detach().requires_grad_();
  {
    autocast guard(DType::bf16);
    Tensor y1 = matmul(xg, w1);
    const std::size_t before = memory_allocated();
    Tensor y2 = matmul(xg, w2);
    CHECK(memory_allocated() - before < 32 * 1024);
  }

  // Each consumer's bf16 gradient reaches the f32 source as its own f32 term: 1 + 2^-9 is
  // exact in f32, while a sum in bf16 (8 significant bits) would round it to 1.
  Tensor s = Tensor::from_vector(std::vector<float>{3.0f}).reshape({1, 1}).requires_grad_();
  Tensor one = Tensor::from_vector(std::vector<float>{1.0f}).reshape({1, 1});
  Tensor tiny = Tensor::from_vector(std::vector<float>{0x1p-9f}).reshape({1, 1});
  Tensor loss;
  {
    autocast guard(DType::bf16);
    loss = sum(matmul(s, one)) + sum(matmul(s, tiny));
  }
  loss.backward();
  CHECK(s.grad().dtype() == DType::f32);
  CHECK(s.grad().item<float>() == 1.0f + 0x1p-9f);
}

TEST_CASE("autocast: backward inside the scope does not autocast; checkpoint recomputes in bf16") {
  Generator gen(2);
  Tensor x = randn({2, 5, 8}, DType::f32, &gen);
  nn::Linear lin(8, 8);
  auto block = [lin](const Tensor& h) { return gelu(lin(h)); };
  Tensor g_plain, g_ckpt;
  for (bool ckpt : {false, true}) {
    lin->zero_grad();
    autocast guard(DType::bf16);
    Tensor y = ckpt ? checkpoint(block, x) : block(x);
    CHECK(y.dtype() == DType::bf16);
    sum(y).backward();  // inside the scope: the engine turns autocast off
    (ckpt ? g_ckpt : g_plain) = lin->weight.grad().clone();
  }
  CHECK(g_plain.dtype() == DType::f32);
  CHECK(tc::diff(g_ckpt, g_plain) == "");  // the recomputation ran in bf16, as the forward
}
