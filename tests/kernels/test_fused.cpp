// Fused primitives against the composites they replace (float64, values and
// gradients): layer_norm and dropout. (Fused attention: test_flash_attention.cpp.)
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>

using namespace ag;

using test_util::max_abs_diff;

namespace {

// The layer norm formula written with primitives (biased variance, as PyTorch).
Tensor layer_norm_composite(const Tensor& x, int64_t n_dims, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - n_dims; i < x.dim(); ++i) dims.push_back(i);
  Tensor xc = x - mean(x, dims, true);
  Tensor y = xc * rsqrt(mean(square(xc), dims, true) + eps);
  if (w.defined()) y = y * w;
  if (b.defined()) y = y + b;
  return y;
}

}  // namespace

TEST_CASE("fused layer_norm equals the composite formula, values and gradients") {
  struct Case {
    Shape x, norm;
    bool weight, bias, transposed;
  };
  const Case cases[] = {{{5, 8}, {8}, true, true, false},
                        {{2, 3, 6}, {6}, false, false, false},
                        {{2, 3, 6}, {3, 6}, true, true, false},
                        {{4, 5}, {4}, true, false, true},
                        {{3, 7}, {7}, false, true, false}};
  for (const auto& c : cases) {
    INFO("x " << c.x << " normalized " << c.norm);
    Generator g(3);
    Tensor x = (randn(c.x, DType::f64, &g) * 3.0 + 1.0).detach().requires_grad_();
    Tensor xin = c.transposed ? x.t() : x;  // a non-contiguous input
    Tensor w = c.weight ? randn(c.norm, DType::f64, &g).requires_grad_() : Tensor{};
    Tensor b = c.bias ? randn(c.norm, DType::f64, &g).requires_grad_() : Tensor{};
    Tensor up = randn(xin.shape(), DType::f64, &g);
    std::vector<Tensor> wrt{x};
    if (w.defined()) wrt.push_back(w);
    if (b.defined()) wrt.push_back(b);
    Tensor y1 = layer_norm(xin, c.norm, w, b, 1e-5);
    Tensor y2 = layer_norm_composite(xin, c.norm.size(), w, b, 1e-5);
    CHECK(y1.grad_fn()->name == std::string("layer_norm"));
    CHECK(max_abs_diff(y1, y2) < 1e-13);
    auto g1 = grad({sum(y1 * up)}, wrt, {}, /*retain_graph=*/true), g2 = grad({sum(y2 * up)}, wrt);
    for (std::size_t i = 0; i < wrt.size(); ++i) CHECK(max_abs_diff(g1[i], g2[i]) < 1e-12);
  }
}

TEST_CASE("fused dropout: kept fraction, scale, a repeatable mask and its gradient") {
  Generator g1(9), g2(9);
  Tensor x = ones({200, 500}).requires_grad_();
  Tensor y = dropout(x, 0.3, true, &g1);
  Tensor y_again = dropout(x.detach(), 0.3, true, &g2);
  CHECK(max_abs_diff(y, y_again) == 0.0);  // same seed, same mask
  auto v = y.to_vector<float>();
  int64_t kept = 0, other = 0;
  for (float e : v) {
    bool zero = e == 0.0f, scaled = std::abs(e - 1.0f / 0.7f) < 1e-6f;
    other += !(zero || scaled);
    kept += scaled;
  }
  CHECK(other == 0);  // every element is dropped (0) or kept and scaled by 1/(1-p)
  CHECK(std::abs(static_cast<double>(kept) / static_cast<double>(v.size()) - 0.7) < 0.01);
  sum(y * 2.0).backward();
  CHECK(max_abs_diff(x.grad(), y.detach() * 2.0) < 1e-6);  // dx = g * mask, and y = x * mask with x = 1
  CHECK(max_abs_diff(dropout(x, 0.3, false), x) == 0.0);   // eval: identity
}

TEST_CASE("dropout saves no mask: backward draws it again, for any gradient layout and twice") {
  Generator gen(4);
  Tensor x = ones({256, 256}).requires_grad_();
  const std::size_t before = memory_allocated();
  Tensor y = dropout(x, 0.25, true, &gen);                          // with x = 1, y is the mask itself
  CHECK(memory_allocated() - before == 256 * 256 * sizeof(float));  // y only: no saved mask
  Generator data(5);
  Tensor g = randn({256, 256}, DType::f32, &data).t();  // a transposed (non-contiguous) gradient
  y.backward(g);
  CHECK(max_abs_diff(x.grad(), g.contiguous() * y.detach()) == 0.0);
  // Double backward: d/dw of sum(d(sum(y * w))/dx) is the mask again.
  Tensor w = randn({256, 256}, DType::f32, &data).requires_grad_();
  Tensor x2 = ones({256, 256}).requires_grad_();
  Generator again(4);
  Tensor y2 = dropout(x2, 0.25, true, &again);
  CHECK(max_abs_diff(y2, y) == 0.0);
  Tensor gx = grad({sum(y2 * w)}, {x2}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  sum(gx).backward();
  CHECK(max_abs_diff(w.grad(), y.detach()) == 0.0);
}

TEST_CASE("large kernels give the same bits on 1 and 2 threads") {
  Generator g(4);
  Tensor a = randn({300, 1000}, DType::f32, &g), b = randn({300, 1000}, DType::f32, &g);
  Tensor w = randn({1000}, DType::f32, &g), bias = randn({1000}, DType::f32, &g);
  auto run = [&] {
    return std::vector<Tensor>{a * b + a, exp(a), softmax(a, -1), log_softmax(a, 0), layer_norm(a, {1000}, w, bias)};
  };
  const int before = get_num_threads();
  set_num_threads(1);
  auto one = run();
  set_num_threads(2);
  auto two = run();
  set_num_threads(before);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(max_abs_diff(one[i], two[i]) == 0.0);
}
