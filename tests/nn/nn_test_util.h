#pragma once
// Helpers of the nn tests (test_nn.cpp, test_nn/state_dict.cpp, test_nn/layers.cpp): parameter
// names, exact tensor equality, and Net, a custom module written as a user would.
#include <attograd/attograd.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace nn_test {

inline std::vector<std::string> names(const std::vector<std::pair<std::string, ag::Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& [n, t] : v) out.push_back(n);
  return out;
}

// What pretty_print prints (PyTorch's repr).
inline std::string repr(const ag::nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

inline bool same_values(const ag::Tensor& a, const ag::Tensor& b) {
  return a.shape() == b.shape() && a.to_vector<double>() == b.to_vector<double>();
}

// ---- a custom module, written as a user would -----------------------------------
// x (B, 4) -> Linear(4, 8) -> ReLU -> Linear(8, 3) -> LayerNorm(3) -> * scale
struct NetImpl : ag::nn::Module {
  NetImpl() : ag::nn::Module("Net") {
    layers = register_module("layers", ag::nn::ModuleList());
    layers->push_back(ag::nn::Linear(4, 8));
    layers->push_back(ag::nn::Linear(ag::nn::LinearOptions(8, 3).bias(false)));
    norm = register_module("norm", ag::nn::LayerNorm(ag::nn::LayerNormOptions({3})));
    scale = register_parameter("scale", ag::full({3}, 2.0));
    steps = register_buffer("steps", ag::zeros({1}, ag::DType::i64));
    running = register_buffer("running", ag::zeros({3}));
  }
  ag::Tensor forward(const ag::Tensor& x) {
    ag::Tensor y = ag::relu(layers->at<ag::nn::LinearImpl>(0)->forward(x));
    y = layers->at<ag::nn::LinearImpl>(1)->forward(y);
    return norm(y) * scale;
  }

  ag::nn::ModuleList layers{nullptr};
  ag::nn::LayerNorm norm{nullptr};
  ag::Tensor scale;    // (3)
  ag::Tensor steps;    // (1) i64 buffer
  ag::Tensor running;  // (3) f32 buffer
};
AG_MODULE(Net);

}  // namespace nn_test
