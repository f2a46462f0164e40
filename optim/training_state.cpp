#include "attograd/optim/training_state.h"

#include "attograd/generator.h"

namespace ag {
namespace {

constexpr const char* kFormat = "attograd-checkpoint-1";

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// A deep copy (state_dict() shares storage with the live tensors).
TensorMap clone_all(const TensorMap& m) {
  TensorMap out;
  for (auto& [k, t] : m) out.insert(k, t.clone());
  return out;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer,
                     const optim::LRScheduler* scheduler, const Metadata& extra) {
  TensorMap tensors;
  for (auto& [k, t] : model.state_dict()) tensors.insert("model." + k, t);
  if (optimizer)
    for (auto& [k, t] : optimizer->state_dict()) tensors.insert("optim." + k, t);
  Metadata meta{{"format", kFormat}, {"rng.default", default_generator().state()}};
  if (scheduler)
    for (auto& [k, v] : scheduler->state_dict()) meta["sched." + k] = v;
  for (auto& [k, v] : extra) meta["extra." + k] = v;
  save_safetensors(path, tensors, meta);
}

Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer,
                         optim::LRScheduler* scheduler) {
  SafetensorsFile file = read_safetensors(path);  // IOError on a damaged file
  auto fmt = file.metadata.find("format");
  AG_CHECK(fmt != file.metadata.end() && fmt->second == kFormat, IOError, "load_checkpoint: ", path,
           ": not an attograd checkpoint (metadata 'format' is missing or unknown)");
  TensorMap model_state, optim_state;
  Metadata sched_state, extra;
  for (auto& [k, t] : file.tensors) {
    if (starts_with(k, "model."))
      model_state.insert(k.substr(6), t);
    else if (starts_with(k, "optim."))
      optim_state.insert(k.substr(6), t);
    else
      throw IOError(detail::cat("load_checkpoint: ", path, ": unexpected tensor '", k, "'"));
  }
  for (auto& [k, v] : file.metadata) {
    if (starts_with(k, "sched."))
      sched_state[k.substr(6)] = v;
    else if (starts_with(k, "extra."))
      extra[k.substr(6)] = v;
  }
  auto rng = file.metadata.find("rng.default");
  AG_CHECK(rng != file.metadata.end(), IOError, "load_checkpoint: ", path, ": no generator state");
  try {  // checked before anything changes, and the error names the key
    Generator(0).set_state(rng->second);
  } catch (const ValueError& e) {
    throw ValueError(detail::cat("load_checkpoint: ", path, ": key 'rng.default': ", e.what()));
  }

  // Apply in order; on any rejection put back what was already changed.
  TensorMap model_backup = clone_all(model.state_dict());
  TensorMap optim_backup = optimizer ? clone_all(optimizer->state_dict()) : TensorMap{};
  Metadata sched_backup = scheduler ? scheduler->state_dict() : Metadata{};
  std::string rng_backup = default_generator().state();
  int stage = 0;
  try {
    model.load_state_dict(model_state, true);
    stage = 1;
    if (optimizer) optimizer->load_state_dict(optim_state);
    stage = 2;
    if (scheduler) scheduler->load_state_dict(sched_state);
    stage = 3;
    default_generator().set_state(rng->second);
  } catch (...) {
    // The scheduler before the optimizer: loading a scheduler state also sets the
    // optimizer's lr from the schedule, and the optimizer's own lr (which may have been
    // set by hand, off the schedule) must win.
    if (stage >= 1) model.load_state_dict(model_backup, true);
    if (stage >= 3 && scheduler) scheduler->load_state_dict(sched_backup);
    if (stage >= 2 && optimizer) optimizer->load_state_dict(optim_backup);
    default_generator().set_state(rng_backup);
    throw;
  }
  return extra;
}

}  // namespace ag
