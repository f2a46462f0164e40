// nn::init as torch.nn.init: calculate_gain, fans of conv-shaped weights, kaiming_* with
// mode and nonlinearity, xavier_* with gain, trunc_normal_ bounds and moments, orthogonal_
// (W W^T = gain^2 I). Statistical checks use 6-sigma tolerances from the sample size.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "test_util.h"

using namespace ag;
namespace init = ag::nn::init;
using test_util::contains;
using test_util::error_of;

namespace {

struct Moments {
  double mean = 0, std = 0, min = 0, max = 0;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(v.size() - 1));
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  return m;
}

// Relative standard error of a sample std over n draws: sqrt((kurtosis - 1) / (4 n)),
// kurtosis 3 for a normal, 1.8 for a uniform.
double std_tol(int64_t n, double kurtosis) {
  return 6.0 * std::sqrt((kurtosis - 1.0) / (4.0 * static_cast<double>(n)));
}

// (r, c) row-major w -> w w^T (r, r).
std::vector<double> gram(const std::vector<double>& w, int64_t r, int64_t c) {
  std::vector<double> g(static_cast<std::size_t>(r * r));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < c; ++k) g[i * r + j] += w[i * c + k] * w[j * c + k];
  return g;
}

}  // namespace

TEST_CASE("calculate_gain: PyTorch's values") {
  CHECK(init::calculate_gain(init::kLinear) == 1.0);
  CHECK(init::calculate_gain(init::kConv2D) == 1.0);
  CHECK(init::calculate_gain(init::kSigmoid) == 1.0);
  CHECK(init::calculate_gain(init::kTanh) == doctest::Approx(5.0 / 3.0).epsilon(1e-15));
  CHECK(init::calculate_gain(init::kReLU) == doctest::Approx(std::sqrt(2.0)).epsilon(1e-15));
  CHECK(init::calculate_gain(init::kLeakyReLU) == doctest::Approx(std::sqrt(2.0 / (1 + 1e-4))).epsilon(1e-15));
  CHECK(init::calculate_gain(init::kLeakyReLU, 0.2) == doctest::Approx(std::sqrt(2.0 / 1.04)).epsilon(1e-15));
  CHECK(init::calculate_gain(init::kSELU) == 0.75);
}

TEST_CASE("fans of conv-shaped weights; fewer than 2 dims is PyTorch's ValueError") {
  Tensor w = zeros({16, 8, 3, 3});
  CHECK(init::fans(w) == std::pair<int64_t, int64_t>{72, 144});  // in * 3 * 3, out * 3 * 3
  Tensor v = zeros({5});
  CHECK(contains(error_of<ValueError>([&] { init::fans(v); }), "fewer than 2 dimensions"));
  CHECK_THROWS_AS(init::kaiming_normal_(v), ValueError);
  CHECK_THROWS_AS(init::xavier_uniform_(v), ValueError);
}

TEST_CASE("kaiming_normal_: std = gain / sqrt(fan) by mode and nonlinearity") {
  manual_seed(1);
  Tensor w = zeros({128, 64, 3, 3}, DType::f64);  // fan_in 576, fan_out 1152
  const int64_t n = w.numel();
  init::kaiming_normal_(w, 0.0, init::kFanOut, init::kReLU);
  Moments m = moments(w);
  double expect = std::sqrt(2.0) / std::sqrt(1152.0);
  CHECK(std::abs(m.std / expect - 1) < std_tol(n, 3.0));
  CHECK(std::abs(m.mean) < 6 * expect / std::sqrt(static_cast<double>(n)));
  init::kaiming_normal_(w);  // PyTorch's defaults: a 0, fan_in, leaky_relu -> sqrt(2 / fan_in)
  expect = std::sqrt(2.0 / 576.0);
  CHECK(std::abs(moments(w).std / expect - 1) < std_tol(n, 3.0));
  init::kaiming_normal_(w, 0.0, init::kFanIn, init::kTanh);
  expect = 5.0 / 3.0 / std::sqrt(576.0);
  CHECK(std::abs(moments(w).std / expect - 1) < std_tol(n, 3.0));
}

TEST_CASE("kaiming_uniform_: bound sqrt(3) * gain / sqrt(fan); Linear's a = sqrt(5)") {
  manual_seed(2);
  Tensor w = zeros({512, 256}, DType::f64);
  const int64_t n = w.numel();
  init::kaiming_uniform_(w, 0.2, init::kFanIn, init::kLeakyReLU);
  const double bound = std::sqrt(3.0) * std::sqrt(2.0 / 1.04) / std::sqrt(256.0);
  Moments m = moments(w);
  CHECK(m.max <= bound);
  CHECK(m.min >= -bound);
  CHECK(m.max > 0.999 * bound);  // 131072 draws reach the edge
  CHECK(std::abs(m.std / (bound / std::sqrt(3.0)) - 1) < std_tol(n, 1.8));
  init::kaiming_uniform_(w, std::sqrt(5.0));  // 1 / sqrt(fan_in)
  CHECK(moments(w).max <= 1.0 / 16.0);
  init::kaiming_uniform_(w, 0.0, init::kFanOut, init::kReLU);
  CHECK(std::abs(moments(w).max / (std::sqrt(6.0) / std::sqrt(512.0)) - 1) < 1e-3);
}

