#pragma once
// The training harness the checkpoint tests share: a tiny model trained with Adam and a
// Noam schedule, and a snapshot of everything load_checkpoint may change (model,
// optimizer, scheduler, default generator) to show that a rejected file changed nothing.
#include <attograd/attograd.h>

#include "test_util.h"

#include <memory>
#include <string>
#include <vector>

namespace checkpoint_test {

namespace nn = ag::nn;
namespace optim = ag::optim;
using ag::Shape;
using ag::Tensor;
using test_util::map_diff;

// ---- a tiny model and its training loop ---------------------------------------------------
// ids (B) -> Embedding (B, 8) -> Dropout(0.2) -> Linear (B, H) -> ReLU -> Linear (B, V)
// -> cross_entropy against target = (3 id + 1) mod V. Initialization and dropout draw from
// the default generator; the batches from the trainer's own data generator.
constexpr int64_t kVocab = 11, kEmbed = 8, kBatch = 12;

struct Trainer {
  nn::Sequential model;
  std::unique_ptr<optim::Adam> opt;
  std::unique_ptr<optim::NoamScheduler> sched;
  ag::Generator data;

  explicit Trainer(int64_t hidden = 16, uint64_t data_seed = 123)
      : model(nn::Embedding(kVocab, kEmbed), nn::Dropout(0.2), nn::Linear(kEmbed, hidden), nn::ReLU(),
              nn::Linear(hidden, kVocab)),
        data(data_seed) {
    opt = std::make_unique<optim::Adam>(model->named_parameters(), optim::AdamOptions().betas({0.9, 0.98}).eps(1e-9));
    sched = std::make_unique<optim::NoamScheduler>(*opt, kEmbed, 0.5, 4);
  }

  double step() {
    Tensor ids = ag::randint(0, kVocab, Shape{kBatch}, &data);  // (B)
    std::vector<int64_t> t;
    for (int64_t id : ids.to_vector<int64_t>()) t.push_back((3 * id + 1) % kVocab);
    Tensor targets = Tensor::from_vector(t);  // (B)
    Tensor loss = ag::cross_entropy(model(ids), targets);
    opt->zero_grad();
    loss.backward();
    opt->step();
    sched->step();
    return loss.item<double>();
  }

  void save(const std::string& path, const ag::Metadata& extra = {}) const {
    ag::save_checkpoint(path, *model, opt.get(), sched.get(), extra);
  }
  ag::Metadata load(const std::string& path) { return ag::load_checkpoint(path, *model, opt.get(), sched.get()); }
};

// ---- comparing everything a load may change ---------------------------------------------

inline ag::TensorMap clone_map(const ag::TensorMap& m) {
  ag::TensorMap out;
  for (auto& [k, t] : m) out.insert(k, t.clone());
  return out;
}

struct Snapshot {
  ag::TensorMap model, optim;
  ag::Metadata sched;
  std::string rng;
};

inline Snapshot snapshot(const Trainer& t) {
  return {clone_map(t.model->state_dict()), clone_map(t.opt->state_dict()), t.sched->state_dict(),
          ag::default_generator().state()};
}

inline std::string snapshot_diff(const Snapshot& a, const Snapshot& b) {
  if (auto d = map_diff(a.model, b.model); !d.empty()) return "model: " + d;
  if (auto d = map_diff(a.optim, b.optim); !d.empty()) return "optimizer: " + d;
  if (a.sched != b.sched) return "scheduler state differs";
  if (a.rng != b.rng) return "default generator state differs";
  return "";
}

// The checkpoint's model part, to show that a test's model really differs from it.
inline ag::TensorMap model_part(const std::string& path) {
  ag::TensorMap out;
  for (auto& [k, t] : ag::load_safetensors(path))
    if (k.rfind("model.", 0) == 0) out.insert(k.substr(6), t);
  return out;
}

}  // namespace checkpoint_test
