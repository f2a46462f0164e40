// fashion: trains a classifier of Zalando's Fashion-MNIST clothing images (Debian's
// dataset-fashion-mnist) and reports its test accuracy beside baselines: logistic
// regression and an MLP trained by this same program, and the published figures of the
// dataset's benchmark table.
//
//   build/examples/fashion                            # defaults: the residual CNN (README: time, accuracy)
//   build/examples/fashion --baselines                # also trains logistic regression and the MLP first
//   build/examples/fashion --model mlp --out runs/fashion-mlp
//   build/examples/fashion --precision bf16           # the forward under ag::autocast
//   build/examples/fashion --resume                   # continue from <out>/checkpoint.safetensors
//   tools/mpirun -np 2 build/examples/fashion --ddp   # data parallel, SyncBatchNorm across the ranks
//
// Writes to --out: metrics.json, checkpoint.safetensors (after every epoch), model.safetensors
// (the state dict, PyTorch's names), loss.png, accuracy.png, confusion.png, misclassified.png;
// with --baselines the same for each baseline in <out>/logistic and <out>/mlp.
#include <CLI/CLI.hpp>
#include <attograd/log.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/plot.h"
#include "common/provenance.h"
#include "fashion/report.h"
#include "fashion/trainer.h"

using namespace fashion;
namespace fs = std::filesystem;
namespace plot = examples::plot;
using Clock = std::chrono::steady_clock;

#ifndef FASHION_RESULTS_DIR
#define FASHION_RESULTS_DIR ""
#endif

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const Clock::time_point program_start = Clock::now();

// What one model's training produced.
struct Outcome {
  std::string label;
  History history;
  EvalResult eval;
  double train_seconds = 0, eval_seconds = 0;
  int64_t samples = 0, steps = 0, parameters = 0;
};