TEST_CASE("xavier_uniform_ / xavier_normal_ with gain") {
  manual_seed(3);
  Tensor w = zeros({300, 500}, DType::f64);
  const int64_t n = w.numel();
  init::xavier_normal_(w, 2.0);
  const double s = 2.0 * std::sqrt(2.0 / 800.0);
  CHECK(std::abs(moments(w).std / s - 1) < std_tol(n, 3.0));
  init::xavier_uniform_(w, init::calculate_gain(init::kTanh));
  const double a = 5.0 / 3.0 * std::sqrt(6.0 / 800.0);
  Moments m = moments(w);
  CHECK(m.max <= a);
  CHECK(m.min >= -a);
  CHECK(std::abs(m.std / (a / std::sqrt(3.0)) - 1) < std_tol(n, 1.8));
}

TEST_CASE("trunc_normal_: every value in [a, b], the truncated normal's mean and std") {
  manual_seed(4);
  const double mu = 1.0, s = 2.0, a = -1.0, b = 2.0;
  Tensor w = zeros({400, 500}, DType::f64);
  const auto n = static_cast<double>(w.numel());
  init::trunc_normal_(w, mu, s, a, b);
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi); };
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double al = (a - mu) / s, be = (b - mu) / s, z = cdf(be) - cdf(al);
  const double mean = mu + s * (phi(al) - phi(be)) / z;
  const double sd =
      s * std::sqrt(1 + (al * phi(al) - be * phi(be)) / z - std::pow((phi(al) - phi(be)) / z, 2));  // ~0.85
  Moments m = moments(w);
  CHECK(m.min >= a);
  CHECK(m.max <= b);
  CHECK(m.min < a + 0.01);  // the whole interval is used
  CHECK(m.max > b - 0.01);
  CHECK(std::abs(m.mean - mean) < 6 * sd / std::sqrt(n));
  CHECK(std::abs(m.std / sd - 1) < std_tol(w.numel(), 1.8));  // flatter than a normal
  // PyTorch's defaults (0, 1, -2, 2) in f32: the bounds hold after rounding.
  Tensor f = zeros({1000}, DType::f32);
  init::trunc_normal_(f);
  Moments mf = moments(f);
  CHECK(mf.min >= -2.0);
  CHECK(mf.max <= 2.0);
  CHECK_THROWS_AS(init::trunc_normal_(f, 0.0, 1.0, 2.0, -2.0), ValueError);
  CHECK_THROWS_AS(init::trunc_normal_(f, 0.0, 0.0), ValueError);
}

TEST_CASE("orthogonal_: W W^T = gain^2 I (wide), W^T W = gain^2 I (tall), conv shapes flattened") {
  manual_seed(5);
  auto check_identity = [](const std::vector<double>& g, int64_t r, double g2) {
    double worst = 0;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j) worst = std::max(worst, std::abs(g[i * r + j] - (i == j ? g2 : 0.0)));
    return worst;
  };
  Tensor wide = zeros({3, 5}, DType::f64);
  init::orthogonal_(wide, 2.0);
  CHECK(check_identity(gram(wide.to_vector<double>(), 3, 5), 3, 4.0) < 1e-12);
  Tensor tall = zeros({6, 3}, DType::f64);
  init::orthogonal_(tall);
  // W^T W: the gram of the transpose.
  std::vector<double> v = tall.to_vector<double>(), t(18);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) t[j * 6 + i] = v[i * 3 + j];
  CHECK(check_identity(gram(t, 3, 6), 3, 1.0) < 1e-12);
  Tensor conv = zeros({4, 2, 3}, DType::f64);  // viewed as (4, 6)
  init::orthogonal_(conv, 0.5);
  CHECK(check_identity(gram(conv.to_vector<double>(), 4, 6), 4, 0.25) < 1e-12);
  Tensor square = zeros({64, 64}, DType::f32);
  init::orthogonal_(square);
  CHECK(check_identity(gram(square.to_vector<double>(), 64, 64), 64, 1.0) < 1e-5);
  Tensor v1 = zeros({5});
  CHECK(contains(error_of<ValueError>([&] { init::orthogonal_(v1); }),
                 "Only tensors with 2 or more dimensions are supported"));
}
