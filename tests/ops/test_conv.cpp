// Convolution and its columns against independent definitions: a direct loop over the
// textbook sum, the adjoint identities <conv(x), y> = <x, conv_transpose(y)> and
// <im2col(x), c> = <x, col2im(c)>, the 16-bit and autocast paths, and every typed error
// of bad arguments. (PyTorch-made cases: tests/ops/test_cnn_parity.cpp.)
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/conv.h"
#include "kernels/matmul_dnnl.h"
#include "tensor_checks.h"

using namespace ag;
using tc::diff;

namespace {

// out[n, o, i, j] = b[o] + sum_{c in o's group, a, e} x[n, c, i s0 - p0 + a d0, j s1 - p1 + e d1] w[o, c', a, e],
// straight from the definition (zero outside the input).
Tensor naive_conv2d(const Tensor& x, const Tensor& w, const Tensor& b, std::vector<int64_t> s, std::vector<int64_t> p,
                    std::vector<int64_t> d, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), Cg = w.size(1), kh = w.size(2), kw = w.size(3), Og = O / groups;
  const int64_t oH = (H + 2 * p[0] - d[0] * (kh - 1) - 1) / s[0] + 1,
                oW = (W + 2 * p[1] - d[1] * (kw - 1) - 1) / s[1] + 1;
  auto xv = x.contiguous().to_vector<double>(), wv = w.contiguous().to_vector<double>();
  std::vector<double> out(size_t(N * O * oH * oW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < oH; ++i)
        for (int64_t j = 0; j < oW; ++j) {
          double acc = b.defined() ? b.to_vector<double>()[size_t(o)] : 0.0;
          for (int64_t cg = 0; cg < Cg; ++cg) {
            const int64_t c = (o / Og) * Cg + cg;
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t ih = i * s[0] - p[0] + a * d[0], iw = j * s[1] - p[1] + e * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += xv[size_t(((n * C + c) * H + ih) * W + iw)] * wv[size_t(((o * Cg + cg) * kh + a) * kw + e)];
              }
          }
          out[size_t(((n * O + o) * oH + i) * oW + j)] = acc;
        }
  return Tensor::from_vector(out, {N, O, oH, oW});
}

double dot(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

struct Case {
  Shape x, w;
  std::vector<int64_t> s, p, d;
  int64_t groups;
};

const std::vector<Case> kCases = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
    {{1, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1, 2}, 2},
    {{2, 2, 8, 8}, {4, 1, 3, 3}, {2, 2}, {1, 1}, {2, 2}, 2},  // depthwise, multiplier 2
    {{1, 3, 5, 9}, {2, 3, 1, 4}, {1, 3}, {0, 1}, {1, 1}, 1},
};

}  // namespace

TEST_CASE("conv2d equals the direct sum over strides, paddings, dilations and groups (f64 and f32)") {
  Generator gen(7);
  for (const Case& c : kCases) {
    CAPTURE(c.x);
    CAPTURE(c.w);
    Tensor x = randn(c.x, DType::f64, &gen), w = randn(c.w, DType::f64, &gen), b = randn({c.w[0]}, DType::f64, &gen);
    Tensor want = naive_conv2d(x, w, b, c.s, c.p, c.d, c.groups);
    CHECK(diff(conv2d(x, w, b, c.s, c.p, c.d, c.groups), want, 1e-12) == "");
    CHECK(diff(conv2d(x.to(DType::f32), w.to(DType::f32), b.to(DType::f32), c.s, c.p, c.d, c.groups).to(DType::f64),
               want, 1e-4) == "");
    // conv1d is conv2d of height 1.
    Tensor x1 = x.select(2, 0), w1 = w.select(2, 0);
    Tensor want1 = naive_conv2d(x1.unsqueeze(2), w1.unsqueeze(2), b, {1, c.s[1]}, {0, c.p[1]}, {1, c.d[1]}, c.groups);
    CHECK(diff(conv1d(x1, w1, b, {c.s[1]}, {c.p[1]}, {c.d[1]}, c.groups), want1.squeeze(2), 1e-12) == "");
  }
}

