// nn: state dicts (dtype conversion on load, shape mismatches, strict and non-strict
// key checks) and save / load of a module through safetensors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../nn_test_util.h"
#include "test_util.h"

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ag;
using namespace nn_test;

using test_util::contains;
using test_util::error_of;

namespace {

std::string tmp_path(const std::string& name) {
  fs::path dir = fs::path(AG_TMP_DIR) / "nn";
  fs::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

// ---- state dicts --------------------------------------------------------------------

TEST_CASE("load_state_dict converts an f32 checkpoint into an f64 module") {
  manual_seed(2);
  Net src;
  manual_seed(3);
  Net dst;
  dst->to(DType::f64);
  dst->load_state_dict(src->state_dict());
  for (auto& n_p : dst->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO(n);
    CHECK(p.dtype() == DType::f64);
    CHECK(p.to_vector<double>() == src->state_dict().at(n).to_vector<double>());
  }
  CHECK(dst->running.dtype() == DType::f64);
  Tensor x = randn({2, 4});
  CHECK(allclose(dst(x.to(DType::f64)), src(x).to(DType::f64), 1e-5, 1e-5));
}

TEST_CASE("load_state_dict: a shape mismatch names the key and both shapes and changes nothing") {
  manual_seed(4);
  Net net;
  TensorMap before = net->state_dict();
  std::vector<std::vector<double>> values;
  for (auto& [k, t] : before) values.push_back(t.clone().to_vector<double>());

  TensorMap bad;
  for (auto& [k, t] : before) bad.insert(k, zeros_like(t));  // would zero everything...
  bad.insert("layers.1.weight", zeros({3, 7}));              // ...but one shape is wrong
  std::string msg = error_of<ShapeError>([&] { net->load_state_dict(bad); });
  CHECK(contains(msg, "layers.1.weight"));
  CHECK(contains(msg, "[3, 7]"));
  CHECK(contains(msg, "[3, 8]"));
  std::size_t i = 0;
  for (auto& k_t : net->state_dict()) {
    auto& k = k_t.first;
    auto& t = k_t.second;
    INFO(k);
    CHECK(t.to_vector<double>() == values[i++]);  // untouched, even keys before the bad one
  }
}

TEST_CASE("load_state_dict: strict lists missing and unexpected keys in one error; non-strict ignores them") {
  manual_seed(5);
  Net net;
  TensorMap sd;
  for (auto& [k, t] : net->state_dict())
    if (k != "norm.bias" && k != "layers.0.bias") sd.insert(k, full_like(t, 0.5));
  sd.insert("layers.2.weight", zeros({3, 3}));
  sd.insert("extra", zeros({1}));

  std::vector<double> bias0 = net->layers->at<nn::LinearImpl>(0)->bias.to_vector<double>();
  std::string msg = error_of<ValueError>([&] { net->load_state_dict(sd); });
  CHECK(contains(msg, "missing keys"));
  CHECK(contains(msg, "norm.bias"));
  CHECK(contains(msg, "layers.0.bias"));
  CHECK(contains(msg, "unexpected keys"));
  CHECK(contains(msg, "layers.2.weight"));
  CHECK(contains(msg, "extra"));
  CHECK(net->scale.to_vector<double>() == std::vector<double>{2.0, 2.0, 2.0});  // nothing loaded

  net->load_state_dict(sd, /*strict=*/false);
  CHECK(net->scale.to_vector<double>() == std::vector<double>{0.5, 0.5, 0.5});
  CHECK(net->layers->at<nn::LinearImpl>(1)->weight.to_vector<double>() == std::vector<double>(24, 0.5));
  CHECK(net->layers->at<nn::LinearImpl>(0)->bias.to_vector<double>() == bias0);  // missing: kept
  CHECK(net->norm->bias.to_vector<double>() == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("save / load round trip through safetensors") {
  const std::string path = tmp_path("net.safetensors");
  manual_seed(6);
  Net a;
  {
    NoGradGuard g;
    a->running.copy_(Tensor::from_vector<float>({1.5f, -2.0f, 3.25f}));
    a->steps.fill_(7);
  }
  nn::save(*a, path);
  manual_seed(7);
  Net b;
  CHECK_FALSE(same_values(a->layers->at<nn::LinearImpl>(0)->weight, b->layers->at<nn::LinearImpl>(0)->weight));
  nn::load(*b, path);
  for (auto& k_t : a->state_dict()) {
    auto& k = k_t.first;
    auto& t = k_t.second;
    INFO(k);
    CHECK(b->state_dict().at(k).dtype() == t.dtype());
    CHECK(same_values(b->state_dict().at(k), t));
  }
  CHECK(b->steps.to_vector<int64_t>() == std::vector<int64_t>{7});
  Tensor x = randn({4, 4});
  CHECK(same_values(a(x), b(x)));
  // the file is a plain safetensors file with PyTorch-style keys
  TensorMap raw = load_safetensors(path);
  CHECK(raw.contains("layers.0.weight"));
  CHECK(raw.at("layers.0.weight").shape() == Shape({8, 4}));

  // a module of another shape refuses the file and stays as it was
  struct Other : nn::Module {
    Other() : nn::Module("Other") { lin = register_module("lin", nn::Linear(2, 2)); }
    nn::Linear lin{nullptr};
  } other;
  CHECK_THROWS_AS(nn::load(other, path), ValueError);
  nn::load(other, path, /*strict=*/false);  // nothing in common: a no-op
}
