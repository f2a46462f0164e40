// Training and evaluation for the Fashion-MNIST example: see trainer.h.
#include "fashion/trainer.h"

#include <algorithm>
#include <chrono>

namespace fashion {

Config default_config(ModelKind kind) {
  Config c;
  c.model = ModelOptions(kind);
  if (kind != ModelKind::cnn) {
    c.augment = false;
    c.lr = 0.05;
    c.label_smoothing = 0.0;
  }
  return c;
}

std::vector<optim::ParamGroup<optim::SGDOptions>> param_groups(const Classifier& model, const Config& c) {
  auto options = [&](double wd) { return optim::SGDOptions(c.lr).momentum(0.9).nesterov(true).weight_decay(wd); };
  optim::ParamGroup<optim::SGDOptions> decay{{}, options(c.weight_decay)}, no_decay{{}, options(0.0)};
  // Conv kernels (4-D) and Linear weights (2-D) decay; biases and BatchNorm's weight and
  // bias are 1-D: decaying them only fights the normalization.
  for (auto& [name, p] : model->named_parameters()) (p.dim() >= 2 ? decay : no_decay).params.emplace_back(name, p);
  return {decay, no_decay};
}

namespace {

// The ranks a run shares its batches with: all of ag::dist's with ddp, else this process
// alone (under mpirun without --ddp every rank trains the whole batch).
int64_t world(const Config& c) { return c.ddp ? dist::world_size() : 1; }
int64_t rank(const Config& c) { return c.ddp ? dist::rank() : 0; }

int64_t checked_batches(const Config& c, int64_t train_size) {
  AG_CHECK(c.batch > 0 && c.batch % world(c) == 0, ValueError, "fashion: --batch-size ", c.batch,
           " must be a positive multiple of the ", world(c), " ranks");
  AG_CHECK(c.epochs > 0 || c.steps > 0, ValueError, "fashion: --epochs ", c.epochs, " and --steps ", c.steps,
           ": one of them must be positive");
  const int64_t n = train_size / c.batch;
  AG_CHECK(n > 0, ValueError, "fashion: ", train_size, " training images do not fill one batch of ", c.batch);
  return n;
}

}  // namespace

Run::Run(const Config& c, int64_t train_size)
    : config(c),
      batches_per_epoch(checked_batches(c, train_size)),
      total_steps(c.steps > 0 ? c.steps : c.epochs * batches_per_epoch),
      model([&] {
        manual_seed(c.seed);
        Classifier m(c.model);
        // Data parallel: every BatchNorm normalizes with the global batch's statistics
        // (PyTorch's SyncBatchNorm.convert_sync_batchnorm; state-dict keys unchanged).
        if (world(c) > 1) nn::convert_sync_batchnorm(m);
        return m;
      }()),
      ddp(c.ddp ? std::make_unique<nn::DistributedDataParallel>(model.ptr()) : nullptr),
      opt(param_groups(model, c)),
      sched(opt, optim::OneCycleLROptions(c.lr, total_steps).pct_start(0.25).div_factor(25).final_div_factor(40)),
      // Every rank draws the same permutation per epoch and takes its strided shard, so
      // the ranks' k-th batches together are the k-th global batch of one process.
      sampler(std::make_shared<data::DistributedRandomSampler>(train_size, world(c), rank(c),
                                                               /*allow_duplicates=*/false, c.seed)) {}

Generator augmentation_generator(uint64_t seed, int64_t epoch) {
  return Generator(seed * 7919 + 1 + static_cast<uint64_t>(epoch) * 1000003);
}

std::vector<Crop> rank_crops(const std::vector<Crop>& global, int64_t world, int64_t rank) {
  std::vector<Crop> mine;
  for (std::size_t i = static_cast<std::size_t>(rank); i < global.size(); i += static_cast<std::size_t>(world))
    mine.push_back(global[i]);
  return mine;
}

EpochStats train_epoch(Run& r, const Dataset& d, const StepCallback& on_step, int64_t max_steps) {
  const Config& c = r.config;
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t W = world(c), local = c.batch / W;
  const int64_t step0 = r.steps_done(), epoch = r.epoch(), first = step0 % r.batches_per_epoch;
  const int64_t end = first + std::min({r.batches_per_epoch - first, r.total_steps - step0, max_steps});
  r.model->train();
  r.sampler->set_epoch(epoch);
  const std::vector<int64_t> order = r.sampler->indices();  // this rank's shard, global-batch order
  Generator gen = augmentation_generator(c.seed, epoch);
  for (int64_t k = 0; k < first && c.augment; ++k) draw_crops(c.batch, c.pad, true, gen);  // resumed mid-epoch
  EpochStats s;
  double loss_sum = 0;
  for (int64_t k = first; k < end; ++k) {
    std::vector<int64_t> idx(order.begin() + k * local, order.begin() + (k + 1) * local);
    Tensor index = Tensor::from_vector(idx);
    Tensor x = d.train_images.index_select(0, index);   // (B / W, 1, 28, 28) in [0, 1]
    Tensor y = d.train_targets.index_select(0, index);  // (B / W,)
    if (c.augment) x = crop_flip(x, rank_crops(draw_crops(c.batch, c.pad, true, gen), W, rank(c)), c.pad);
    x = normalize(x, d.mean, d.std);
    Tensor loss;
    {
      const autocast amp = examples::autocast_for(c.precision);  // the forward and the loss only
      CrossEntropyOptions ce;
      ce.label_smoothing = c.label_smoothing;
      loss = cross_entropy(r.model(x), y, ce);  // mean over this rank's images; DDP averages ranks
    }
    r.opt.zero_grad();
    loss.backward();
    r.opt.step();
    r.sched.step();
    const double v = loss.item<double>();
    loss_sum += v;
    ++s.steps;
    if (on_step) on_step(k, r.batches_per_epoch, v);
  }
  Tensor mean_loss = full({}, s.steps > 0 ? loss_sum / static_cast<double>(s.steps) : 0.0, DType::f64);
  if (W > 1) dist::all_reduce(mean_loss, dist::ReduceOp::AVG);  // every rank's mean: the global one
  s.loss = mean_loss.item<double>();
  s.samples = s.steps * c.batch;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

std::vector<std::vector<int64_t>> confusion_matrix(const std::vector<int64_t>& targets,
                                                   const std::vector<int64_t>& predicted, int64_t classes) {
  AG_CHECK(targets.size() == predicted.size(), ValueError, "confusion_matrix: ", targets.size(), " targets but ",
           predicted.size(), " predictions");
  std::vector<std::vector<int64_t>> m(static_cast<std::size_t>(classes), std::vector<int64_t>(classes, 0));
  for (std::size_t i = 0; i < targets.size(); ++i) {
    AG_CHECK(targets[i] >= 0 && targets[i] < classes && predicted[i] >= 0 && predicted[i] < classes, IndexError,
             "confusion_matrix: pair ", i, " (target ", targets[i], ", predicted ", predicted[i], ") is outside [0, ",
             classes, ")");
    ++m[static_cast<std::size_t>(targets[i])][static_cast<std::size_t>(predicted[i])];
  }
  return m;
}

EvalResult evaluate(Classifier& model, const Tensor& images, const Tensor& targets, double mean, double std,
                    int64_t classes, DType precision, int64_t batch) {
  AG_CHECK(batch > 0, ValueError, "evaluate: batch ", batch, " must be positive");
  NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const int64_t n = images.size(0);
  EvalResult r;
  double total = 0;
  CrossEntropyOptions sum;
  sum.reduction = Reduction::sum;
  for (int64_t i = 0; i < n; i += batch) {
    const int64_t b = std::min(batch, n - i);
    Tensor logits;
    {
      const autocast amp = examples::autocast_for(precision);
      logits = model(normalize(images.narrow(0, i, b), mean, std)).to(DType::f32);  // (b, K)
    }
    Tensor y = targets.narrow(0, i, b);
    total += cross_entropy(logits, y, sum).item<double>();
    for (int64_t p : argmax(logits, 1).to_vector<int64_t>()) r.predicted.push_back(p);
  }
  model->train(was_training);
  const std::vector<int64_t> want = targets.to_vector<int64_t>();
  r.confusion = confusion_matrix(want, r.predicted, classes);
  int64_t right = 0;
  for (int64_t k = 0; k < classes; ++k) right += r.confusion[static_cast<std::size_t>(k)][static_cast<std::size_t>(k)];
  r.loss = n > 0 ? total / static_cast<double>(n) : 0.0;
  r.accuracy = n > 0 ? static_cast<double>(right) / static_cast<double>(n) : 0.0;
  return r;
}

}  // namespace fashion
