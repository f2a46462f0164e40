// Training checkpoints: round trips, bit-identical resumption, and files that must be
// rejected without touching the model, optimizer, scheduler or default generator.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "checkpoint_trainer.h"
#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace nn = ag::nn;
namespace optim = ag::optim;
using ag::Shape;
using ag::Tensor;

using test_util::map_diff;
using test_util::read_bytes;
using test_util::write_bytes;

using namespace checkpoint_test;

namespace {

// ---- files ------------------------------------------------------------------------------

std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("checkpoint", name); }

uint64_t header_length(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(file[size_t(i)]);
  return n;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

// Turns the save fault on for one scope (and off again even when a CHECK fails).
struct SaveFault {
  explicit SaveFault(int64_t n) { ag::testing::set_save_fault_after_bytes(n); }
  ~SaveFault() { ag::testing::set_save_fault_after_bytes(-1); }
  SaveFault(const SaveFault&) = delete;
  SaveFault& operator=(const SaveFault&) = delete;
};

}  // namespace

// ---- round trip and resumption --------------------------------------------------------------

TEST_CASE("save_checkpoint / load_checkpoint round trip") {
  const std::string dir = tmp_dir("round_trip"), path = dir + "/ckpt.safetensors";
  ag::manual_seed(1);
  Trainer a;
  for (int k = 0; k < 5; ++k) a.step();
  const ag::Metadata extra{{"epoch", "3"}, {"data_rng", a.data.state()}, {"note", "any text: {\"json\": 1}"}};
  const Snapshot saved = snapshot(a);
  a.save(path, extra);
  CHECK(snapshot_diff(snapshot(a), saved) == "");  // saving changes nothing

  // The file's layout, as checkpoint.h describes it.
  ag::SafetensorsFile file = ag::read_safetensors(path);
  CHECK(file.metadata.at("format") == "attograd-checkpoint-1");
  CHECK(file.metadata.at("rng.default") == saved.rng);
  CHECK(file.metadata.at("sched.steps") == "5");
  CHECK(file.metadata.at("extra.epoch") == "3");
  CHECK(file.tensors.contains("model.0.weight"));
  CHECK(file.tensors.contains("model.4.bias"));
  CHECK(file.tensors.contains("optim.2.weight.exp_avg"));
  CHECK(file.tensors.contains("optim.group.0.lr"));

  // Fresh objects with other weights, another data seed, another default generator state.
  ag::manual_seed(77);
  Trainer b(16, 999);
  b.step();
  REQUIRE(snapshot_diff(snapshot(b), saved) != "");
  ag::Metadata got = b.load(path);
  CHECK(got == extra);
  CHECK(snapshot_diff(snapshot(b), saved) == "");
  CHECK(b.sched->last_step() == 5);
  CHECK(b.opt->lr() == a.opt->lr());
  b.data.set_state(got.at("data_rng"));
  CHECK(b.data.state() == a.data.state());

  // Optimizer and scheduler are optional: the model alone loads from the same file.
  ag::manual_seed(78);
  Trainer c;
  CHECK(ag::load_checkpoint(path, *c.model) == extra);
  CHECK(map_diff(c.model->state_dict(), saved.model) == "");
  CHECK(c.sched->last_step() == 0);
}

