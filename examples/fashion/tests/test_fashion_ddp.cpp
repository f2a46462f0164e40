// `fashion --ddp` on the ranks of the job (one process: a world of one; np2: two ranks
// under tools/mpirun). Each rank trains the example's CNN data parallel (SyncBatchNorm,
// each rank its shard of every global batch, the crops of its own images) and, as the
// reference, the same run in one process on whole global batches. Two steps of augmented
// training must leave the same weights and BatchNorm running statistics (f32, to
// summation order) and the same mean training loss. Not more: the two runs differ by
// rounding, which every step grows, until a max pool or ReLU picks another element and
// the difference jumps (measured on an Emerald Rapids with oneDNN's AVX-512
// convolutions: 3e-8, 1.4e-6, then 2.7e-3 after the third step).
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "fashion/trainer.h"

using namespace fashion;

namespace {

// 96 random images of 10 classes: no pattern is needed, only the same numbers on every rank.
Dataset random_dataset() {
  Generator gen(5);
  Dataset d;
  d.train_images = rand({96, 1, 28, 28}, DType::f32, &gen);
  d.train_targets = randint(0, 10, {96}, &gen);
  d.test_images = rand({20, 1, 28, 28}, DType::f32, &gen);
  d.test_targets = randint(0, 10, {20}, &gen);
  d.classes = data::FashionMNIST::fashion_classes();
  d.mean = 0.5, d.std = 0.29;
  return d;
}

// The largest |a - b| / (1 + |b|) over the two state dicts (same keys, same shapes).
double max_rel_diff(const TensorMap& a, const TensorMap& b) {
  double worst = 0;
  for (const auto& entry : b) {  // no structured binding: doctest's macros capture `name` in a lambda
    const std::string& name = entry.first;
    const Tensor& t = entry.second;
    REQUIRE_MESSAGE(a.contains(name), name);
    const Tensor x = a.at(name).to(DType::f64), y = t.to(DType::f64);
    REQUIRE_MESSAGE(x.shape() == y.shape(), name);
    if (y.numel() == 0) continue;
    worst = std::max(worst, ((x - y).abs() / (y.abs() + 1.0)).max().item<double>());
  }
  return worst;
}

}  // namespace

TEST_CASE("data parallel training with SyncBatchNorm equals one process on the global batch") {
  const Dataset d = random_dataset();
  Config c = default_config(ModelKind::cnn);
  c.model.widths({4, 8, 8});
  c.batch = 16;  // 8 images per rank at np2; 6 batches per epoch
  c.steps = 2;
  c.pad = 2;  // augmented: every rank draws the global batch's crops
  c.ddp = false;
  Run one(c, d.train_images.size(0));
  const EpochStats s1 = train_epoch(one, d);
  c.ddp = true;
  Run ranks(c, d.train_images.size(0));
  const EpochStats sw = train_epoch(ranks, d);
  REQUIRE(one.done());
  REQUIRE(ranks.done());
  CHECK(sw.steps == 2);
  CHECK(sw.samples == 32);

  const int64_t syncs = [&] {
    int64_t n = 0;
    for (const auto& m : ranks.model->modules()) n += dynamic_cast<const nn::SyncBatchNormImpl*>(m.get()) != nullptr;
    return n;
  }();
  CHECK(syncs == (dist::world_size() > 1 ? 8 : 0));  // prep, layer1-3, two in res1 and in res3

  const double state = max_rel_diff(ranks.model->state_dict(), one.model->state_dict());
  const double loss = std::abs(sw.loss - s1.loss) / (1 + std::abs(s1.loss));
  if (dist::rank() == 0)
    std::printf("fashion ddp: world %d, state dict max rel diff %.3g, loss %.6f vs %.6f\n", dist::world_size(), state,
                sw.loss, s1.loss);
  CHECK(state < 1e-4);
  CHECK(loss < 1e-5);
  // A wrong shard (each rank augmenting its images with another rank's crops, or no
  // reduction of the statistics) moves the weights by far more than f32 summation order.
  if (dist::world_size() > 1) CHECK(state > 0);
}
