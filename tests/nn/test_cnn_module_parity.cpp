// Parity with PyTorch 1.13 for the convolutional family's modules (issue 40): every case
// of tests/fixtures/cnn_modules.safetensors (tools/fixtures/cnn.py) builds the attograd
// module from the case's options, checks that its state-dict keys (in order) and shapes are
// PyTorch's, loads PyTorch's state dict, and replays the training steps (output, gradients
// of the input and of every parameter for sum(out * upstream), buffers after each step:
// running_mean, running_var, num_batches_tracked) and then one eval-mode pass, in float64
// to kRtol / kAtol (tests/cnn_parity.h). The last case is a small CNN trained for 3 SGD
// steps with momentum from the same weights: losses, parameters and running statistics
// after each step. AG_PARITY_REPORT=1 prints every case's worst error.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "cnn_parity.h"
#include "test_util.h"

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace nn = ag::nn;
using ag::Tensor;
using cnn_parity::json;

namespace {

const test_util::Fixture& fixture() {
  static const test_util::Fixture f = test_util::load_fixture("cnn_modules");
  return f;
}

// A module of any type with its one-tensor forward.
struct Built {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
};

template <class Holder>
Built wrap(Holder m) {
  return {m.ptr(), [m](const Tensor& x) mutable { return m(x); }};
}

template <class T>
T get_or(const json& o, const char* key, T fallback) {
  return o.contains(key) ? o.at(key).get<T>() : fallback;
}

std::vector<int64_t> ints_or(const json& o, const char* key, std::vector<int64_t> fallback) {
  return o.contains(key) ? cnn_parity::ints(o.at(key)) : fallback;
}

nn::ConvPaddingMode padding_mode(const std::string& m) {
  if (m == "zeros") return nn::ConvPaddingMode::zeros;
  if (m == "reflect") return nn::ConvPaddingMode::reflect;
  if (m == "replicate") return nn::ConvPaddingMode::replicate;
  if (m == "circular") return nn::ConvPaddingMode::circular;
  throw std::invalid_argument("unknown padding_mode '" + m + "'");
}

template <std::size_t D>
nn::ConvOptions<D> conv_options(const json& o) {
  nn::ConvOptions<D> opt(o.at("in_channels").get<int64_t>(), o.at("out_channels").get<int64_t>(),
                         cnn_parity::ints(o.at("kernel_size")));
  opt.stride(ints_or(o, "stride", {1})).dilation(ints_or(o, "dilation", {1})).groups(get_or<int64_t>(o, "groups", 1));
  opt.bias(get_or<bool>(o, "bias", true)).padding_mode(padding_mode(get_or<std::string>(o, "padding_mode", "zeros")));
  if (o.contains("padding")) {
    const json& p = o.at("padding");
    opt.padding(p.is_string() ? ag::ConvPadding(p.get<std::string>()) : ag::ConvPadding(cnn_parity::ints(p)));
  }
  return opt;
}

template <std::size_t D>
nn::ConvTransposeOptions<D> conv_transpose_options(const json& o) {
  nn::ConvTransposeOptions<D> opt(o.at("in_channels").get<int64_t>(), o.at("out_channels").get<int64_t>(),
                                  cnn_parity::ints(o.at("kernel_size")));
  opt.stride(ints_or(o, "stride", {1})).padding(ints_or(o, "padding", {0}));
  opt.output_padding(ints_or(o, "output_padding", {0})).groups(get_or<int64_t>(o, "groups", 1));
  opt.dilation(ints_or(o, "dilation", {1})).bias(get_or<bool>(o, "bias", true));
  return opt;
}

ag::InterpolateMode interpolate_mode(const std::string& m) {
  if (m == "nearest") return ag::InterpolateMode::nearest;
  if (m == "bilinear") return ag::InterpolateMode::bilinear;
  if (m == "linear") return ag::InterpolateMode::linear;
  if (m == "nearest-exact") return ag::InterpolateMode::nearest_exact;
  if (m == "area") return ag::InterpolateMode::area;
  throw std::invalid_argument("unknown mode '" + m + "'");
}

bool is_norm_module(const std::string& type) {
  return type == "BatchNorm1d" || type == "BatchNorm2d" || type == "GroupNorm" || type == "InstanceNorm2d" ||
         type == "cnn";
}

// momentum: a number, or null for PyTorch's cumulative average (momentum=None; BatchNorm only).
template <class Options>
Options norm_options(Options opt, const json& o) {
  if (o.contains("momentum")) {
    const json& m = o.at("momentum");
    if constexpr (std::is_same_v<std::decay_t<decltype(opt.momentum())>, std::optional<double>>)
      opt.momentum(m.is_null() ? std::optional<double>{} : std::optional<double>{m.get<double>()});
    else
      opt.momentum(m.get<double>());
  }
  if (o.contains("eps")) opt.eps(o.at("eps").get<double>());
  if (o.contains("affine")) opt.affine(o.at("affine").get<bool>());
  if (o.contains("track_running_stats")) opt.track_running_stats(o.at("track_running_stats").get<bool>());
  return opt;
}

// Builds the module of case c from its options ("module" is PyTorch's class name).
Built build(const json& c) {
  const std::string type = c.at("module");
  const json& o = c.contains("options") ? c.at("options") : json::object();
  if (type == "Conv1d") return wrap(nn::Conv1d(conv_options<1>(o)));
  if (type == "Conv2d") return wrap(nn::Conv2d(conv_options<2>(o)));
  if (type == "ConvTranspose1d") return wrap(nn::ConvTranspose1d(conv_transpose_options<1>(o)));
  if (type == "ConvTranspose2d") {
    nn::ConvTranspose2d m(conv_transpose_options<2>(o));
    if (!c.contains("output_size")) return wrap(m);
    const std::vector<int64_t> size = cnn_parity::ints(c.at("output_size"));
    return {m.ptr(), [m, size](const Tensor& x) { return m->forward(x, size); }};
  }
  if (type == "MaxPool2d") {
    nn::MaxPool2dOptions opt(cnn_parity::ints(o.at("kernel_size")));
    opt.stride(ints_or(o, "stride", {})).padding(ints_or(o, "padding", {0})).dilation(ints_or(o, "dilation", {1}));
    return wrap(nn::MaxPool2d(opt.ceil_mode(get_or<bool>(o, "ceil_mode", false))));
  }
  if (type == "AvgPool2d") {
    nn::AvgPool2dOptions opt(cnn_parity::ints(o.at("kernel_size")));
    opt.stride(ints_or(o, "stride", {}))
        .padding(ints_or(o, "padding", {0}))
        .ceil_mode(get_or<bool>(o, "ceil_mode", false));
    return wrap(nn::AvgPool2d(opt.count_include_pad(get_or<bool>(o, "count_include_pad", true))));
  }
  if (type == "AdaptiveAvgPool2d")
    return wrap(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(cnn_parity::ints(o.at("output_size")))));
  if (type == "Upsample") {
    nn::UpsampleOptions opt;
    if (o.contains("size")) opt.size(cnn_parity::ints(o.at("size")));
    if (o.contains("scale_factor")) opt.scale_factor(cnn_parity::doubles(o.at("scale_factor")));
    opt.mode(interpolate_mode(o.at("mode").get<std::string>()));
    if (o.contains("align_corners")) opt.align_corners(o.at("align_corners").get<bool>());
    return wrap(nn::Upsample(opt));
  }
  if (type == "BatchNorm1d")
    return wrap(nn::BatchNorm1d(norm_options(nn::BatchNormOptions(o.at("num_features").get<int64_t>()), o)));
  if (type == "BatchNorm2d")
    return wrap(nn::BatchNorm2d(norm_options(nn::BatchNormOptions(o.at("num_features").get<int64_t>()), o)));
  if (type == "InstanceNorm2d")
    return wrap(nn::InstanceNorm2d(norm_options(nn::InstanceNormOptions(o.at("num_features").get<int64_t>()), o)));
  if (type == "GroupNorm") {
    nn::GroupNormOptions opt(o.at("num_groups").get<int64_t>(), o.at("num_channels").get<int64_t>());
    if (o.contains("eps")) opt.eps(o.at("eps").get<double>());
    if (o.contains("affine")) opt.affine(o.at("affine").get<bool>());
    return wrap(nn::GroupNorm(opt));
  }
  throw std::invalid_argument("test_cnn_module_parity has no builder for module '" + type + "'");
}

