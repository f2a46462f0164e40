#pragma once
// The objects the file-loading fuzzers load into, shared with make_seeds.cpp so that the
// seed files fit them.
#include <attograd/attograd.h>

#include <memory>

namespace fuzz {

// nn_load: Embedding(5, 3) -> LayerNorm(3) -> Linear(3, 2); state-dict keys 0.weight
// (5, 3), 1.weight (3), 1.bias (3), 2.weight (2, 3), 2.bias (2).
inline ag::nn::Sequential make_load_model() {
  namespace nn = ag::nn;
  ag::manual_seed(1);
  return nn::Sequential(nn::Embedding(5, 3), nn::LayerNorm(std::vector<int64_t>{3}), nn::Linear(3, 2));
}

// checkpoint: Linear(3, 2) trained by Adam under a Noam schedule, built from seed 1.
// step() is one training step on a fixed batch x (4, 3): loss = sum(model(x)^2).
struct CheckpointRig {
  ag::nn::Linear model{nullptr};
  std::unique_ptr<ag::optim::Adam> opt;
  std::unique_ptr<ag::optim::NoamScheduler> sched;

  CheckpointRig() {
    ag::manual_seed(1);
    model = ag::nn::Linear(3, 2);
    opt = std::make_unique<ag::optim::Adam>(model->named_parameters(), ag::optim::AdamOptions(0.01));
    sched = std::make_unique<ag::optim::NoamScheduler>(*opt, 4, 1.0, 2);
  }
  void step() {
    ag::Tensor x = ag::arange(12.0).reshape({4, 3}) / 6.0 - 1.0;  // (4, 3)
    ag::Tensor loss = ag::square(model(x)).sum();
    opt->zero_grad();
    loss.backward();
    opt->step();
    sched->step();
  }
};

}  // namespace fuzz
