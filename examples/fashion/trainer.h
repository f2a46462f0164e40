#pragma once
// Training and evaluation for the Fashion-MNIST example, shared by the program and its
// test. SGD with Nesterov momentum under a OneCycleLR schedule (Smith's 1cycle: the lr
// rises to its peak over the first 25% of the steps, then anneals to 1/1000 of it, with
// momentum moving from 0.95 to 0.85 and back), weight decay on the conv and Linear
// weights only (BatchNorm parameters and biases form a group without decay), cross-entropy
// on normalized images. Each epoch visits the training set in the order of a
// data::DistributedRandomSampler (with --ddp, each rank its shard of every global batch),
// augmented by random crops and flips drawn from the run's generator. `precision` bf16
// runs the forward and the loss under ag::autocast (common/precision.h).
// Legend: N images, B global batch, W ranks, K classes.
#include <attograd/attograd.h>
#include <attograd/data.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/precision.h"
#include "fashion/data.h"
#include "fashion/model.h"

namespace fashion {

struct Config {
  ModelOptions model;
  int64_t epochs = 11;  // about 13 minutes of the CNN on 2 cores (README)
  int64_t steps = 0;    // optimizer steps in all; 0: epochs * batches per epoch
  int64_t batch = 128;  // global batch (split over the ranks with ddp)
  double lr = 0.2;      // OneCycleLR's peak
  double weight_decay = 5e-4;
  double label_smoothing = 0.1;  // the CNN's; 0 for the baselines
  bool augment = true;           // random crops (padding `pad`) and horizontal flips
  int64_t pad = 2;
  uint64_t seed = 1;
  DType precision = DType::f32;
  bool ddp = false;  // data parallel over the ranks of ag::dist (SyncBatchNorm in the model)
  int64_t eval_batch = 1000;
};

// The per-model defaults the program starts from: the CNN trains on augmented images,
// the two baselines on the images as they are (as the dataset's benchmark trains them).
Config default_config(ModelKind kind);

// Everything a run owns, so that a checkpoint captures and restores all of it.
struct Run {
  Config config;
  int64_t batches_per_epoch;  // full global batches per epoch (the last short one is dropped)
  int64_t total_steps;
  Classifier model;
  std::unique_ptr<nn::DistributedDataParallel> ddp;
  optim::SGD opt;
  optim::OneCycleLR sched;
  std::shared_ptr<data::DistributedRandomSampler> sampler;
  Run(const Config& c, int64_t train_size);
  // Everything else follows from the optimizer steps taken (a checkpoint's scheduler
  // state): the epoch, the position in it, and the augmentation draws so far.
  int64_t steps_done() const { return sched.last_step(); }
  int64_t epoch() const { return steps_done() / batches_per_epoch; }  // the current (0-based) epoch
  bool done() const { return steps_done() >= total_steps; }
};

// The crops and flips of epoch `epoch`: a stream of its own, so that a run resumed from
// a checkpoint draws what the uninterrupted run drew. Every rank draws the whole global
// batch's crops and applies its share (rank_crops), so that W ranks augment each image as
// one process would: a data-parallel run is the one-process run (test_fashion_ddp).
Generator augmentation_generator(uint64_t seed, int64_t epoch);

// The crops of this rank's images in a global batch: a data::DistributedRandomSampler
// gives rank r the global batch's images r, r + W, r + 2W, ...
std::vector<Crop> rank_crops(const std::vector<Crop>& global, int64_t world, int64_t rank);

// The two SGD groups: conv and Linear weights (decay) and BatchNorm parameters and
// biases (none).
std::vector<optim::ParamGroup<optim::SGDOptions>> param_groups(const Classifier& model, const Config& c);

// Called after every step of an epoch: (batch index in the epoch, batches this epoch,
// the step's loss).
using StepCallback = std::function<void(int64_t, int64_t, double)>;

struct EpochStats {
  double loss = 0;      // mean training loss over the epoch's steps (all ranks)
  int64_t steps = 0;    // optimizer steps this epoch
  int64_t samples = 0;  // images trained on this epoch (all ranks)
  double seconds = 0;
};

// The rest of the current epoch (all of it, unless resumed mid-epoch), or what is left
// of run.total_steps: the sampler's permutation of epoch run.epoch(), batches of
// config.batch / world images, augmented, normalized by data.mean / data.std; at most
// max_steps of them (a test stopping mid-epoch).
EpochStats train_epoch(Run& run, const Dataset& data, const StepCallback& on_step = {}, int64_t max_steps = INT64_MAX);

struct EvalResult {
  double loss = 0, accuracy = 0;                // mean cross-entropy (nats), fraction right
  std::vector<int64_t> predicted;               // (N,) argmax of the logits
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted] counts, K x K
};

// The model in eval mode, no graph, on images (N, 1, 28, 28) in [0, 1] normalized by
// mean / std, in batches of `batch`, the forward in `precision`.
EvalResult evaluate(Classifier& model, const Tensor& images, const Tensor& targets, double mean, double std,
                    int64_t classes, DType precision = DType::f32, int64_t batch = 1000);

// counts[t][p] of (target, prediction) pairs; IndexError for a label outside [0, K).
std::vector<std::vector<int64_t>> confusion_matrix(const std::vector<int64_t>& targets,
                                                   const std::vector<int64_t>& predicted, int64_t classes);

}  // namespace fashion
