#pragma once
// What the Fashion-MNIST example prints and draws beside its scores: the per-epoch
// history, the baselines (the logistic and MLP models of this program, and the published
// figures of the dataset's benchmark table, each with its source), and the pictures:
// loss and accuracy curves, the confusion matrix, a grid of misclassified test images.
#include <attograd/attograd.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fashion {

using namespace ag;

// One line per completed epoch.
struct History {
  std::vector<double> epoch, train_loss, test_loss, test_accuracy, seconds;
  void add(double e, double train, double test, double acc, double secs);
  nlohmann::json to_json() const;
  static History from_json(const nlohmann::json& j);  // ValueError naming a missing key
};

struct Baseline {
  std::string name;
  double accuracy;     // test-set fraction right
  std::string source;  // where the figure comes from
};

// The published figures: the dataset's own benchmark table (zalandoresearch/fashion-mnist
// README, "Benchmark"): 2 Conv+pooling 0.916 (TensorFlow's tutorial network), ResNet18
// 0.949 (with normalization, flips, translation and rotation).
std::vector<Baseline> published_baselines();

// A program's own baseline from its metrics.json (test_accuracy and model), or nothing
// when the file is absent or unreadable.
std::optional<Baseline> baseline_from_metrics(const std::string& path, const std::string& name);

// "logistic 84.2%, MLP 89.1%, 2 Conv+pooling 91.6%, ResNet18 94.9%"
std::string baselines_text(const std::vector<Baseline>& baselines);

// loss.png (training and test loss per epoch) and accuracy.png (test accuracy per epoch,
// each baseline a flat line) in `out`.
void draw_curves(const std::string& out, const std::string& model, const History& h,
                 const std::vector<Baseline>& baselines);

// The first `count` misclassified test images, (N, 1, 28, 28) in [0, 1], with their true
// and predicted class names; how many it drew (none: no picture).
int64_t draw_misclassified(const std::string& path, const Tensor& images, const std::vector<int64_t>& targets,
                           const std::vector<int64_t>& predicted, const std::vector<std::string>& classes,
                           int64_t count = 32);

}  // namespace fashion
