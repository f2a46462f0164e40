// load_checkpoint on arbitrary bytes, into a model, Adam optimizer, Noam scheduler and
// the default generator (fuzz::CheckpointRig, one training step in). It returns or
// throws ag::Error; a rejected file leaves all four bit-identical (model and optimizer
// state, scheduler state, the optimizer's lr, the generator's state). An accepted one
// is trained on for two steps, so that state values a checkpoint should not have been
// allowed to hold meet the sanitizers (signed overflow is UBSan's).
#include "fuzz_util.h"
#include "rigs.h"

namespace {

struct Snapshot {
  ag::TensorMap model, optim;
  ag::Metadata sched;
  double lr;
  std::string rng;
};

Snapshot snapshot(const fuzz::CheckpointRig& r) {
  return {fuzz::clone_map(r.model->state_dict()), fuzz::clone_map(r.opt->state_dict()), r.sched->state_dict(),
          r.opt->lr(0), ag::default_generator().state()};
}

std::string snapshot_diff(const Snapshot& a, const Snapshot& b) {
  if (auto d = fuzz::map_diff(a.model, b.model); !d.empty()) return "model: " + d;
  if (auto d = fuzz::map_diff(a.optim, b.optim); !d.empty()) return "optimizer: " + d;
  if (a.sched != b.sched) return "scheduler state";
  if (a.lr != b.lr) return "optimizer lr";
  if (a.rng != b.rng) return "default generator state";
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  const std::string& path = file.write(data, size);

  // Fresh objects per input, so that a crash reproduces from its file alone.
  fuzz::CheckpointRig rig;
  rig.step();
  rig.opt->set_lr(0.0123);  // off the schedule: a rollback must keep it
  ag::default_generator().next_u64();
  const Snapshot before = snapshot(rig);

  if (fuzz::accepts("load_checkpoint",
                    [&] { ag::load_checkpoint(path, *rig.model, rig.opt.get(), rig.sched.get()); })) {
    fuzz::accepts("training after load_checkpoint", [&] {
      rig.step();
      rig.step();
    });
    return 0;
  }
  if (auto d = snapshot_diff(snapshot(rig), before); !d.empty())
    fuzz::fail("load_checkpoint rejected the file but changed the " + d);
  return 0;
}
