// Losses and distances (attograd/ops/loss.h, normalize of attograd/ops/norm.h, nn/loss.h):
// PyTorch 1.13 values at the cases the op table's gradcheck cannot judge (class weights with
// ignore_index and label smoothing, clamped logs, zero vectors, infinities, NaN), error
// paths, and the loss modules. Literals marked "torch 1.13" were printed once by
// /usr/bin/python3 with torch 1.13 (float64 unless said otherwise).
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/nn.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "tensor_checks.h"

using namespace ag;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor leaf(const std::vector<double>& v, const Shape& s) { return f64(v, s).requires_grad_(); }

// z (3, 4), w (4): the cross_entropy fixtures of the torch script.
Tensor logits() { return f64({1.0, -0.5, 2.0, 0.25, 0.3, 0.8, -1.2, 0.0, -0.7, 1.5, 0.4, -2.0}, {3, 4}); }
Tensor class_w() { return f64({0.5, 2.0, 1.0, 3.0}, {4}); }
}  // namespace

// ---- cross_entropy / nll_loss with class weights -------------------------------------
TEST_CASE("cross_entropy: class weights with ignore_index and label_smoothing (torch 1.13)") {
  Tensor t = i64({0, -100, 3}, {3});
  CrossEntropyOptions o{.label_smoothing = 0.2, .weight = class_w()};
  // F.cross_entropy(z, t, weight=w, label_smoothing=0.2[, reduction=...])
  CHECK(tc::diff(cross_entropy(logits(), t, o), {3.2516964779880264}, 1e-14) == "");
  o.reduction = Reduction::sum;
  CHECK(tc::diff(cross_entropy(logits(), t, o), {11.380937672958092}, 1e-14) == "");
  o.reduction = Reduction::none;
  CHECK(tc::diff(cross_entropy(logits(), t, o), {1.2889300726589266, 0.0, 10.092007600299166}, 1e-14) == "");

  Tensor z = logits().requires_grad_();
  cross_entropy(z, t, {.label_smoothing = 0.2, .weight = class_w()}).backward();
  CHECK(tc::diff(z.grad(),
                 {-0.07449761302131722, -0.01809971630609864, 0.11328585714489214, -0.020688527817476234, 0.0, 0.0, 0.0,
                  0.0, 0.05138881671858475, 0.4996777181725599, 0.16155315165354298, -0.7126196865446878},
                 1e-13) == "");

  // weight with ignore_index=1, and weight alone: mean = sum w_t l / sum w_t.
  CHECK(tc::diff(cross_entropy(logits(), i64({0, 1, 3}, {3}), {.ignore_index = 1, .weight = class_w()}),
                 {3.5445839026924166}, 1e-14) == "");
  CHECK(tc::diff(cross_entropy(logits(), i64({0, 1, 3}, {3}), {.weight = class_w()}), {2.540897761603238}, 1e-14) ==
        "");
  // Every target ignored: mean is 0 / 0.
  CHECK(std::isnan(cross_entropy(logits(), i64({-100, -100, -100}, {3}), {.weight = class_w()}).item<double>()));
}

TEST_CASE("cross_entropy: weights + label_smoothing in (N, C, d) and unbatched (C) layouts (torch 1.13)") {
  Tensor z = reshape(sin(tc::iota(12, DType::f64)) * 2.0, {2, 3, 2});  // torch.arange(12).sin() * 2
  Tensor w = f64({0.5, 2.0, 3.0}, {3});
  CHECK(tc::diff(cross_entropy(z, i64({0, -100, 2, 1}, {2, 2}), {.label_smoothing = 0.25, .weight = w}),
                 {2.265248720195197}, 1e-13) == "");
  CHECK(tc::diff(cross_entropy(z, i64({0, 2, 2, 1}, {2, 2}),
                               {.ignore_index = 2, .label_smoothing = 0.25, .reduction = Reduction::sum, .weight = w}),
                 {4.365723442363311}, 1e-13) == "");
  // An ignore_index that is not -100 makes -100 an out-of-range target, as in torch.
  CHECK_THROWS_AS(cross_entropy(z, i64({0, -100, 2, 1}, {2, 2}), {.ignore_index = 2}), IndexError);
  Tensor p = softmax(reshape(cos(tc::iota(12, DType::f64)), {2, 3, 2}), 1);
  CHECK(tc::diff(cross_entropy(z, p, {.label_smoothing = 0.1, .weight = w}), {3.285563723223994}, 1e-13) == "");
  Tensor u = f64({0.3, -1.0, 2.0, 0.5}, {4});
  CHECK(tc::diff(cross_entropy(u, i64({3}, {}), {.label_smoothing = 0.1, .weight = class_w()}), {1.8027953465158826},
                 1e-14) == "");
  CHECK(std::isnan(
      cross_entropy(u, i64({3}, {}), {.ignore_index = 3, .label_smoothing = 0.1, .weight = class_w()}).item<double>()));
}