// One epoch's progress bar on a terminal (\r-redrawn), a log line every 100 steps otherwise.
class Progress {
 public:
  Progress(bool lead, int64_t epochs) : tty_(lead && isatty(STDERR_FILENO)), lead_(lead), epochs_(epochs) {}
  void start(int64_t epoch) { epoch_ = epoch, t0_ = Clock::now(), smooth_ = -1, done_ = 0; }
  void step(int64_t k, int64_t batches, double loss, int64_t batch) {
    smooth_ = smooth_ < 0 ? loss : 0.95 * smooth_ + 0.05 * loss;
    ++done_;
    if (!lead_) return;
    const double secs = seconds_since(t0_), rate = static_cast<double>(done_ * batch) / std::max(secs, 1e-9);
    const double eta = secs / static_cast<double>(done_) * static_cast<double>(batches - k - 1);
    if (tty_) {
      const int width = 24, filled = static_cast<int>(width * (k + 1) / batches);
      std::fprintf(stderr, "\repoch %2lld/%lld [%s%s] %6lld/%lld  loss %.4f  %5.0f img/s  ETA %3.0fs ",
                   static_cast<long long>(epoch_ + 1), static_cast<long long>(epochs_),
                   std::string(static_cast<std::size_t>(filled), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                   static_cast<long long>((k + 1) * batch), static_cast<long long>(batches * batch), smooth_, rate,
                   eta);
      if (k + 1 == batches) std::fprintf(stderr, "\n");
    } else if ((k + 1) % 100 == 0) {
      log().info("epoch {}/{} step {}/{} loss {:.4f} {:.0f} img/s ETA {:.0f}s", epoch_ + 1, epochs_, k + 1, batches,
                 smooth_, rate, eta);
    }
  }
  void end() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  bool tty_, lead_;
  int64_t epochs_, epoch_ = 0, done_ = 0;
  double smooth_ = -1;
  Clock::time_point t0_;
};

// Trains `c` to its last step (or from the checkpoint in `out` with resume), evaluating
// on the test set after every epoch (rank 0), and writes the checkpoint after each.
Outcome train_model(const Config& c, const Dataset& d, const std::string& out, bool resume,
                    const std::vector<Baseline>& baselines) {
  const bool lead = dist::rank() == 0;
  const std::string ckpt = out + "/checkpoint.safetensors";
  Run run(c, d.train_images.size(0));
  Outcome o;
  o.label = model_name(c.model.kind());
  o.parameters = run.model->num_parameters();
  if (resume) {
    Metadata extra = load_checkpoint(ckpt, *run.model, &run.opt, &run.sched);
    const auto h = extra.find("history");
    AG_CHECK(h != extra.end(), ValueError, "fashion: ", ckpt, " has no 'history' metadata entry");
    o.history = History::from_json(nlohmann::json::parse(h->second));
    log().info("resumed from {} at step {} (epoch {})", ckpt, run.steps_done(), run.epoch() + 1);
  }
  const int64_t epochs = (run.total_steps + run.batches_per_epoch - 1) / run.batches_per_epoch;
  if (lead)
    log().info("{}: {} parameters, {} steps of {} images ({} epochs{}), lr {} (OneCycle), weight decay {}{}", o.label,
               o.parameters, run.total_steps, c.batch, epochs, c.augment ? ", random crops and flips" : "", c.lr,
               c.weight_decay, c.ddp ? ", data parallel over " + std::to_string(dist::world_size()) + " ranks" : "");
  Progress progress(lead, epochs);
  while (!run.done()) {
    const int64_t epoch = run.epoch();
    progress.start(epoch);
    EpochStats s = train_epoch(run, d, [&](int64_t k, int64_t n, double loss) { progress.step(k, n, loss, c.batch); });
    o.train_seconds += s.seconds, o.samples += s.samples, o.steps += s.steps;
    if (!lead) continue;  // rank 0 evaluates and writes for every rank (they hold one model)
    const auto te = Clock::now();
    o.eval = evaluate(run.model, d.test_images, d.test_targets, d.mean, d.std, 10, c.precision, c.eval_batch);
    o.eval_seconds += seconds_since(te);
    const double at = static_cast<double>(run.steps_done()) / static_cast<double>(run.batches_per_epoch);
    o.history.add(at, s.loss, o.eval.loss, o.eval.accuracy, s.seconds);
    std::cout << "epoch " << plot::fmt(at, at == std::floor(at) ? 0 : 2) << "/" << epochs << "  train loss "
              << plot::fmt(s.loss, 4) << "  test loss " << plot::fmt(o.eval.loss, 4) << "  test accuracy "
              << plot::fmt(100 * o.eval.accuracy, 2) << "%  (" << baselines_text(baselines) << ")  "
              << plot::fmt(s.seconds, 1) << " s, " << plot::fmt(static_cast<double>(s.samples) / s.seconds, 0)
              << " img/s" << std::endl;
    save_checkpoint(ckpt, *run.model, &run.opt, &run.sched, {{"history", o.history.to_json().dump()}});
  }
  progress.end();
  if (lead && o.history.epoch.empty())  // nothing left to train: evaluate what was loaded
    o.eval = evaluate(run.model, d.test_images, d.test_targets, d.mean, d.std, 10, c.precision, c.eval_batch);
  if (lead) nn::save(*run.model, out + "/model.safetensors");
  return o;
}

nlohmann::json metrics_json(const Outcome& o, const Config& c, const std::vector<Baseline>& baselines,
                            const std::string& command, int threads) {
  nlohmann::json base = nlohmann::json::array();
  for (const Baseline& b : baselines)
    base.push_back({{"name", b.name}, {"test_accuracy", b.accuracy}, {"source", b.source}});
  return {{"model", o.label},
          {"test_accuracy", o.eval.accuracy},
          {"test_loss", o.eval.loss},
          {"train_seconds", o.train_seconds},
          {"wall_seconds", seconds_since(program_start)},  // the program so far: loading, training, evaluation
          {"eval_seconds", o.eval_seconds},
          {"train_images_per_s", static_cast<double>(o.samples) / std::max(o.train_seconds, 1e-9)},
          {"steps", o.steps},
          {"parameters", o.parameters},
          {"history", o.history.to_json()},
          {"confusion", o.eval.confusion},
          {"baselines", base},
          {"world_size", dist::world_size()},
          {"cpu", examples::cpu_name()},
          {"date", examples::utc_now()},  // when the run ended
          {"command", command},
          {"provenance", examples::provenance(command)},
          {"config",
           {{"arch", arch_name(c.model.arch())},
            {"widths", c.model.widths()},
            {"head", c.model.head() == Head::gap ? "gap" : "flatten"},
            {"zero_init_residual", c.model.zero_init_residual()},
            {"blocks", c.model.blocks()},
            {"hidden", c.model.hidden()},
            {"epochs", c.epochs},
            {"steps", c.steps},
            {"batch", c.batch},
            {"lr", c.lr},
            {"weight_decay", c.weight_decay},
            {"label_smoothing", c.label_smoothing},
            {"augment", c.augment},
            {"pad", c.pad},
            {"seed", c.seed},
            {"precision", std::string(name(c.precision))},
            {"ddp", c.ddp},
            {"threads", threads}}}};
}

// metrics.json and the pictures of one model in `out` (rank 0).
void write_outputs(const std::string& out, const Outcome& o, const Config& c, const Dataset& d,
                   const std::vector<Baseline>& baselines, const std::string& command, int threads) {
  std::ofstream(out + "/metrics.json") << metrics_json(o, c, baselines, command, threads).dump(2) << "\n";
  // Pictures last: a drawing failure (it throws) leaves the model and metrics written.
  draw_curves(out, o.label, o.history, baselines);
  plot::confusion_matrix(out + "/confusion.png",
                         "Fashion-MNIST " + o.label + ": test confusion (" + plot::fmt(100 * o.eval.accuracy, 2) + "%)",
                         o.eval.confusion, d.classes);
  draw_misclassified(out + "/misclassified.png", d.test_images, d.test_targets.to_vector<int64_t>(), o.eval.predicted,
                     d.classes);
}

}  // namespace

