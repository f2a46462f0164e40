// amp::GradScaler: PyTorch 1.13's dynamic loss scaling (torch.cuda.amp.GradScaler's
// algorithm), with values worked by hand from its update rule: backoff x0.5 on inf/NaN,
// growth x2 after growth_interval clean steps, a skipped optimizer step on inf/NaN, and
// its state through state_dict and a checkpoint.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <optional>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// One parameter w (f32) and SGD(lr 0.1): w.grad = g after a backward of sum(w * g).
struct Fixture {
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3}).requires_grad_();
  optim::SGD opt{std::vector<Tensor>{w}, optim::SGDOptions(0.1)};
  void backward(amp::GradScaler& s, const std::vector<float>& g) {
    opt.zero_grad();
    s.scale((w * Tensor::from_vector(g)).sum()).backward();
  }
};
}  // namespace

TEST_CASE("GradScaler: scaled backward, unscaled step, growth after growth_interval clean steps") {
  Fixture f;
  amp::GradScaler s(amp::GradScalerOptions().init_scale(1024).growth_interval(2));
  CHECK(s.get_scale() == 1024);
  f.backward(s, {1, -2, 0.5f});
  CHECK(tc::diff(f.w.grad(), {1024, -2048, 512}) == "");  // the gradient of loss * scale
  CHECK(s.step(f.opt));                                   // unscaled: w -= 0.1 * g
  CHECK(tc::diff(f.w, {0.9, 2.2, 2.95}, 1e-7) == "");
  s.update();
  CHECK(s.get_scale() == 1024);  // one clean step of two
  CHECK(s.growth_tracker() == 1);
  f.backward(s, {1, 1, 1});
  CHECK(s.step(f.opt));
  s.update();
  CHECK(s.get_scale() == 2048);  // growth_interval clean steps: x2, tracker reset
  CHECK(s.growth_tracker() == 0);
}

TEST_CASE("GradScaler: an inf or NaN gradient skips the step and halves the scale") {
  for (float bad : {static_cast<float>(kInf), std::nanf("")}) {
    CAPTURE(bad);
    Fixture f;
    amp::GradScaler s(amp::GradScalerOptions().init_scale(512).growth_interval(3));
    f.backward(s, {1, 1, 1});
    CHECK(s.step(f.opt));
    s.update();
    CHECK(s.growth_tracker() == 1);
    const std::vector<float> before = f.w.to_vector<float>();
    f.backward(s, {1, bad, 1});
    CHECK_FALSE(s.step(f.opt));  // skipped: w unchanged
    CHECK(f.w.to_vector<float>() == before);
    s.update();
    CHECK(s.get_scale() == 256);     // backoff 0.5
    CHECK(s.growth_tracker() == 0);  // and the clean run starts over
  }
}

TEST_CASE("GradScaler: unscale_ before clipping, once per optimizer per update") {
  Fixture f;
  amp::GradScaler s(amp::GradScalerOptions().init_scale(8));
  f.backward(s, {3, 4, 0});
  s.unscale_(f.opt);
  CHECK(tc::diff(f.w.grad(), {3, 4, 0}) == "");  // true gradients: clip_grad_norm_ sees norm 5
  CHECK(optim::clip_grad_norm_({f.w}, 1.0) == doctest::Approx(5.0));
  CHECK_THROWS_WITH_AS(s.unscale_(f.opt), doctest::Contains("already been called on this optimizer"), AutogradError);
  CHECK(s.step(f.opt));  // does not unscale twice
  CHECK(tc::diff(f.w, {1 - 0.1 * 0.6, 2 - 0.1 * 0.8, 3}, 1e-6) == "");
  CHECK_THROWS_WITH_AS(s.step(f.opt), doctest::Contains("step() has already been called"), AutogradError);
  s.update();
  CHECK_THROWS_WITH_AS(s.update(), doctest::Contains("No inf checks were recorded"), ValueError);
}