// The module's state-dict keys are PyTorch's, in PyTorch's order, with PyTorch's shapes.
bool check_state_keys(const std::string& name, const nn::Module& m, const json& c) {
  return cnn_parity::check_state_dict(name, m.state_dict(), c.at("state_keys").get<std::vector<std::string>>(),
                                      fixture(), name);
}

// One forward / backward pass under `prefix` (<case>/step<i> or <case>/eval): the output and
// the gradients of sum(out * upstream) with respect to the input and every parameter.
void check_pass(const std::string& name, const std::string& prefix, Built& b) {
  const test_util::Fixture& f = fixture();
  const std::string step = prefix.substr(name.size() + 1);
  Tensor x = cnn_parity::leaf(f.at(prefix + "/input"));
  Tensor out = b.forward(x);
  cnn_parity::check_close(name, step + " out", out, f.at(prefix + "/out"));
  std::vector<Tensor> inputs{x};
  std::vector<std::string> keys{"grad.input"};
  for (const auto& [pname, p] : b.module->named_parameters()) {
    inputs.push_back(p);
    keys.push_back("grad." + pname);
  }
  const std::vector<Tensor> g = ag::grad({out}, inputs, {f.at(prefix + "/upstream")});
  for (std::size_t i = 0; i < keys.size(); ++i)
    cnn_parity::check_close(name, step + " " + keys[i], g[i], f.at(prefix + "/" + keys[i]));
}