TEST_CASE("resuming from a checkpoint gives bit-identical losses") {
  const std::string dir = tmp_dir("resume"), path = dir + "/ckpt.safetensors";
  constexpr int kTotal = 20, kSaveAt = 10;

  // Uninterrupted.
  ag::manual_seed(1);
  Trainer full;
  std::vector<double> want;
  for (int k = 0; k < kTotal; ++k) want.push_back(full.step());

  // Interrupted: 10 steps, save, throw everything away.
  {
    ag::manual_seed(1);
    Trainer first;
    for (int k = 0; k < kSaveAt; ++k) CHECK(first.step() == want[size_t(k)]);
    first.save(path, {{"data_rng", first.data.state()}});
  }

  // Fresh model, optimizer, scheduler and data generator, all in other states.
  auto resume = [&](bool restore_data) {
    ag::manual_seed(4321);
    auto t = std::make_unique<Trainer>(16, 555);
    ag::Metadata extra = t->load(path);
    if (restore_data) t->data.set_state(extra.at("data_rng"));
    return t;
  };
  auto second = resume(true);
  std::vector<double> got;
  for (int k = kSaveAt; k < kTotal; ++k) got.push_back(second->step());
  for (int k = kSaveAt; k < kTotal; ++k) {
    CAPTURE(k + 1);
    CHECK(got[size_t(k - kSaveAt)] == want[size_t(k)]);  // exact, not approximate
  }
  CHECK(map_diff(second->model->state_dict(), full.model->state_dict()) == "");
  CHECK(map_diff(second->opt->state_dict(), full.opt->state_dict()) == "");

  // The test can fail: without the dropout generator's state, or the data's, the losses differ.
  auto other_dropout = resume(true);
  ag::manual_seed(4242);
  CHECK(other_dropout->step() != want[kSaveAt]);
  auto other_data = resume(false);
  CHECK(other_data->step() != want[kSaveAt]);
}

// ---- files that must be rejected --------------------------------------------------------------

TEST_CASE("a truncated checkpoint is rejected with IOError and changes nothing") {
  const std::string dir = tmp_dir("truncated"), good = dir + "/good.safetensors", cut = dir + "/cut.safetensors";
  ag::manual_seed(2);
  Trainer a;
  for (int k = 0; k < 3; ++k) a.step();
  a.save(good, {{"epoch", "1"}});
  const std::string bytes = read_bytes(good);
  const uint64_t data_start = 8 + header_length(bytes);
  REQUIRE(data_start < bytes.size());

  ag::manual_seed(3);
  Trainer victim;
  for (int k = 0; k < 2; ++k) victim.step();
  const Snapshot before = snapshot(victim);
  REQUIRE(map_diff(before.model, model_part(good)) != "");  // a load would show

  // Every length that cuts into the 8-byte length or the header, the bare header, and a
  // few cuts into the data.
  std::vector<uint64_t> lengths;
  for (uint64_t n = 0; n <= data_start; ++n) lengths.push_back(n);
  for (uint64_t n : {data_start + 1, data_start + 4, (data_start + bytes.size()) / 2, uint64_t(bytes.size()) - 8,
                     uint64_t(bytes.size()) - 1})
    lengths.push_back(n);

  // Longest first, shortening one file in place: rewriting a file thousands of times is
  // slow on ext4 (a truncating rewrite flushes), resizing it is not.
  std::sort(lengths.rbegin(), lengths.rend());
  write_bytes(cut, bytes);
  int not_rejected = 0, wrong_error = 0, changed = 0;
  for (uint64_t n : lengths) {
    fs::resize_file(cut, n);
    REQUIRE(fs::file_size(cut) == n);
    try {
      victim.load(cut);
      ++not_rejected;
      if (not_rejected == 1) MESSAGE("a checkpoint cut to " << n << " bytes loaded");
    } catch (const ag::IOError&) {
    } catch (const std::exception& e) {
      if (++wrong_error == 1) MESSAGE("cut to " << n << " bytes: not an IOError: " << e.what());
    }
    if (snapshot_diff(snapshot(victim), before) != "" && ++changed == 1)
      MESSAGE("cut to " << n << " bytes: the load changed " << snapshot_diff(snapshot(victim), before));
  }
  CHECK(lengths.size() > 100);
  CHECK(not_rejected == 0);
  CHECK(wrong_error == 0);
  CHECK(changed == 0);

  // The whole file still loads into the same objects.
  CHECK(victim.load(good).at("epoch") == "1");
  CHECK(map_diff(victim.model->state_dict(), model_part(good)) == "");
}