TEST_CASE("conv_transpose2d is the adjoint of conv2d, and im2col of col2im") {
  Generator gen(11);
  for (const Case& c : kCases) {
    CAPTURE(c.x);
    Tensor x = randn(c.x, DType::f64, &gen), w = randn(c.w, DType::f64, &gen);
    Tensor y = conv2d(x, w, {}, c.s, c.p, c.d, c.groups);
    Tensor r = randn(y.shape(), DType::f64, &gen);
    // The transposed conv maps y's size back to one of the sizes conv maps to y's: pick
    // output_padding so that it is x's.
    std::vector<int64_t> op(2);
    for (int d = 0; d < 2; ++d)
      op[size_t(d)] = c.x[size_t(2 + d)] - ((y.size(2 + d) - 1) * c.s[size_t(d)] - 2 * c.p[size_t(d)] +
                                            c.d[size_t(d)] * (c.w[size_t(2 + d)] - 1) + 1);
    Tensor xt = conv_transpose2d(r, w, {}, c.s, c.p, op, c.groups, c.d);
    REQUIRE(xt.shape() == x.shape());
    CHECK(std::abs(dot(y, r) - dot(x, xt)) < 1e-10 * (1 + std::abs(dot(y, r))));
  }
  Tensor x = randn({2, 3, 6, 7}, DType::f64);
  Tensor cols = im2col(x, {3, 2}, {2, 1}, {1, 1}, {2, 3});
  Tensor c = randn(cols.shape(), DType::f64);
  CHECK(std::abs(dot(cols, c) - dot(x, col2im(c, {6, 7}, {3, 2}, {2, 1}, {1, 1}, {2, 3}))) < 1e-10);
  CHECK(diff(nn::functional::unfold(x, {3, 2}, {2, 1}, {1, 1}, {2, 3}), cols) == "");
}

TEST_CASE("conv2d padding \"same\" keeps the size and puts an odd extra element at the end, as PyTorch") {
  Tensor x = randn({1, 2, 5, 6}, DType::f64), w = randn({3, 2, 2, 4}, DType::f64);
  Tensor y = conv2d(x, w, {}, {1}, "same", {2});
  CHECK(y.shape() == Shape{1, 3, 5, 6});
  // total padding d (k - 1) = 2 and 6: (1, 1) rows and (3, 3) columns: symmetric here.
  CHECK(diff(y, naive_conv2d(x, w, {}, {1, 1}, {1, 3}, {2, 2}, 1), 1e-12) == "");
  // k = 2, d = 1: total 1 -> 0 before, 1 after (the input padded at its end).
  Tensor w2 = randn({3, 2, 2, 2}, DType::f64);
  Tensor y2 = conv2d(x, w2, {}, {1}, "same");
  Tensor padded = pad(x, {0, 1, 0, 1});
  CHECK(diff(y2, naive_conv2d(padded, w2, {}, {1, 1}, {0, 0}, {1, 1}, 1), 1e-12) == "");
  CHECK(diff(conv2d(x, w2, {}, {1}, "valid"), conv2d(x, w2), 0) == "");
}

TEST_CASE("conv2d in bf16 and under autocast: computed in bf16, within bf16 rounding of f32") {
  Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3}), b = randn({4});
  Tensor ref = conv2d(x, w, b, {1}, {1});
  Tensor h = conv2d(x.to(DType::bf16), w.to(DType::bf16), b.to(DType::bf16), {1}, {1});
  CHECK(h.dtype() == DType::bf16);
  // 27 products of bf16-rounded inputs (each input off by <= 2^-9 relative), summed in f32.
  CHECK(diff(h.to(DType::f32), ref, 0.15) == "");
  {
    autocast guard(DType::bf16);
    Tensor a = conv2d(x, w, b, {1}, {1});
    CHECK(a.dtype() == DType::bf16);
    CHECK(diff(a.to(DType::f32), h.to(DType::f32)) == "");
  }
  Tensor xr = x.detach().requires_grad_(), wr = w.detach().requires_grad_();
  {
    autocast guard(DType::bf16);
    conv2d(xr, wr, {}, {1}, {1}).to(DType::f32).sum().backward();
  }
  CHECK(xr.grad().dtype() == DType::f32);  // the master weights keep f32 gradients
  CHECK(wr.grad().dtype() == DType::f32);
}

TEST_CASE("conv errors name the op and the shapes") {
  Tensor x = randn({1, 4, 5, 5}), w = randn({6, 2, 3, 3});
  CHECK_THROWS_MSG(conv2d(x, randn({6, 4, 7, 7})), ShapeError, "larger than the padded input");
  CHECK_THROWS_MSG(conv2d(x, randn({6, 4, 7, 7})), ShapeError, "[1, 4, 5, 5]");
  CHECK_THROWS_MSG(conv2d(x, randn({6, 1, 3, 3}), {}, {1}, {0}, {1}, 3), ValueError, "groups 3 must divide");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {1}, {0}, {1}, 1), ShapeError, "times groups 1 must equal the input channels 4");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {0}, {0}, {1}, 2), ValueError, "conv2d: stride must be positive");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {1}, {0}, {0}, 2), ValueError, "conv2d: dilation must be positive");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {1}, {-1}, {1}, 2), ValueError, "conv2d: padding must be non-negative");
  CHECK_THROWS_MSG(conv2d(x, randn({6, 4, 3})), ShapeError, "expected a 4-D weight");
  CHECK_THROWS_MSG(conv2d(randn({4, 5}), w), ShapeError, "expected a 3-D (unbatched) or 4-D (batched) input");
  CHECK_THROWS_MSG(conv2d(x, w, randn({5}), {1}, {0}, {1}, 2), ShapeError, "bias shape [5]");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {2}, "same", {1}, 2), ValueError, "not supported for strided");
  CHECK_THROWS_MSG(conv2d(x, w, {}, {1, 1, 1}, {0}, {1}, 2), ValueError, "stride must have 1 or 2 values");
  CHECK_THROWS_MSG(conv2d(x, w.to(DType::f64), {}, {1}, {0}, {1}, 2), DTypeError, "weight dtype f64");
  CHECK_THROWS_AS(ConvPadding("full"), ValueError);
  CHECK_THROWS_MSG(conv_transpose2d(x, randn({4, 2, 3, 3}), {}, {2}, {0}, {2}), ValueError,
                   "output_padding [2, 2] must be smaller than either stride [2, 2]");
  CHECK_THROWS_MSG(conv_transpose2d(x, randn({3, 2, 3, 3})), ShapeError, "weight dim 0 (3)");
  CHECK_THROWS_MSG(col2im(randn({1, 8, 5}), {3, 4}, {2}), ShapeError, "must equal the 6 kernel positions");
  CHECK_THROWS_MSG(im2col(randn({1, 1, 2, 2}), {3}), ShapeError, "im2col: the dilated kernel");
}

