// nn::Upsample, nn::Dropout1d and nn::Dropout2d: forward through the functional ops,
// train / eval, printing as PyTorch's repr, and construction errors. The ops' own values
// are checked in tests/ops/test_interpolate.cpp and test_channel_dropout.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <sstream>
#include <string>
#include <vector>

#include "tensor_checks.h"

using namespace ag;
using M = InterpolateMode;

namespace {
std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}
}  // namespace

TEST_CASE("Upsample: forward is interpolate with the module's options") {
  Generator gen(4);
  Tensor x = randn({2, 3, 4, 5}, DType::f64, &gen);
  nn::Upsample up(nn::UpsampleOptions().scale_factor({2}));  // nearest by default
  Tensor y = up(x);
  CHECK(tc::str(y.shape()) == "[2, 3, 8, 10]");
  CHECK(tc::diff(y, interpolate(x, InterpolateFuncOptions().scale_factor({2}))) == "");
  // Each input pixel fills a 2x2 block.
  CHECK(y.select(2, 3).select(2, 7).to_vector<double>() == x.select(2, 1).select(2, 3).to_vector<double>());

  nn::Upsample bil(nn::UpsampleOptions().size({3, 7}).mode(M::bilinear).align_corners(true));
  auto o = InterpolateFuncOptions().size({3, 7}).mode(M::bilinear).align_corners(true);
  CHECK(tc::diff(bil(x), interpolate(x, o)) == "");
  // align_corners keeps the corners.
  CHECK(bil(x).select(2, 2).select(2, 6).to_vector<double>() == x.select(2, 3).select(2, 4).to_vector<double>());

  nn::Upsample lin(nn::UpsampleOptions().scale_factor({1.7}).mode(M::linear).recompute_scale_factor(true));
  Tensor l = x.flatten(2);  // (2, 3, 20)
  CHECK(tc::diff(lin(l),
                 interpolate(l, InterpolateFuncOptions().scale_factor({1.7}).mode(M::linear).recompute_scale_factor(
                                    true))) == "");
  // No parameters; gradients reach the input; train / eval change nothing.
  CHECK(up->parameters().empty());
  Tensor xg = x.detach().requires_grad_();
  bil(xg).sum().backward();
  CHECK(xg.grad().defined());
  bil->eval();
  CHECK(tc::diff(bil(x), interpolate(x, o)) == "");
}

TEST_CASE("Upsample: prints as PyTorch's repr") {
  CHECK(str(*nn::Upsample(nn::UpsampleOptions().scale_factor({2}))) == "Upsample(scale_factor=2.0, mode=nearest)");
  CHECK(str(*nn::Upsample(nn::UpsampleOptions().scale_factor({1.5, 0.25}).mode(M::nearest_exact))) ==
        "Upsample(scale_factor=(1.5, 0.25), mode=nearest-exact)");
  CHECK(str(*nn::Upsample(nn::UpsampleOptions().size({4, 6}).mode(M::bilinear).align_corners(false))) ==
        "Upsample(size=(4, 6), mode=bilinear)");
  CHECK(str(*nn::Upsample(nn::UpsampleOptions().size({5}).mode(M::area))) == "Upsample(size=5, mode=area)");
  CHECK(str(*nn::Upsample(nn::UpsampleOptions().scale_factor({0.1}).mode(M::linear))) ==
        "Upsample(scale_factor=0.1, mode=linear)");
}

TEST_CASE("Upsample: construction and forward errors") {
  CHECK_THROWS_MSG(nn::Upsample{nn::UpsampleOptions()}, ValueError,
                   "Upsample: exactly one of size or scale_factor should be defined, got neither");
  CHECK_THROWS_MSG(nn::Upsample(nn::UpsampleOptions().size({4}).scale_factor({2})), ValueError, "got both");
  CHECK_THROWS_MSG(nn::Upsample(nn::UpsampleOptions().scale_factor({2}).align_corners(true)), ValueError,
                   "Upsample: align_corners option can only be set with the interpolating modes");
  // What depends on the input comes from interpolate at forward.
  nn::Upsample lin(nn::UpsampleOptions().scale_factor({2}).mode(M::linear));
  CHECK_THROWS_MSG(lin(zeros({1, 2, 3, 3})), ShapeError, "interpolate: got 4-D input of shape [1, 2, 3, 3]");
}

TEST_CASE("Dropout1d and Dropout2d: channels dropped in training, identity in eval") {
  Tensor x = ones({8, 16, 3, 3}, DType::f64);
  nn::Dropout2d drop(nn::Dropout2dOptions(0.5));
  Generator gen(12);
  drop->generator = &gen;
  CHECK(drop->is_training());
  Tensor y = drop(x);
  // Each (sample, channel) plane is all 0 or all 2, and both occur.
  Tensor plane_min = amin(y, {2, 3}), plane_max = amax(y, {2, 3});
  CHECK(tc::diff(plane_min, plane_max) == "");
  double kept = sum(ne(plane_max, 0.0).to(DType::f64)).item<double>();
  CHECK(kept > 0);
  CHECK(kept < 128);
  // The module's generator makes it repeatable.
  gen.manual_seed(12);
  CHECK(tc::diff(drop(x), y) == "");
  drop->eval();
  CHECK(drop(x).impl() == x.impl());
  drop->train();
  CHECK(tc::diff(drop(x), x) != "");

  nn::Dropout1d drop1(0.25);
  Generator gen1(3);
  drop1->generator = &gen1;
  Tensor l = ones({6, 20, 4}, DType::f64);
  Tensor y1 = drop1(l);
  CHECK(tc::diff(amin(y1, {2}), amax(y1, {2})) == "");
  drop1->eval();
  CHECK(drop1(l).impl() == l.impl());
  // Inside a Sequential, eval() reaches the dropout.
  nn::Sequential seq(nn::Upsample(nn::UpsampleOptions().scale_factor({2})), nn::Dropout2d(0.9));
  seq->eval();
  CHECK(tc::diff(seq->forward(x), interpolate(x, InterpolateFuncOptions().scale_factor({2}))) == "");
}

TEST_CASE("Dropout1d and Dropout2d: printing and errors") {
  CHECK(str(*nn::Dropout2d()) == "Dropout2d(p=0.5)");
  CHECK(str(*nn::Dropout1d(0.25)) == "Dropout1d(p=0.25)");
  CHECK_THROWS_MSG(nn::Dropout2d(1.5), ValueError, "Dropout2d: p must be in [0, 1], got 1.5");
  CHECK_THROWS_MSG(nn::Dropout1d(-0.5), ValueError, "Dropout1d: p must be in [0, 1]");
  nn::Dropout1d d1;
  CHECK_THROWS_MSG(d1(ones({2, 3, 4, 5})), ShapeError, "dropout1d: expected a 2-D or 3-D input");
}