TEST_CASE("a file that is not an attograd checkpoint is rejected with IOError") {
  const std::string dir = tmp_dir("format");
  ag::manual_seed(4);
  Trainer a;
  a.step();
  const std::string good = dir + "/good.safetensors";
  a.save(good);
  const ag::SafetensorsFile file = ag::read_safetensors(good);

  ag::manual_seed(5);
  Trainer victim;
  victim.step();
  const Snapshot before = snapshot(victim);

  auto rewrite = [&](const std::string& name, const ag::TensorMap& tensors, const ag::Metadata& meta) {
    std::string path = dir + "/" + name;
    ag::save_safetensors(path, tensors, meta);
    return path;
  };
  ag::Metadata other_version = file.metadata, no_format = file.metadata, wrong_case = file.metadata;
  other_version["format"] = "attograd-checkpoint-2";
  no_format.erase("format");
  wrong_case["format"] = "Attograd-Checkpoint-1";
  ag::TensorMap stray = file.tensors;
  stray.insert("weights.0.weight", ag::zeros(Shape{2}));
  ag::Metadata no_rng = file.metadata;
  no_rng.erase("rng.default");

  std::vector<std::string> bad = {
      rewrite("other_version.safetensors", file.tensors, other_version),
      rewrite("no_format.safetensors", file.tensors, no_format),
      rewrite("wrong_case.safetensors", file.tensors, wrong_case),
      rewrite("stray_tensor.safetensors", stray, file.metadata),
      rewrite("no_rng.safetensors", file.tensors, no_rng),
      dir + "/does_not_exist.safetensors",
  };
  nn::save(*victim.model, dir + "/plain_model.safetensors");  // a model file, not a checkpoint
  bad.push_back(dir + "/plain_model.safetensors");
  write_bytes(dir + "/text.safetensors", "this is not a safetensors file at all");
  bad.push_back(dir + "/text.safetensors");

  for (const std::string& path : bad) {
    CAPTURE(path);
    CHECK_THROWS_AS(victim.load(path), ag::IOError);
    CHECK(snapshot_diff(snapshot(victim), before) == "");
  }
}

TEST_CASE("a crash while saving leaves the previous checkpoint intact") {
  const std::string dir = tmp_dir("crash"), path = dir + "/ckpt.safetensors";
  ag::manual_seed(6);
  Trainer a;
  for (int k = 0; k < 3; ++k) a.step();
  a.save(path, {{"epoch", "old"}});
  const std::string old_bytes = read_bytes(path);
  const ag::TensorMap old_model = clone_map(a.model->state_dict());
  const uint64_t data_start = 8 + header_length(old_bytes);

  for (int k = 0; k < 2; ++k) a.step();  // the state now differs from the file
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(8), uint64_t(100), data_start - 1, data_start, data_start + 17,
                     uint64_t(old_bytes.size()) - 1}) {
    CAPTURE(n);
    {
      SaveFault fault{int64_t(n)};
      CHECK_THROWS_AS(a.save(path, {{"epoch", "new"}}), ag::IOError);
    }
    CHECK(read_bytes(path) == old_bytes);
    CHECK(files_in(dir) == std::vector<std::string>{"ckpt.safetensors"});  // no temporary left behind
  }

  // A crash during the very first save leaves no file at all.
  const std::string fresh = dir + "/fresh.safetensors";
  {
    SaveFault fault{100};
    CHECK_THROWS_AS(a.save(fresh), ag::IOError);
  }
  CHECK_FALSE(fs::exists(fresh));
  CHECK(files_in(dir) == std::vector<std::string>{"ckpt.safetensors"});

  // The old checkpoint loads, with the old state.
  ag::manual_seed(7);
  Trainer b;
  CHECK(b.load(path).at("epoch") == "old");
  CHECK(map_diff(b.model->state_dict(), old_model) == "");
  CHECK(b.sched->last_step() == 3);

  // And with the fault off, saving works again.
  a.save(path, {{"epoch", "new"}});
  CHECK(b.load(path).at("epoch") == "new");
  CHECK(map_diff(b.model->state_dict(), a.model->state_dict()) == "");
  CHECK(b.sched->last_step() == 5);
}

