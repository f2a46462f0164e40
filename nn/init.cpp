#include "attograd/nn/init.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/ops.h"

namespace ag::nn::init {

double calculate_gain(NonlinearityType nonlinearity, double param) {
  switch (nonlinearity) {
    case NonlinearityType::Tanh: return 5.0 / 3.0;
    case NonlinearityType::ReLU: return std::sqrt(2.0);
    case NonlinearityType::LeakyReLU:
      AG_CHECK(std::isfinite(param), ValueError, "calculate_gain: negative_slope ", param, " is not a valid number");
      return std::sqrt(2.0 / (1.0 + param * param));
    case NonlinearityType::SELU: return 3.0 / 4.0;  // PyTorch's value, for self-normalizing networks
    default: return 1.0;                            // linear, conv*, sigmoid
  }
}

void uniform_(Tensor& t, double low, double high, Generator* gen) {
  NoGradGuard g;
  t.copy_(uniform(t.shape(), low, high, t.dtype(), gen));
}

void normal_(Tensor& t, double mean, double std, Generator* gen) {
  NoGradGuard g;
  t.copy_(randn(t.shape(), t.dtype(), gen).mul_(std).add_(full(Shape{}, mean, t.dtype())));
}

void constant_(Tensor& t, double value) {
  NoGradGuard g;
  t.fill_(value);
}
void zeros_(Tensor& t) { constant_(t, 0.0); }
void ones_(Tensor& t) { constant_(t, 1.0); }

std::pair<int64_t, int64_t> fans(const Tensor& t) {
  AG_CHECK(t.dim() >= 2, ValueError,
           "init: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions, got shape ",
           t.shape());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.shape()[d];
  return {t.shape()[1] * receptive, t.shape()[0] * receptive};
}

void xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  auto [in, out] = fans(t);
  double a = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  uniform_(t, -a, a, gen);
}

void xavier_normal_(Tensor& t, double gain, Generator* gen) {
  auto [in, out] = fans(t);
  normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)), gen);
}

namespace {
// PyTorch's kaiming std: gain / sqrt(fan). A 0-element tensor has nothing to fill (PyTorch
// warns and returns); fans() still checks the rank first.
double kaiming_std(const Tensor& t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  auto [in, out] = fans(t);
  const int64_t fan = mode == FanModeType::FanIn ? in : out;
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

// Inverse of erf on (-1, 1): Giles' single-precision approximation, then two Newton steps
// on erf(x) = y, which bring it to double precision.
double erfinv(double y) {
  if (y <= -1.0) return -INFINITY;
  if (y >= 1.0) return INFINITY;
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      x = c + x * w;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      x = c + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}
}  // namespace

void kaiming_uniform_(Tensor& t, double a, FanModeType mode, NonlinearityType nonlinearity, Generator* gen) {
  const double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  if (t.numel() == 0) return;
  uniform_(t, -bound, bound, gen);
}

void kaiming_normal_(Tensor& t, double a, FanModeType mode, NonlinearityType nonlinearity, Generator* gen) {
  const double std = kaiming_std(t, a, mode, nonlinearity);
  if (t.numel() == 0) return;
  normal_(t, 0.0, std, gen);
}

void trunc_normal_(Tensor& t, double mean, double std, double a, double b, Generator* gen) {
  AG_CHECK(std::isfinite(mean) && std::isfinite(std) && std > 0, ValueError, "trunc_normal_: std must be positive and ",
           "finite, got mean ", mean, ", std ", std);
  AG_CHECK(a < b, ValueError, "trunc_normal_: the bounds must satisfy a < b, got a = ", a, ", b = ", b);
  // PyTorch's method: u ~ U(2 l - 1, 2 u - 1) with l, u the normal CDF at the bounds,
  // then x = mean + std * sqrt(2) * erfinv(u), clamped to [a, b] against rounding.
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double lo = cdf((a - mean) / std), hi = cdf((b - mean) / std);
  std::vector<double> v = uniform(t.shape(), 2 * lo - 1, 2 * hi - 1, DType::f64, gen).to_vector<double>();
  for (double& x : v) x = std::clamp(mean + std * std::sqrt(2.0) * erfinv(x), a, b);
  NoGradGuard g;
  t.copy_(Tensor::from_vector(v, t.shape()));
  // The dtype conversion may round a bound outwards (f32 of 2.0000001): clamp again.
  t.copy_(clamp(t, std::optional<double>(a), std::optional<double>(b)));
}

void orthogonal_(Tensor& t, double gain, Generator* gen) {
  AG_CHECK(t.dim() >= 2, ValueError, "orthogonal_: Only tensors with 2 or more dimensions are supported, got shape ",
           t.shape());
  if (t.numel() == 0) return;  // PyTorch: nothing to fill
  const int64_t rows = t.shape()[0], cols = t.numel() / rows;
  // A (rows, cols) normal draw, as PyTorch's; QR of its tall orientation (m >= n):
  // modified Gram-Schmidt twice over the n columns gives R with a positive diagonal,
  // i.e. PyTorch's q * sign(diag(r)).
  std::vector<double> a = randn(Shape{rows, cols}, DType::f64, gen).to_vector<double>();
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  // q[j * m + i]: column j of the (m, n) matrix.
  std::vector<double> q(static_cast<std::size_t>(m * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      q[static_cast<std::size_t>(wide ? r * m + c : c * m + r)] = a[static_cast<std::size_t>(r * cols + c)];
  auto col = [&](int64_t j) { return q.data() + j * m; };
  for (int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += col(k)[i] * col(j)[i];
        for (int64_t i = 0; i < m; ++i) col(j)[i] -= dot * col(k)[i];
      }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += col(j)[i] * col(j)[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) col(j)[i] /= norm;  // unit: later projections assume it
  }
  std::vector<double> w(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      w[static_cast<std::size_t>(r * cols + c)] = gain * q[static_cast<std::size_t>(wide ? r * m + c : c * m + r)];
  NoGradGuard g;
  t.copy_(Tensor::from_vector(w, t.shape()));
}

}  // namespace ag::nn::init