TEST_CASE("GradScaler: growth to a non-finite scale is skipped; update(new_scale); options checked") {
  Fixture f;
  amp::GradScaler s(amp::GradScalerOptions().init_scale(3e38).growth_interval(1));
  f.backward(s, {1e-3f, 0, 0});
  CHECK(s.step(f.opt));
  s.update();
  CHECK(s.get_scale() == static_cast<double>(3e38f));  // 6e38 overflows float: kept
  s.update(0.5);
  CHECK(s.get_scale() == 0.5);
  CHECK_THROWS_WITH_AS(amp::GradScaler(amp::GradScalerOptions().growth_factor(1.0)),
                       doctest::Contains("GradScaler: The growth factor must be > 1.0"), ValueError);
  CHECK_THROWS_WITH_AS(amp::GradScaler(amp::GradScalerOptions().backoff_factor(1.0)),
                       doctest::Contains("GradScaler: The backoff factor must be < 1.0"), ValueError);
  CHECK_THROWS_WITH_AS(amp::GradScaler(amp::GradScalerOptions().growth_interval(0)),
                       doctest::Contains("GradScaler: growth_interval must be > 0, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(amp::GradScaler(amp::GradScalerOptions().init_scale(-1)),
                       doctest::Contains("GradScaler: the scale must be finite and > 0, got -1"), ValueError);
  CHECK_THROWS_WITH_AS(s.update(0.0), doctest::Contains("GradScaler.update: the scale must be finite and > 0"),
                       ValueError);
}

TEST_CASE("GradScaler: disabled passes through") {
  Fixture f;
  amp::GradScaler s(amp::GradScalerOptions().enabled(false));
  f.backward(s, {1, 2, 3});
  CHECK(tc::diff(f.w.grad(), {1, 2, 3}) == "");
  CHECK(s.step(f.opt));
  s.update();
  CHECK(s.get_scale() == 1.0);
  CHECK(s.state_dict().empty());
  amp::GradScaler on;
  CHECK_THROWS_WITH_AS(on.load_state_dict({}), doctest::Contains("disabled instance"), ValueError);
}

TEST_CASE("GradScaler: state_dict round trip, through a checkpoint's extra metadata") {
  Fixture f;
  amp::GradScaler s(amp::GradScalerOptions().init_scale(100).growth_interval(5));
  f.backward(s, {1, 1, 1});
  s.step(f.opt);
  s.update();
  f.backward(s, {static_cast<float>(kInf), 1, 1});
  s.step(f.opt);
  s.update();  // scale 50, tracker 0
  f.backward(s, {1, 1, 1});
  s.step(f.opt);
  s.update();  // tracker 1
  const Metadata sd = s.state_dict();
  CHECK(sd.at("growth_interval") == "5");
  CHECK(sd.at("_growth_tracker") == "1");

  nn::Linear model(2, 2);
  Metadata extra;
  for (const auto& kv : sd) extra["scaler." + kv.first] = kv.second;
  const std::string path = test_util::tmp_dir("grad_scaler", "state") + "/run.ckpt";
  save_checkpoint(path, *model, nullptr, nullptr, extra);
  Metadata back;
  for (const auto& kv : load_checkpoint(path, *model))
    if (kv.first.rfind("scaler.", 0) == 0) back[kv.first.substr(7)] = kv.second;
  amp::GradScaler r;
  r.load_state_dict(back);
  CHECK(r.get_scale() == 50);
  CHECK(r.growth_tracker() == 1);
  CHECK(r.options().growth_interval() == 5);
  // A bad entry changes nothing.
  Metadata bad = sd;
  bad["scale"] = "-1";
  CHECK_THROWS_WITH_AS(r.load_state_dict(bad),
                       doctest::Contains("GradScaler.load_state_dict: the scale must be finite and > 0"), ValueError);
  bad = sd;
  bad["_growth_tracker"] = "5";
  CHECK_THROWS_WITH_AS(r.load_state_dict(bad), doctest::Contains("'_growth_tracker' must be in [0, growth_interval)"),
                       ValueError);
  bad = sd;
  bad.erase("scale");
  CHECK_THROWS_WITH_AS(r.load_state_dict(bad), doctest::Contains("GradScaler.load_state_dict: missing 'scale'"),
                       ValueError);
  bad = sd;
  bad["_growth_tracker"] = "7junk";
  CHECK_THROWS_WITH_AS(r.load_state_dict(bad), doctest::Contains("is not a valid number"), ValueError);
  CHECK(r.get_scale() == 50);
}

TEST_CASE("GradScaler.scale: PyTorch's f32 scale tensor of shape (1): an f16 loss comes back f32") {
  amp::GradScaler s;
  const Tensor loss = full({}, 1.0, DType::f16);
  const Tensor scaled = s.scale(loss);
  CHECK(scaled.dtype() == DType::f32);  // f16 would be inf: 65536 is past f16's 65504
  CHECK(scaled.shape() == Shape{1});
  CHECK(scaled.item<double>() == 65536.0);
  CHECK(s.scale(full({2}, 1.0, DType::bf16)).dtype() == DType::f32);
  CHECK(s.scale(full({}, 2.0, DType::f64)).dtype() == DType::f32);  // a 0-d tensor does not promote a dimensioned one
  CHECK(s.scale(full({2}, 2.0, DType::f64)).dtype() == DType::f64);
}

TEST_CASE("GradScaler.step without any gradient raises, as PyTorch's 'No inf checks were recorded'") {
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  amp::GradScaler s;
  CHECK_THROWS_WITH_AS(s.step(opt), doctest::Contains("No inf checks were recorded"), AutogradError);
  CHECK(tc::diff(w, {1, 2}) == "");  // not stepped
  CHECK_THROWS_MSG(s.update(), ValueError, "GradScaler.update: No inf checks were recorded prior to update() (call");
}

TEST_CASE("GradScaler: an optimizer made where a destroyed one lived starts fresh") {
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2}).requires_grad_();
  amp::GradScaler s(amp::GradScalerOptions().init_scale(4));
  std::optional<optim::SGD> opt;
  opt.emplace(std::vector<Tensor>{w}, optim::SGDOptions(0.5));
  s.scale((w * 1.0).sum()).backward();
  s.unscale_(*opt);  // this optimizer: unscaled, not stepped
  const uint64_t first = opt->id();
  opt.reset();
  opt.emplace(std::vector<Tensor>{w}, optim::SGDOptions(0.5));  // the same address
  CHECK(opt->id() != first);
  w.zero_grad();
  s.scale((w * 1.0).sum()).backward();  // gradient 4 = 1 x scale
  CHECK(s.step(*opt));                  // unscales its own gradients first: w -= 0.5 * 1
  CHECK(tc::diff(w, {0.5, 1.5}) == "");
}
