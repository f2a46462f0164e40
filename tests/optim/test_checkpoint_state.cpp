// Checkpoints whose optimizer or scheduler state has the right names, shapes and dtypes
// but values no training run can produce (issue 15): each is rejected with a ValueError
// naming the key and the value, and changes nothing. Before these checks a step of -1 or
// INT64_MAX and a negative exp_avg_sq loaded, and the model turned NaN two steps later
// (INT64_MAX + 1 is also undefined behaviour).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "checkpoint_trainer.h"
#include "test_util.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

using namespace checkpoint_test;

namespace {

std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("checkpoint_state", name); }

constexpr int64_t k2to53 = int64_t{1} << 53;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();

// t with element i set to v (t's dtype kept).
Tensor with_element(const Tensor& t, int64_t i, double v) {
  std::vector<double> x = t.to_vector<double>();
  x.at(size_t(i)) = v;
  return Tensor::from_vector(x, t.shape()).to(t.dtype());
}

}  // namespace

TEST_CASE("a checkpoint with an impossible optimizer or scheduler value is rejected and changes nothing") {
  const std::string dir = tmp_dir("hostile");
  ag::manual_seed(21);
  Trainer a;
  for (int k = 0; k < 3; ++k) a.step();
  const std::string good = dir + "/good.safetensors";
  a.save(good);
  const ag::SafetensorsFile file = ag::read_safetensors(good);
  const Tensor step = file.tensors.at("optim.2.weight.step");
  const Tensor m = file.tensors.at("optim.2.weight.exp_avg"), v = file.tensors.at("optim.2.weight.exp_avg_sq");
  REQUIRE(step.item<int64_t>() == 3);
  REQUIRE(v.dtype() == ag::DType::f32);
  REQUIRE(v.shape() == Shape{16, 8});

  struct Case {
    std::string key;      // the tensor or metadata entry replaced
    Tensor tensor;        // the optimizer value, or
    std::string text;     // the scheduler value
    std::string message;  // the whole error message
  };
  const std::string opt = "optimizer.load_state_dict: '", sched = "scheduler.load_state_dict: ";
  const std::vector<Case> cases = {
      {"optim.2.weight.step", ag::scalar_tensor(int64_t{-1}), "",
       opt + "2.weight.step' must be a step count in [0, 2^53], got -1"},
      {"optim.2.weight.step", ag::scalar_tensor(std::numeric_limits<int64_t>::max()), "",
       opt + "2.weight.step' must be a step count in [0, 2^53], got 9223372036854775807"},
      {"optim.4.bias.step", ag::scalar_tensor(k2to53 + 1), "",
       opt + "4.bias.step' must be a step count in [0, 2^53], got 9007199254740993"},
      {"optim.2.weight.exp_avg_sq", with_element(v, 5, -0.5), "",
       opt + "2.weight.exp_avg_sq' element 5 is -0.5; it must be finite and >= 0"},
      {"optim.2.weight.exp_avg_sq", with_element(v, 127, kNaN), "",
       opt + "2.weight.exp_avg_sq' element 127 is nan; it must be finite and >= 0"},
      {"optim.2.weight.exp_avg_sq", with_element(v, 0, kInf), "",
       opt + "2.weight.exp_avg_sq' element 0 is inf; it must be finite and >= 0"},
      {"optim.2.weight.exp_avg", with_element(m, 9, -kInf), "",
       opt + "2.weight.exp_avg' element 9 is -inf; it must be finite"},
      // Finite in the file's f64, infinite once cast to the parameter's f32 (max ~3.4e38).
      {"optim.2.weight.exp_avg", with_element(m.to(ag::DType::f64), 3, 1e300), "",
       opt + "2.weight.exp_avg' element 3 is inf; it must be finite"},
      {"optim.group.0.lr", ag::scalar_tensor(kNaN, ag::DType::f64), "",
       opt + "group.0.lr' must be a finite lr >= 0, got nan"},
      {"sched.steps",
       {},
       "9223372036854775807",
       sched + "'steps' must be a step count in [0, 2^53], got 9223372036854775807"},
      {"sched.steps",
       {},
       "9007199254740993",
       sched + "'steps' must be a step count in [0, 2^53], got 9007199254740993"},
      {"sched.steps", {}, "-1", sched + "'steps' must be a step count in [0, 2^53], got -1"},
      {"sched.base_lr.0", {}, "-0x1p+0", sched + "'base_lr.0' must be a finite lr >= 0, got -1"},
      {"sched.base_lr.0", {}, "inf", sched + "'base_lr.0' must be a finite lr >= 0, got inf"},
  };

  ag::manual_seed(22);
  Trainer victim;
  for (int k = 0; k < 2; ++k) victim.step();
  victim.opt->set_lr(0.0123);  // off the schedule: a rollback must keep it
  const Snapshot before = snapshot(victim);
  REQUIRE(map_diff(before.model, model_part(good)) != "");  // so a model left loaded would show
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CAPTURE(c.key);
    CAPTURE(c.message);
    ag::TensorMap tensors = file.tensors;
    ag::Metadata meta = file.metadata;
    if (c.tensor.defined()) {
      REQUIRE(tensors.contains(c.key));
      tensors.insert(c.key, c.tensor);
    } else {
      REQUIRE(meta.count(c.key) == 1);
      meta[c.key] = c.text;
    }
    const std::string path = dir + "/bad" + std::to_string(i) + ".safetensors";
    ag::save_safetensors(path, tensors, meta);
    CHECK_THROWS_WITH_AS(victim.load(path), c.message.c_str(), ag::ValueError);
    CHECK(snapshot_diff(snapshot(victim), before) == "");
  }

  // After every rejection the good file still loads and training goes on as in `a`.
  victim.load(good);
  CHECK(snapshot_diff(snapshot(victim), snapshot(a)) == "");
  victim.data.set_state(a.data.state());
  const std::string rng = ag::default_generator().state();
  const double want = a.step();
  ag::default_generator().set_state(rng);
  CHECK(victim.step() == want);
}