TEST_CASE("a checkpoint whose model part does not fit is rejected and changes nothing") {
  const std::string dir = tmp_dir("model_mismatch");
  ag::manual_seed(8);
  Trainer wide(16);
  for (int k = 0; k < 2; ++k) wide.step();
  wide.save(dir + "/wide.safetensors");

  // Other layer names (a model without the ReLU and dropout, same hidden size).
  nn::Sequential other(nn::Embedding(kVocab, kEmbed), nn::Linear(kEmbed, 16), nn::Linear(16, kVocab));
  optim::Adam other_opt(other->named_parameters());
  ag::save_checkpoint(dir + "/other.safetensors", *other, &other_opt);

  ag::manual_seed(9);
  Trainer narrow(12);
  for (int k = 0; k < 2; ++k) narrow.step();
  const Snapshot before = snapshot(narrow);
  CHECK_THROWS_AS(narrow.load(dir + "/wide.safetensors"), ag::ShapeError);
  CHECK(snapshot_diff(snapshot(narrow), before) == "");
  CHECK_THROWS_AS(narrow.load(dir + "/other.safetensors"), ag::Error);
  CHECK(snapshot_diff(snapshot(narrow), before) == "");

  ag::manual_seed(9);
  Trainer same_size(16);  // and the same hidden size, but other names
  same_size.step();
  const Snapshot same_before = snapshot(same_size);
  CHECK_THROWS_AS(same_size.load(dir + "/other.safetensors"), ag::Error);
  CHECK(snapshot_diff(snapshot(same_size), same_before) == "");
}

TEST_CASE("a checkpoint whose model fits but whose later parts do not restores the model") {
  // load_checkpoint applies model, optimizer, scheduler, generator in turn: a part rejected
  // after the model was loaded must put the model (and everything else) back.
  const std::string dir = tmp_dir("later_mismatch");
  ag::manual_seed(10);
  Trainer a;
  for (int k = 0; k < 4; ++k) a.step();
  const std::string good = dir + "/good.safetensors";
  a.save(good);
  const ag::SafetensorsFile file = ag::read_safetensors(good);

  auto rewrite = [&](const std::string& name, const ag::TensorMap& tensors, const ag::Metadata& meta) {
    std::string path = dir + "/" + name;
    ag::save_safetensors(path, tensors, meta);
    return path;
  };
  ag::TensorMap bad_shape = file.tensors, unknown_param = file.tensors, bad_step = file.tensors;
  REQUIRE(bad_shape.contains("optim.2.weight.exp_avg"));
  bad_shape.insert("optim.2.weight.exp_avg", ag::zeros(Shape{3, 3}));
  unknown_param.insert("optim.5.weight.exp_avg", ag::zeros(Shape{3}));
  bad_step.insert("optim.4.bias.step", ag::scalar_tensor(4.0));
  ag::Metadata bad_sched = file.metadata, no_sched = file.metadata, bad_rng = file.metadata;
  bad_sched["sched.steps"] = "four";
  no_sched.erase("sched.steps");
  bad_rng["rng.default"] = "not a generator state";

  struct Case {
    std::string what, path;
  };
  const std::vector<Case> cases = {
      {"optimizer state of the wrong shape", rewrite("bad_shape.safetensors", bad_shape, file.metadata)},
      {"optimizer state for an unknown parameter", rewrite("unknown_param.safetensors", unknown_param, file.metadata)},
      {"optimizer step of the wrong dtype", rewrite("bad_step.safetensors", bad_step, file.metadata)},
      {"malformed scheduler state", rewrite("bad_sched.safetensors", file.tensors, bad_sched)},
      {"missing scheduler state", rewrite("no_sched.safetensors", file.tensors, no_sched)},
      {"malformed generator state", rewrite("bad_rng.safetensors", file.tensors, bad_rng)},
  };

  ag::manual_seed(11);
  Trainer victim;
  for (int k = 0; k < 2; ++k) victim.step();
  // An lr set by hand, off the schedule: a rollback must keep it too.
  victim.opt->set_lr(0.0123);
  const Snapshot before = snapshot(victim);
  REQUIRE(map_diff(before.model, model_part(good)) != "");
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK_THROWS_AS(victim.load(c.path), ag::Error);
    CHECK(snapshot_diff(snapshot(victim), before) == "");
  }

  // The good file loads into the same objects, and training goes on as in `a`.
  victim.load(good);
  CHECK(snapshot_diff(snapshot(victim), snapshot(a)) == "");
  victim.data.set_state(a.data.state());
  const std::string rng = ag::default_generator().state();
  double want = a.step();
  ag::default_generator().set_state(rng);
  CHECK(victim.step() == want);
}