TEST_CASE("nll_loss: class weights, by hand and torch 1.13") {
  // -(0.5 * z[0, 0] + 3 * z[2, 3]) / (0.5 + 3) = -(0.5 - 6) / 3.5 (row 1 ignored);
  // torch 1.13: F.nll_loss(z, t, weight=w) = 1.5714285714285714.
  Tensor t = i64({0, -100, 3}, {3});
  CHECK(tc::diff(nll_loss(logits(), t, {.weight = class_w()}), {1.5714285714285714}, 1e-15) == "");
  CHECK(tc::diff(nll_loss(logits(), t, {.weight = class_w(), .reduction = Reduction::none}), {-0.5, 0.0, 6.0}) == "");
  // The old signature still works and agrees with the options form.
  CHECK(tc::diff(nll_loss(logits(), t, -100, Reduction::sum), nll_loss(logits(), t, {.reduction = Reduction::sum})) ==
        "");
}

TEST_CASE("cross_entropy: probability targets (torch 1.13)") {
  Tensor p = f64({0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 0.0, 0.0, 1.0, 0.0}, {3, 4});
  CHECK(tc::diff(cross_entropy(logits(), p), {1.6273569489188784}, 1e-14) == "");
  CrossEntropyOptions o{.label_smoothing = 0.1, .weight = class_w()};
  CHECK(tc::diff(cross_entropy(logits(), p, o), {2.7300281135387565}, 1e-14) == "");
  o.reduction = Reduction::none;
  CHECK(tc::diff(cross_entropy(logits(), p, o), {4.033221950791024, 2.4372263988829097, 1.719635990942335}, 1e-14) ==
        "");
  // One-hot probabilities give the class-index loss.
  Tensor onehot = f64({1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}, {3, 4});
  CHECK(tc::diff(cross_entropy(logits(), onehot), cross_entropy(logits(), i64({0, 3, 1}, {3})), 1e-15) == "");
  CHECK_THROWS_MSG(cross_entropy(logits(), p, {.ignore_index = 1}), ValueError, "ignore_index is not supported");
  CHECK_THROWS_MSG(cross_entropy(logits(), i64({0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, {3, 4})), DTypeError,
                   "must be floating");
}

TEST_CASE("cross_entropy / nll_loss: errors name the op and the shapes") {
  CHECK_THROWS_MSG(cross_entropy(logits(), i64({0, 1, 2}, {3}), {.weight = f64({1, 2, 3}, {3})}), ShapeError,
                   "cross_entropy: weight should be defined for all 4 classes");
  CHECK_THROWS_MSG(nll_loss(logits(), i64({0, 1}, {2}), {.weight = class_w()}), ShapeError,
                   "nll_loss: input shape [3, 4] expects targets of shape [3], got [2]");
  CHECK_THROWS_MSG(nll_loss(logits(), i64({0, 7, 1}, {3}), {.weight = class_w()}), IndexError,
                   "nll_loss: target 7 is out of range for 4 classes");
  CHECK_THROWS_MSG(cross_entropy(logits(), i64({0, 1, 2}, {3}), {.label_smoothing = 1.5}), ValueError,
                   "label_smoothing must be in [0, 1]");
}

// ---- binary cross entropy ---------------------------------------------------------------
TEST_CASE("binary_cross_entropy: logs clamped at -100, PyTorch's gradients at 0 and 1 (torch 1.13)") {
  Tensor x = leaf({0, 1, 0, 1}, {4}), t = leaf({0, 1, 1, 0}, {4});
  Tensor l = binary_cross_entropy(x, t, {}, Reduction::none);
  CHECK(tc::diff(l, {0.0, -0.0, 100.0, 100.0}) == "");
  CHECK(std::signbit(l.to_vector<double>()[1]));  // torch gives -0.
  sum(l).backward();
  // dx = (x - t) / max(x (1 - x), 1e-12f); dt = -logit(x)
  CHECK(tc::diff(x.grad(), {0.0, 0.0, -1.00000000399580286e+12, 1.00000000399580286e+12}, 1e-15) == "");
  CHECK(tc::diff(t.grad(), {kInf, -kInf, kInf, -kInf}) == "");
  // torch 1.13: F.binary_cross_entropy(tensor([1e-50]), tensor([1.])) = 100; log(1 - x)
  // rather than log1p, in float: x = 1e-10, t = 0 gives 0.
  CHECK(tc::diff(binary_cross_entropy(f64({1e-50}, {1}), f64({1}, {1})), {100.0}) == "");
  CHECK(tc::diff(binary_cross_entropy(f64({1e-10}, {1}), f64({0}, {1})), {1.000000082790371e-10}, 1e-15) == "");
  Tensor xf = f64({1e-10, 0.3}, {2}).to(DType::f32), tf = f64({0, 0.7}, {2}).to(DType::f32);
  CHECK(tc::diff(binary_cross_entropy(xf, tf, {}, Reduction::none), {0.0, 0.949783444404602}, 1e-7) == "");
}

TEST_CASE("binary_cross_entropy: weight, reductions, errors (torch 1.13)") {
  Tensor x = leaf({0.2, 0.9, 0.5}, {3}), t = leaf({0.0, 1.0, 0.25}, {3});
  Tensor l = binary_cross_entropy(x, t, f64({2.0, 1.0, 0.5}, {3}));
  CHECK(tc::diff(l, {0.2994070695220728}, 1e-14) == "");
  l.backward();
  CHECK(tc::diff(x.grad(), {0.8333333333333331, -0.3703703703703704, 0.16666666666666666}, 1e-14) == "");
  CHECK(tc::diff(t.grad(), {0.9241962407465937, -0.7324081924454066, 0.0}, 1e-14) == "");
  CHECK(std::isnan(binary_cross_entropy(zeros({0}, DType::f64), zeros({0}, DType::f64)).item<double>()));
  CHECK(binary_cross_entropy(zeros({0}, DType::f64), zeros({0}, DType::f64), {}, Reduction::sum).item<double>() == 0);
  CHECK_THROWS_MSG(binary_cross_entropy(f64({1.5}, {1}), f64({1}, {1})), ValueError,
                   "all elements of input should be between 0 and 1");
  CHECK_THROWS_MSG(binary_cross_entropy(f64({kNaN}, {1}), f64({1}, {1})), ValueError, "between 0 and 1");
  CHECK_THROWS_MSG(binary_cross_entropy(f64({0.5, 0.5}, {2}), f64({1}, {1})), ShapeError,
                   "binary_cross_entropy: target shape [1] must be the same as input shape [2]");
  CHECK_THROWS_MSG(binary_cross_entropy(f64({0.5, 0.5}, {2}), f64({1, 0}, {2}), f64({1, 2, 3}, {3})), ShapeError,
                   "binary_cross_entropy");
}

TEST_CASE("binary_cross_entropy_with_logits: pos_weight along the last dim, weight, extremes (torch 1.13)") {
  Tensor x = leaf({-2.0, 0.0, 3.0, 50.0, -50.0, 0.5}, {2, 3});
  Tensor y = leaf({0.0, 1.0, 0.3, 1.0, 0.0, 0.9}, {2, 3});
  Tensor pw = f64({2.0, 0.5, 4.0}, {3}), w = f64({1.0, 3.0}, {2, 1});
  Tensor l = binary_cross_entropy_with_logits(x, y, w, pw, Reduction::none);
  CHECK(tc::diff(l, {0.1269280110429727, 0.34657359027997264, 2.192315967990109, 0.0, 0.0, 5.412254524399184}, 1e-14) ==
        "");
  sum(l).backward();
  CHECK(tc::diff(x.grad(),
                 {0.11920292202211755, -0.25, 0.6098908409626236, 0.0, 5.786249543891754e-22, -3.890701423659414},
                 1e-13) == "");
  CHECK(tc::diff(y.grad(),
                 {4.126928011042973, -0.34657359027997264, -2.854237945278774, -150.0, 75.0, 2.76669285762096},
                 1e-13) == "");
  CHECK(tc::diff(binary_cross_entropy_with_logits(x.detach(), y.detach(), {}, pw), {0.7449837351299081}, 1e-14) == "");
  // Stable at +-1000 (the naive log(sigmoid) would give inf).
  CHECK(tc::diff(binary_cross_entropy_with_logits(f64({1000, -1000}, {2}), f64({0, 1}, {2}), {}, {}, Reduction::none),
                 {1000.0, 1000.0}) == "");
  CHECK_THROWS_MSG(binary_cross_entropy_with_logits(f64({0.5, 0.5}, {2}), f64({1}, {1})), ShapeError,
                   "binary_cross_entropy_with_logits: target shape [1] must be the same as input shape [2]");
  CHECK_THROWS_MSG(binary_cross_entropy_with_logits(x.detach(), y.detach(), {}, f64({1, 2}, {2})), ShapeError,
                   "pos_weight shape [2] cannot be broadcast to input shape [2, 3]");
}

// ---- regression -------------------------------------------------------------------------
TEST_CASE("smooth_l1_loss / huber_loss: branches, boundary and infinity (torch 1.13)") {
  auto run = [](auto loss) {
    Tensor a = leaf({0.0, 0.5, 1.0, 3.0, kInf, -2.0}, {6});
    Tensor l = loss(a, zeros({6}, DType::f64));
    sum(l).backward();
    return std::pair{l, a.grad()};
  };
  auto [s1, g1] = run([](auto& a, auto b) { return smooth_l1_loss(a, b, Reduction::none, 0.5); });
  CHECK(tc::diff(s1, {0.0, 0.25, 0.75, 2.75, kInf, 1.75}) == "");
  CHECK(tc::diff(g1, {0.0, 1.0, 1.0, 1.0, 1.0, -1.0}) == "");
  auto [s2, g2] = run([](auto& a, auto b) { return smooth_l1_loss(a, b, Reduction::none); });
  CHECK(tc::diff(s2, {0.0, 0.125, 0.5, 2.5, kInf, 1.5}) == "");
  CHECK(tc::diff(g2, {0.0, 0.5, 1.0, 1.0, 1.0, -1.0}) == "");
  auto [h1, hg1] = run([](auto& a, auto b) { return huber_loss(a, b, Reduction::none, 0.5); });
  CHECK(tc::diff(h1, {0.0, 0.125, 0.375, 1.375, kInf, 0.875}) == "");
  CHECK(tc::diff(hg1, {0.0, 0.5, 0.5, 0.5, 0.5, -0.5}) == "");
  auto [h2, hg2] = run([](auto& a, auto b) { return huber_loss(a, b, Reduction::none, 2.0); });
  CHECK(tc::diff(h2, {0.0, 0.125, 0.5, 4.0, kInf, 2.0}) == "");
  CHECK(tc::diff(hg2, {0.0, 0.5, 1.0, 2.0, 2.0, -2.0}) == "");
  // beta = 0 is l1_loss; negative beta and non-positive delta are errors, as PyTorch.
  Tensor a = f64({1, 2}, {2}), b = f64({0, 0.5}, {2});
  CHECK(tc::diff(smooth_l1_loss(a, b, Reduction::none, 0.0), {1.0, 1.5}) == "");
  CHECK_THROWS_MSG(smooth_l1_loss(a, b, Reduction::mean, -1.0), ValueError, "smooth_l1_loss: beta");
  CHECK_THROWS_MSG(huber_loss(a, b, Reduction::mean, 0.0), ValueError, "huber_loss: delta must be positive");
}

TEST_CASE("l1_loss / mse_loss: reductions, broadcasting as PyTorch, shape errors") {
  Tensor a = f64({1, -2, 3, 0}, {2, 2}), b = f64({0.5, 1}, {2});
  // broadcast b to (2, 2): |d| = 0.5, 3, 2.5, 1
  CHECK(tc::diff(l1_loss(a, b, Reduction::none), {0.5, 3, 2.5, 1}) == "");
  CHECK(tc::diff(l1_loss(a, b), {7.0 / 4}) == "");
  CHECK(tc::diff(l1_loss(a, b, Reduction::sum), {7.0}) == "");
  CHECK(tc::diff(mse_loss(a, b, Reduction::sum), {0.25 + 9 + 6.25 + 1}) == "");
  Tensor x = leaf({1, 2}, {2});
  l1_loss(x, f64({1, 3}, {2}), Reduction::sum).backward();  // sign(0) = 0, as PyTorch
  CHECK(tc::diff(x.grad(), {0.0, -1.0}) == "");
  CHECK_THROWS_MSG(l1_loss(f64({1, 2}, {1, 2}), f64({0, 1, 2}, {3})), ShapeError, "l1_loss");
  CHECK_THROWS_MSG(mse_loss(f64({1, 2}, {1, 2}), f64({0, 1, 2}, {3})), ShapeError, "mse_loss");
  CHECK(std::isnan(l1_loss(zeros({0}, DType::f64), zeros({0}, DType::f64)).item<double>()));
}

// ---- kl_div -------------------------------------------------------------------------------
TEST_CASE("kl_div: reductions, log_target both ways, target 0 and < 0 (torch 1.13)") {
  Tensor inp = f64({-1.0, -2.0, -0.5, -0.3, -1.5, -3.0}, {2, 3});
  Tensor tg = f64({0.2, 0.0, 0.8, 0.5, 0.25, 0.25}, {2, 3});
  const std::vector<double> none = {
      -0.12188758248682008, 0.0, 0.22148515894863224, -0.19657359027997265, 0.028426409720027357, 0.40342640972002736};
  CHECK(tc::diff(kl_div(inp, tg, KLDivReduction::none), none, 1e-14) == "");
  CHECK(tc::diff(kl_div(inp, tg, KLDivReduction::sum), {0.33487680562189415}, 1e-14) == "");
  CHECK(tc::diff(kl_div(inp, tg), {0.055812800936982356}, 1e-14) == "");  // mean over all 6
  CHECK(tc::diff(kl_div(inp, tg, KLDivReduction::batchmean), {0.16743840281094707}, 1e-14) == "");
  CHECK(tc::diff(kl_div(inp, tg, Reduction::sum), {0.33487680562189415}, 1e-14) == "");
  // log_target: exp(log 0) (log 0 - x) = 0 * -inf = NaN in torch too.
  Tensor lt = log(tg);
  std::vector<double> none_log = none;
  none_log[1] = kNaN;
  CHECK(tc::diff(kl_div(inp, lt, KLDivReduction::none, true), none_log, 1e-14) == "");
  CHECK(std::isnan(kl_div(inp, lt, KLDivReduction::batchmean, true).item<double>()));

  Tensor x = leaf({-1.0, -2.0, -0.5, -0.3, -1.5, -3.0}, {2, 3}), t = log(tg).requires_grad_();
  kl_div(x, t, KLDivReduction::sum, true).backward();
  CHECK(tc::diff(x.grad(), {-0.2, -0.0, -0.8, -0.5, -0.25, -0.25}, 1e-15) == "");
  CHECK(tc::diff(t.grad(),
                 {0.07811241751317995, kNaN, 1.0214851589486322, 0.3034264097200273, 0.27842640972002736,
                  0.6534264097200273},
                 1e-14) == "");
  // Probability targets: 0 gives 0, a negative target NaN (xlogy); d/dt at t = 0 is NaN.
  Tensor x2 = leaf({-1.0, -2.0, -0.5}, {3}), t2 = leaf({0.0, -1.0, 0.5}, {3});
  Tensor k = kl_div(x2, t2, KLDivReduction::none);
  CHECK(tc::diff(k, {0.0, kNaN, -0.09657359027997264}, 1e-14) == "");
  sum(k).backward();
  CHECK(tc::diff(x2.grad(), {-0.0, 1.0, -0.5}) == "");
  CHECK(tc::diff(t2.grad(), {kNaN, kNaN, 0.80685281944005471}, 1e-14) == "");
}

// ---- distances ----------------------------------------------------------------------------
TEST_CASE("cosine_similarity: zero vector, tiny norms, broadcasting (torch 1.13)") {
  Tensor z = leaf({0, 0}, {1, 2}), b = leaf({1, 2}, {1, 2});
  Tensor c = cosine_similarity(z, b);
  CHECK(tc::diff(c, {0.0}) == "");
  sum(c).backward();
  CHECK(tc::diff(z.grad(), {44721359.54999579489231110, 89442719.09999158978462219}, 1e-14) == "");
  CHECK(tc::diff(b.grad(), {0.0, 0.0}) == "");
  // Each squared norm is clamped at eps^2 on its own: two 1e-5 vectors still give 1.
  CHECK(tc::diff(cosine_similarity(f64({1e-5, 0}, {1, 2}), f64({1e-5, 0}, {1, 2})), {1.0}, 1e-15) == "");
  // Below eps the clamp is invisible to the gradient: 1e8 - 1e-9 / 1e-16 * 0.1.
  Tensor x1 = leaf({1e-9, 0}, {1, 2});
  Tensor c2 = cosine_similarity(x1, f64({1, 0}, {1, 2}));
  CHECK(tc::diff(c2, {0.1}, 1e-15) == "");
  sum(c2).backward();
  CHECK(tc::diff(x1.grad(), {99000000.0, 0.0}, 1e-12) == "");
  // Broadcast (2, 3) with (3); dim wraps on the broadcast shape.
  Tensor u = f64({1, 0, 0, 1, 1, 0}, {2, 3}), v = f64({1, 1, 0}, {3});
  CHECK(tc::diff(cosine_similarity(u, v, 1), {1 / std::sqrt(2.0), 1.0}, 1e-15) == "");
  CHECK(tc::diff(cosine_similarity(u, v, -1), {1 / std::sqrt(2.0), 1.0}, 1e-15) == "");
  CHECK_THROWS_AS(cosine_similarity(f64({1, 2, 3}, {3}), f64({1, 2, 3}, {3})), IndexError);
  CHECK_THROWS_MSG(cosine_similarity(f64({1, 2}, {2}), f64({1, 2, 3}, {3}), 0), ShapeError, "cosine_similarity");
}

TEST_CASE("normalize: zero rows, p = 1, 3, inf, eps (torch 1.13)") {
  Tensor x = leaf({1e-13, 0, 0, 0}, {2, 2});
  Tensor n = normalize(x);
  CHECK(tc::diff(n, {0.1, 0.0, 0.0, 0.0}, 1e-15) == "");
  sum(n).backward();
  CHECK(tc::diff(x.grad(), {1e12, 1e12, 1e12, 1e12}, 1e-15) == "");
  Tensor y = f64({3, -4, 0, 0}, {2, 2});
  CHECK(tc::diff(normalize(y), {0.6, -0.8, 0.0, 0.0}, 1e-15) == "");
  CHECK(tc::diff(normalize(y, 1.0), {0.42857142857142855, -0.5714285714285714, 0.0, 0.0}, 1e-15) == "");
  CHECK(tc::diff(normalize(y, kInf, 1), {0.75, -1.0, 0.0, 0.0}) == "");
  CHECK(tc::diff(normalize(y, 3.0, 0), {1.0, -1.0000000000000002, 0.0, 0.0}, 1e-15) == "");
  CHECK_THROWS_AS(normalize(y, 2.0, 2), IndexError);
}

// ---- modules ------------------------------------------------------------------------------
TEST_CASE("loss modules: options, buffers, forward equals the functional form") {
  Tensor z = logits(), t = i64({0, -100, 3}, {3});
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(class_w()).ignore_index(-100).label_smoothing(0.2));
  CHECK(tc::diff(ce(z, t), {3.2516964779880264}, 1e-14) == "");
  CHECK(ce->named_buffers().size() == 1);
  CHECK(ce->state_dict().contains("weight"));
  nn::CrossEntropyLoss ce_plain;
  CHECK(ce_plain->named_buffers().empty());
  CHECK(tc::diff(ce_plain(z, i64({0, 1, 3}, {3})), cross_entropy(z, i64({0, 1, 3}, {3}))) == "");
  std::ostringstream os;
  os << *ce;
  CHECK(os.str() == "CrossEntropyLoss(ignore_index=-100, label_smoothing=0.2)");

  nn::NLLLoss nll(nn::NLLLossOptions().weight(class_w()).reduction(Reduction::none));
  CHECK(tc::diff(nll(z, t), nll_loss(z, t, {.weight = class_w(), .reduction = Reduction::none})) == "");

  Tensor p = sigmoid(z), q = sigmoid(neg(z));
  nn::BCELoss bce(nn::BCELossOptions().weight(class_w()).reduction(Reduction::sum));
  CHECK(tc::diff(bce(p, q), binary_cross_entropy(p, q, class_w(), Reduction::sum)) == "");
  nn::BCEWithLogitsLoss bcel(nn::BCEWithLogitsLossOptions().pos_weight(class_w()));
  CHECK(bcel->state_dict().contains("pos_weight"));
  CHECK(tc::diff(bcel(z, q), binary_cross_entropy_with_logits(z, q, {}, class_w())) == "");

  Tensor r = f64({0.5, -3, 2, 0.1, 0, 4, -1, 1, 2, 2, -2, 0.3}, {3, 4});
  CHECK(tc::diff(nn::L1Loss(Reduction::sum)(z, r), l1_loss(z, r, Reduction::sum)) == "");
  CHECK(tc::diff(nn::MSELoss()(z, r), mse_loss(z, r)) == "");
  nn::SmoothL1Loss sl(nn::SmoothL1LossOptions().beta(0.5));
  CHECK(tc::diff(sl(z, r), smooth_l1_loss(z, r, Reduction::mean, 0.5)) == "");
  nn::HuberLoss hl(nn::HuberLossOptions().delta(2.0).reduction(Reduction::none));
  CHECK(tc::diff(hl(z, r), huber_loss(z, r, Reduction::none, 2.0)) == "");
  nn::KLDivLoss kl(nn::KLDivLossOptions(KLDivReduction::batchmean).log_target(true));
  CHECK(tc::diff(kl(log_softmax(z, 1), log_softmax(r, 1)),
                 kl_div(log_softmax(z, 1), log_softmax(r, 1), KLDivReduction::batchmean, true)) == "");
  nn::CosineSimilarity cs(nn::CosineSimilarityOptions().dim(0));
  CHECK(tc::diff(cs(z, r), cosine_similarity(z, r, 0)) == "");
  CHECK_THROWS_AS(nn::HuberLoss(nn::HuberLossOptions().delta(0)), ValueError);
  CHECK_THROWS_AS(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(-1)), ValueError);
  CHECK_THROWS_AS(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(2)), ValueError);
  // The functional forms are reachable through nn::functional too.
  namespace F = nn::functional;
  CHECK(tc::diff(F::normalize(z, 2.0, 1), normalize(z)) == "");
}
