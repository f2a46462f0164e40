// The convolution and pooling modules: PyTorch's state-dict names, shapes, initialization
// bounds and reprs, padding_mode, ConvTranspose's output_size, and the pools' forwarding.
// (Values against PyTorch: tests/nn/test_cnn_module_parity.cpp.)
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <sstream>
#include <string>

#include "nn_test_util.h"
#include "tensor_checks.h"

using namespace ag;
using nn_test::repr;
using tc::diff;

TEST_CASE("Conv2d and ConvTranspose2d: state-dict keys and shapes, PyTorch's init bounds, reprs") {
  manual_seed(3);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 2}).groups(2).stride(2).padding(1));
  auto params = conv->named_parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].first == "weight");
  CHECK(params[0].second.shape() == Shape{6, 2, 3, 2});
  CHECK(params[1].first == "bias");
  // kaiming_uniform_(a = sqrt(5)) and the bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 2 * 3 * 2.
  const double bound = 1 / std::sqrt(12.0);
  CHECK(conv->weight.abs().max().item<double>() <= bound);
  CHECK(conv->weight.abs().max().item<double>() > 0.8 * bound);  // 72 draws fill the range
  CHECK(conv->bias.abs().max().item<double>() <= bound);
  CHECK(repr(*conv) == "Conv2d(4, 6, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), groups=2)");
  CHECK(repr(*nn::Conv1d(nn::Conv1dOptions(2, 3, 5).bias(false).padding("same"))) ==
        "Conv1d(2, 3, kernel_size=(5,), stride=(1,), padding=same, bias=false)");

  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 6, 3).stride(2).groups(2));
  CHECK(up->weight.shape() == Shape{4, 3, 3, 3});                       // (C_in, C_out / groups, kH, kW), as PyTorch
  CHECK(up->weight.abs().max().item<double>() <= 1 / std::sqrt(27.0));  // fan_in = weight.size(1) * 9
  CHECK(repr(*up) == "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), groups=2)");
  CHECK_THROWS_AS(nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)), ValueError);
}

TEST_CASE("Conv2d forward is conv2d; padding_mode pads the input with F.pad's mode first") {
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding({1, 2}));
  Tensor x = randn({2, 2, 5, 6});
  CHECK(diff(conv(x), conv2d(x, conv->weight, conv->bias, {1}, {1, 2})) == "");
  for (auto [mode, pm] : {std::pair{nn::ConvPaddingMode::reflect, PadMode::reflect},
                          std::pair{nn::ConvPaddingMode::replicate, PadMode::replicate},
                          std::pair{nn::ConvPaddingMode::circular, PadMode::circular}}) {
    nn::Conv2d c(nn::Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode(mode));
    CHECK(c(x).shape() == Shape{2, 3, 5, 8});
    CHECK(diff(c(x), conv2d(pad(x, {2, 2, 1, 1}, pm), c->weight, c->bias), 1e-6) == "");
  }
  // "same" with an even kernel and reflect: the extra element at the end, as PyTorch.
  nn::Conv1d c1(nn::Conv1dOptions(1, 1, 4).padding("same").padding_mode(nn::ConvPaddingMode::reflect));
  Tensor x1 = randn({1, 1, 7});
  CHECK(diff(c1(x1), conv1d(pad(x1, {1, 2}, PadMode::reflect), c1->weight, c1->bias), 1e-6) == "");
}

TEST_CASE("ConvTranspose2d forward(output_size) picks output_padding, or names the valid range") {
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).padding(1));
  Tensor x = randn({1, 2, 4, 4});
  CHECK(up(x).shape() == Shape{1, 3, 7, 7});
  CHECK(up->forward(x, std::vector<int64_t>{8, 7}).shape() == Shape{1, 3, 8, 7});
  CHECK(diff(up->forward(x, std::vector<int64_t>{1, 3, 8, 8}),
             conv_transpose2d(x, up->weight, up->bias, {2}, {1}, {1, 1})) == "");
  CHECK_THROWS_MSG(up->forward(x, std::vector<int64_t>{9, 7}), ValueError, "valid sizes range from 7 to 8");
}

TEST_CASE("pooling modules forward to their ops and print as PyTorch") {
  Tensor x = randn({2, 3, 7, 6});
  nn::MaxPool2d mp(nn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
  CHECK(diff(mp(x), max_pool2d(x, {3}, {2}, {1}, {1}, true)) == "");
  auto [v, i] = mp->forward_with_indices(x);
  CHECK(diff(i, max_pool2d_with_indices(x, {3}, {2}, {1}, {1}, true).second) == "");
  CHECK(repr(*mp) == "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=true)");
  nn::AvgPool2d ap(nn::AvgPool2dOptions({2, 3}).count_include_pad(false).padding(1));
  CHECK(diff(ap(x), avg_pool2d(x, {2, 3}, {}, {1}, false, false)) == "");
  CHECK(repr(*ap) == "AvgPool2d(kernel_size=(2, 3), stride=(2, 3), padding=1, count_include_pad=false)");
  nn::AdaptiveAvgPool2d gap(1);
  CHECK(gap(x).shape() == Shape{2, 3, 1, 1});
  CHECK(repr(*gap) == "AdaptiveAvgPool2d(output_size=1)");
  nn::AdaptiveMaxPool1d amp(nn::AdaptiveMaxPool1dOptions(4));
  CHECK(diff(amp(x.select(2, 0)), adaptive_max_pool1d(x.select(2, 0), {4})) == "");
  CHECK(nn::MaxPool1d(2)(x.select(2, 0)).shape() == Shape{2, 3, 3});
  CHECK(nn::AvgPool1d(nn::AvgPool1dOptions(2).ceil_mode(true))(x.select(3, 0)).shape() == Shape{2, 3, 4});
  CHECK(nn::AdaptiveAvgPool1d(2)(x.select(2, 0)).shape() == Shape{2, 3, 2});
  CHECK(nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({2, 3}))(x).shape() == Shape{2, 3, 2, 3});
  CHECK_THROWS_AS(nn::AvgPool1d(nn::AvgPool1dOptions(2).divisor_override(2)), ValueError);
  CHECK_THROWS_AS(nn::MaxPool2d(nn::MaxPool2dOptions({1, 2, 3})), ValueError);
}

TEST_CASE("a small CNN trains: the loss falls over a few SGD steps (modules, backward, optimizer)") {
  manual_seed(0);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(4, 8, 3).stride(2)), nn::ReLU(), nn::AdaptiveAvgPool2d(1),
                     nn::Flatten(), nn::Linear(8, 3));
  Tensor x = randn({12, 1, 10, 10});
  Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}, {12});
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    Tensor loss = cross_entropy(net(x), y);
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  CHECK(last < 0.5 * first);
}
