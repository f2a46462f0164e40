#include "attograd/nn/init.h"

#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"

namespace ag::nn::init {

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
  AG_CHECK(t.dim() >= 2, ShapeError, "init: fan in and fan out need at least 2 dims, got shape ", t.shape());
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

void kaiming_uniform_(Tensor& t, double a, Generator* gen) {
  auto [in, out] = fans(t);
  double gain = std::sqrt(2.0 / (1 + a * a));
  double bound = gain * std::sqrt(3.0 / static_cast<double>(in));
  uniform_(t, -bound, bound, gen);
}

}  // namespace ag::nn::init