TEST_CASE("conv2d through oneDNN equals the columns in f32: values, gradients, and double backward") {
  if (!kernels::have_dnnl()) {
    MESSAGE("built without oneDNN: only the columns run");
    return;
  }
  Generator gen(5);
  for (const Case& c : kCases) {
    CAPTURE(c.x);
    Tensor x0 = randn(c.x, DType::f32, &gen), w0 = randn(c.w, DType::f32, &gen), b0 = randn({c.w[0]}, DType::f32, &gen);
    Tensor u = randn(naive_conv2d(x0.to(DType::f64), w0.to(DType::f64), {}, c.s, c.p, c.d, c.groups).shape(),
                     DType::f32, &gen);
    // y, dx, dw, db, and d(sum(dx^2))/dw (a gradient penalty: the fused op's Composite).
    auto run = [&](kernels::ConvEngine e) {
      const kernels::ConvEngine saved = kernels::set_conv_engine(e);
      Tensor x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_(), b = b0.detach().requires_grad_();
      Tensor y = conv2d(x, w, b, c.s, c.p, c.d, c.groups);
      // The fused op is one node named after the op; the columns end in the bias add.
      CHECK((std::string(y.grad_fn()->name) == "conv2d") == (e == kernels::ConvEngine::dnnl));
      auto g = ag::grad({(y * u).sum()}, {x, w, b}, {}, true, true);
      Tensor pen = ag::grad({(g[0] * g[0]).sum()}, {w})[0];
      kernels::set_conv_engine(saved);
      return std::vector<Tensor>{y, g[0], g[1], g[2], pen};
    };
    auto dnnl = run(kernels::ConvEngine::dnnl), cols = run(kernels::ConvEngine::im2col);
    for (std::size_t i = 0; i < dnnl.size(); ++i) {
      CAPTURE(i);
      // f32 sums of up to a few hundred products in different orders
      const double scale = 1 + cols[i].abs().max().item<double>();
      CHECK(diff(dnnl[i].detach(), cols[i].detach(), 2e-5 * scale) == "");
    }
  }
}

TEST_CASE(
    "conv2d special values: a NaN or inf input reaches exactly the outputs whose window covers it, in both engines") {
  for (kernels::ConvEngine e : {kernels::ConvEngine::im2col, kernels::ConvEngine::dnnl}) {
    const kernels::ConvEngine saved = kernels::set_conv_engine(e);
    for (double special : {std::nan(""), std::numeric_limits<double>::infinity()}) {
      for (DType dt : {DType::f32, DType::f64}) {
        CAPTURE(special);
        // 1 x 1 x 6 x 7 input, the special value at (2, 3); 3x3 kernel, padding 1, stride 2.
        Tensor x = randn({1, 1, 6, 7}, dt);
        x.index_put_({0, 0, 2, 3}, special);
        Tensor w = uniform({1, 1, 3, 3}, 0.5, 1.0, dt);  // positive: inf stays inf
        Tensor y = conv2d(x, w, {}, {2}, {1});
        auto v = y.to_vector<double>();
        const int64_t oW = y.size(3);
        for (int64_t i = 0; i < y.size(2); ++i)
          for (int64_t j = 0; j < oW; ++j) {
            // window rows 2i - 1 .. 2i + 1, columns 2j - 1 .. 2j + 1
            const bool covers = 2 * i - 1 <= 2 && 2 <= 2 * i + 1 && 2 * j - 1 <= 3 && 3 <= 2 * j + 1;
            const double o = v[size_t(i * oW + j)];
            CAPTURE(i);
            CAPTURE(j);
            CHECK(std::isfinite(o) == !covers);
            if (covers) CHECK(std::isnan(o) == std::isnan(special));
          }
      }
    }
    kernels::set_conv_engine(saved);
  }
}