int main(int argc, char** argv) {
  dist::InitGuard world(&argc, &argv);  // a world of one without mpirun
  std::string command = argv[0];        // for metrics.json: the run that wrote it
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  Config c = default_config(ModelKind::cnn);
  std::string model = "cnn", precision = "f32", augment = "auto", root = data::FashionMNIST::kDefaultRoot,
              out = "runs/fashion";
  std::vector<int64_t> widths = c.model.widths(), blocks = c.model.blocks();
  int64_t hidden = c.model.hidden();
  std::string head = "gap", arch = "resnet9";
  bool zero_init_residual = false;
  double lr = 0, label_smoothing = -1;
  int threads = 2;
  bool baselines_flag = false, resume = false;
  CLI::App app{"Train a classifier of Fashion-MNIST's clothing images and compare it with baselines."};
  app.option_defaults()->always_capture_default();
  app.footer("Example: attograd-fashion --baselines --out runs/fashion");
  app.add_option("--model", model, "cnn (a residual network), mlp, or logistic (regression)")
      ->check(CLI::IsMember({"cnn", "mlp", "logistic"}));
  app.add_option("--epochs", c.epochs, "passes over the 60000 training images")->check(CLI::PositiveNumber);
  app.add_option("--steps", c.steps, "optimizer steps in all, overriding --epochs (0: epochs x batches per epoch)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch-size", c.batch, "images per step (all ranks together)")->check(CLI::PositiveNumber);
  app.add_option("--lr", lr, "OneCycleLR's peak learning rate (0: 0.2 for cnn, 0.05 for mlp and logistic)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--weight-decay", c.weight_decay, "on conv and Linear weights")->check(CLI::NonNegativeNumber);
  app.add_option("--label-smoothing", label_smoothing,
                 "cross-entropy's label smoothing (-1: 0.1 for cnn, 0 for mlp and logistic)")
      ->check(CLI::Range(-1.0, 0.99));
  app.add_option("--arch", arch, "cnn: resnet9 (Page's ResNet-9, narrowed) or resnet (torchvision's BasicBlocks)")
      ->check(CLI::IsMember({"resnet9", "resnet"}));
  app.add_option("--widths", widths, "cnn: channels of the three stages")->delimiter(',');
  app.add_option("--blocks", blocks, "resnet: residual blocks per stage")->delimiter(',');
  app.add_option("--head", head, "resnet: gap (global average pool, then fc) or flatten (fc reads every position)")
      ->check(CLI::IsMember({"gap", "flatten"}));
  app.add_flag("--zero-init-residual", zero_init_residual,
               "resnet: each residual block's last BatchNorm starts at weight 0 (the block starts as the identity)");
  app.add_option("--hidden", hidden, "mlp: width of the two hidden layers")->check(CLI::PositiveNumber);
  app.add_option("--augment", augment, "random crops and flips: auto (cnn only), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--pad", c.pad, "padding of the random crops (pixels)")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", c.seed, "seed for initialization, batch order and augmentation");
  app.add_option("--threads", threads, "threads for OpenBLAS and attograd")->check(CLI::PositiveNumber);
  app.add_option("--precision", precision, "f32, or bf16: the forward under ag::autocast, f32 master weights")
      ->check(CLI::IsMember({"f32", "bf16"}));
  app.add_option("--data", root, "folder of the four IDX files (plain or .gz)");
  app.add_option("--out", out, "output folder");
  app.add_flag("--ddp", c.ddp, "data parallel over the mpirun ranks (nn::DistributedDataParallel, SyncBatchNorm)");
  app.add_flag("--baselines", baselines_flag,
               "first train logistic regression and the MLP (in <out>/logistic, <out>/mlp)");
  app.add_flag("--resume", resume, "continue from <out>/checkpoint.safetensors");
  CLI11_PARSE(app, argc, argv);

  const bool lead = dist::rank() == 0;
  try {
    const ModelKind kind = model_kind(model);
    const Config defaults = default_config(kind);
    c.model = ModelOptions(kind)
                  .arch(arch_of(arch))
                  .widths(widths)
                  .blocks(blocks)
                  .hidden(hidden)
                  .zero_init_residual(zero_init_residual)
                  .head(head == "gap" ? Head::gap : Head::flatten);
    c.lr = lr > 0 ? lr : defaults.lr;
    c.label_smoothing = label_smoothing >= 0 ? label_smoothing : defaults.label_smoothing;
    c.augment = augment == "auto" ? defaults.augment : augment == "on";
    c.precision = examples::precision_from_name(precision);
    set_num_threads(threads);
    if (!lead) log().set_level(spdlog::level::warn);
    if (lead) fs::create_directories(out);
    const auto tl = Clock::now();
    const Dataset d = load_dataset(root);
    log().info("Fashion-MNIST from {}: {} training and {} test images, pixel mean {:.4f} std {:.4f} ({:.1f} s)", root,
               d.train_images.size(0), d.test_images.size(0), d.mean, d.std, seconds_since(tl));

    // The baselines: trained here with --baselines, else this program's committed results.
    std::vector<Baseline> baselines;
    for (ModelKind b : {ModelKind::logistic, ModelKind::mlp}) {
      if (b == kind) continue;
      const std::string name = b == ModelKind::logistic ? "logistic" : "MLP", sub = out + "/" + model_name(b);
      if (baselines_flag) {
        Config bc = default_config(b);
        bc.epochs = c.epochs, bc.steps = c.steps, bc.batch = c.batch, bc.seed = c.seed, bc.precision = c.precision;
        bc.ddp = c.ddp;
        if (lead) fs::create_directories(sub);
        Outcome o = train_model(bc, d, sub, false, published_baselines());
        if (lead) write_outputs(sub, o, bc, d, published_baselines(), command + " (baseline)", threads);
        baselines.push_back({name, o.eval.accuracy, sub + "/metrics.json (this run)"});
      } else if (auto r =
                     baseline_from_metrics(std::string(FASHION_RESULTS_DIR) + "/" + model_name(b) + ".json", name)) {
        baselines.push_back(*r);
      }
    }
    for (const Baseline& b : published_baselines()) baselines.push_back(b);

    Outcome o = train_model(c, d, out, resume, baselines);
    if (!lead) return 0;
    std::cout << "\n"
              << o.label << ": test accuracy " << plot::fmt(100 * o.eval.accuracy, 2) << "%, test loss "
              << plot::fmt(o.eval.loss, 4) << " after " << o.steps << " steps in " << plot::fmt(o.train_seconds, 1)
              << " s (" << plot::fmt(static_cast<double>(o.samples) / std::max(o.train_seconds, 1e-9), 0)
              << " images/s, " << threads << " threads, " << examples::cpu_name() << ", precision " << precision
              << ")\n"
              << "baselines (test accuracy):\n";
    for (const Baseline& b : baselines)
      std::cout << "  " << b.name << std::string(16 - std::min<std::size_t>(b.name.size(), 15), ' ')
                << plot::fmt(100 * b.accuracy, 1) << "%   " << b.source << "\n";
    write_outputs(out, o, c, d, baselines, command, threads);
    std::cout << "  pictures: " << out << "/{loss,accuracy,confusion,misclassified}.png\n  model:    " << out
              << "/model.safetensors (metrics.json, checkpoint.safetensors beside it)\n";
  } catch (const std::exception& e) {
    if (dist::world_size() > 1) dist::abort(std::string("fashion: ") + e.what());  // ends every rank
    std::cerr << "fashion: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