void run_module_case(const json& c) {
  const test_util::Fixture& f = fixture();
  const std::string name = c.at("name");
  CAPTURE(name);
  cnn_parity::reports()[name];
  try {
    Built b = build(c);
    b.module->to(ag::DType::f64);  // PyTorch's modules were made under set_default_dtype(float64)
    if (!check_state_keys(name, *b.module, c)) return;
    b.module->load_state_dict(f.with_prefix(name + "/state."));
    b.module->train();
    const int64_t steps = c.at("steps").get<int64_t>();
    for (int64_t i = 0; i < steps; ++i) {
      const std::string prefix = name + "/step" + std::to_string(i);
      check_pass(name, prefix, b);
      for (const auto& [bname, buf] : b.module->named_buffers())
        cnn_parity::check_close(name, "step" + std::to_string(i) + " " + bname, buf, f.at(prefix + "/state." + bname));
    }
    if (c.at("eval").get<bool>()) {
      b.module->eval();
      check_pass(name, name + "/eval", b);
    }
  } catch (const std::exception& e) {
    cnn_parity::note_failure(name, std::string("threw: ") + e.what());
    FAIL_CHECK(name, " threw: ", std::string(e.what()));
  }
}

}  // namespace

TEST_CASE("cnn module parity: Conv, ConvTranspose (output_size), pooling and Upsample modules") {
  std::vector<std::string> names;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    const std::string type = c.at("module");
    if (is_norm_module(type)) continue;
    names.push_back(c.at("name"));
    run_module_case(c);
  }
  CHECK(names.size() >= 15);
  cnn_parity::print_reports("modules", names);
}

TEST_CASE("cnn module parity: BatchNorm1d / 2d (3 steps, momentum 0.1 and None), GroupNorm, InstanceNorm2d") {
  std::vector<std::string> names;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    const std::string type = c.at("module");
    if (!is_norm_module(type) || type == "cnn") continue;
    names.push_back(c.at("name"));
    run_module_case(c);
  }
  CHECK(names.size() >= 10);
  cnn_parity::print_reports("norm modules", names);
}

// Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d -> Conv2d(stride 2) -> AdaptiveAvgPool2d(1) ->
// Flatten -> Linear, cross-entropy, SGD(lr 0.1, momentum 0.9), 3 steps from PyTorch's weights.
TEST_CASE("cnn module parity: a small CNN trained 3 SGD steps with momentum") {
  const test_util::Fixture& f = fixture();
  json c;
  for (const json& e : cnn_parity::cases_of(f))
    if (e.at("name") == "cnn") c = e;
  REQUIRE_MESSAGE(!c.is_null(), "cnn_modules has no case 'cnn'");
  const std::string name = "cnn";
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(nn::BatchNormOptions(4)),
                     nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                     nn::Conv2d(nn::Conv2dOptions(4, 6, 3).stride({2}).padding(1)),
                     nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)), nn::Flatten(), nn::Linear(6, 3));
  net->to(ag::DType::f64);
  REQUIRE(check_state_keys(name, *net.ptr(), c));
  net->load_state_dict(f.with_prefix("cnn/state."));
  ag::optim::SGD opt(net->parameters(),
                     ag::optim::SGDOptions(c.at("lr").get<double>()).momentum(c.at("momentum").get<double>()));
  net->train();
  for (int64_t i = 0; i < c.at("steps").get<int64_t>(); ++i) {
    const std::string p = "cnn/step" + std::to_string(i);
    const std::string step = "step" + std::to_string(i);
    opt.zero_grad();
    Tensor loss = ag::cross_entropy(net(f.at(p + "/input")), f.at(p + "/target"));
    cnn_parity::check_close(name, step + " loss", loss.reshape({1}), f.at(p + "/loss"));
    loss.backward();
    opt.step();
    for (const auto& [k, v] : net->state_dict())
      cnn_parity::check_close(name, step + " " + k, v, f.at(p + "/state." + k));
  }
  net->eval();
  {
    ag::NoGradGuard no_grad;
    cnn_parity::check_close(name, "eval out", net(f.at("cnn/eval/input")), f.at("cnn/eval/out"));
  }
  cnn_parity::print_reports("cnn", {name});
}

TEST_CASE("cnn module parity: every case of the fixture names a module this test builds") {
  static const std::set<std::string> known = {"Conv1d",      "Conv2d",      "ConvTranspose1d",   "ConvTranspose2d",
                                              "MaxPool2d",   "AvgPool2d",   "AdaptiveAvgPool2d", "Upsample",
                                              "BatchNorm1d", "BatchNorm2d", "GroupNorm",         "InstanceNorm2d",
                                              "cnn"};
  for (const json& c : cnn_parity::cases_of(fixture()))
    CHECK_MESSAGE(known.count(c.at("module").get<std::string>()), "case ", c.at("name").get<std::string>(), ": module ",
                  c.at("module").get<std::string>(), " has no builder here");
}