TEST_CASE("the largest step counts and zero moments are valid, and training from them stays finite") {
  const std::string dir = tmp_dir("bounds");
  ag::manual_seed(23);
  Trainer a;
  a.step();
  const std::string good = dir + "/good.safetensors";
  a.save(good);
  ag::SafetensorsFile file = ag::read_safetensors(good);
  for (const std::string name : {"0.weight", "2.weight", "2.bias", "4.weight", "4.bias"}) {
    const std::string key = "optim." + name;
    file.tensors.insert(key + ".step", ag::scalar_tensor(k2to53));
    file.tensors.insert(key + ".exp_avg_sq", ag::zeros_like(file.tensors.at(key + ".exp_avg_sq")));
  }
  file.metadata["sched.steps"] = std::to_string(k2to53);
  const std::string edge = dir + "/edge.safetensors";
  ag::save_safetensors(edge, file.tensors, file.metadata);

  Trainer b;
  b.load(edge);
  CHECK(b.sched->last_step() == k2to53);
  CHECK(b.opt->state_dict().at("2.weight.step").item<int64_t>() == k2to53);
  // At t = 2^53 + 1 both bias corrections are 1 (0.9^t and 0.98^t underflow to 0), and
  // the Noam rate is finite and positive: two more steps leave every parameter finite.
  for (int k = 0; k < 2; ++k) {
    CHECK(std::isfinite(b.step()));
    CHECK(b.opt->lr() > 0);
  }
  for (const auto& entry : b.model->state_dict()) {
    const std::string& name = entry.first;  // clang 14 cannot capture a structured binding
    CAPTURE(name);
    for (double x : entry.second.to_vector<double>()) REQUIRE(std::isfinite(x));
  }
  CHECK(b.opt->state_dict().at("2.weight.step").item<int64_t>() == k2to53 + 2);
}

TEST_CASE("a malformed generator state names the checkpoint key, and changes nothing") {
  const std::string dir = tmp_dir("bad_rng");
  ag::manual_seed(24);
  Trainer a;
  a.step();
  const std::string good = dir + "/good.safetensors", bad = dir + "/bad.safetensors";
  a.save(good);
  ag::SafetensorsFile file = ag::read_safetensors(good);
  Trainer victim;
  const Snapshot before = snapshot(victim);
  for (const std::string text : {"garbage", "1 0 0x0p+0 0 0 0 0", "1 2 0x0p+0 1 2 3 4", "1 0 zz 1 2 3 4",
                                 "1 0 0x0p+0 1 2 3 4 5", "1 0 0x0p+0 1 2 3"}) {
    CAPTURE(text);
    file.metadata["rng.default"] = text;
    ag::save_safetensors(bad, file.tensors, file.metadata);
    const std::string want =
        "load_checkpoint: " + bad + ": key 'rng.default': Generator::set_state: malformed state text '" + text + "'";
    CHECK_THROWS_WITH_AS(victim.load(bad), doctest::Contains(want.c_str()), ag::ValueError);
    CHECK(snapshot_diff(snapshot(victim), before) == "");
  }
  victim.load(good);  // the good file still loads
  CHECK(snapshot_diff(snapshot(victim), snapshot(a)) == "");
}

TEST_CASE("saving through a symbolic link writes its target and keeps the link") {
  // Before: the rename replaced the link with a regular file and left the target stale.
  namespace fs = std::filesystem;
  const std::string dir = tmp_dir("symlink");
  fs::create_directories(dir + "/store");
  ag::manual_seed(25);
  Trainer a;
  a.step();
  const std::string target = dir + "/store/real.safetensors", link = dir + "/latest.safetensors",
                    hop = dir + "/hop.safetensors";
  a.save(target);
  fs::create_symlink("store/real.safetensors", link);  // relative, as `ln -s` users write
  fs::create_symlink(link, hop);                       // a chain: hop -> latest -> store/real
  a.step();
  a.save(hop);
  CHECK(fs::is_symlink(link));
  CHECK(fs::is_symlink(hop));
  CHECK(fs::read_symlink(link) == "store/real.safetensors");
  CHECK(map_diff(model_part(target), a.model->state_dict()) == "");
  for (const auto& e : fs::directory_iterator(dir))  // no temporary left beside the link
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);

  // A dangling link: the save creates its target.
  const std::string dangling = dir + "/next.safetensors";
  fs::create_symlink("store/new.safetensors", dangling);
  a.save(dangling);
  CHECK(fs::is_symlink(dangling));
  CHECK(fs::is_regular_file(dir + "/store/new.safetensors"));
  // A loop is an IOError, not a hang.
  fs::create_symlink(dir + "/loop_b", dir + "/loop_a");
  fs::create_symlink(dir + "/loop_a", dir + "/loop_b");
  CHECK_THROWS_WITH_AS(a.save(dir + "/loop_a"), doctest::Contains("more than 40 symbolic links"), ag::IOError);
  // nn::save shares the writer.
  ag::nn::save(*a.model, link);
  CHECK(fs::is_symlink(link));
}
