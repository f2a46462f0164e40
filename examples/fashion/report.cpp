// Baselines, history and pictures of the Fashion-MNIST example: see report.h.
#include "fashion/report.h"

#include <fstream>

#include "common/plot.h"

namespace fashion {

namespace plot = examples::plot;

void History::add(double e, double train, double test, double acc, double secs) {
  epoch.push_back(e);
  train_loss.push_back(train);
  test_loss.push_back(test);
  test_accuracy.push_back(acc);
  seconds.push_back(secs);
}

nlohmann::json History::to_json() const {
  return {{"epoch", epoch},
          {"train_loss", train_loss},
          {"test_loss", test_loss},
          {"test_accuracy", test_accuracy},
          {"seconds", seconds}};
}

History History::from_json(const nlohmann::json& j) {
  History h;
  for (const char* key : {"epoch", "train_loss", "test_loss", "test_accuracy", "seconds"})
    AG_CHECK(j.is_object() && j.contains(key) && j[key].is_array(), ValueError, "fashion: the history has no '", key,
             "' list");
  try {
    j.at("epoch").get_to(h.epoch);
    j.at("train_loss").get_to(h.train_loss);
    j.at("test_loss").get_to(h.test_loss);
    j.at("test_accuracy").get_to(h.test_accuracy);
    j.at("seconds").get_to(h.seconds);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("fashion: a history list holds something other than numbers: ") + e.what());
  }
  const std::size_t n = h.epoch.size();
  AG_CHECK(h.train_loss.size() == n && h.test_loss.size() == n && h.test_accuracy.size() == n && h.seconds.size() == n,
           ValueError, "fashion: the history's lists differ in length");
  return h;
}

std::vector<Baseline> published_baselines() {
  const std::string table = "zalandoresearch/fashion-mnist README, benchmark table";
  return {{"2 Conv+pooling", 0.916, table + " (TensorFlow's CNN tutorial)"},
          {"ResNet18", 0.949, table + " (Kyriakos Efthymiadis; normalization, flips, translation, rotation)"}};
}

std::optional<Baseline> baseline_from_metrics(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    return Baseline{name, j.at("test_accuracy").get<double>(), path};
  } catch (const nlohmann::json::exception&) { return std::nullopt; }
}

std::string baselines_text(const std::vector<Baseline>& baselines) {
  std::string s;
  for (const Baseline& b : baselines)
    s += (s.empty() ? "" : ", ") + b.name + " " + plot::fmt(100 * b.accuracy, 1) + "%";
  return s;
}

void draw_curves(const std::string& out, const std::string& model, const History& h,
                 const std::vector<Baseline>& baselines) {
  if (h.epoch.empty()) return;
  plot::line_chart(
      out + "/loss.png", "Fashion-MNIST " + model + ": loss per epoch",
      {{"training (augmented)", h.epoch, h.train_loss, {31, 119, 180}}, {"test", h.epoch, h.test_loss, {214, 39, 40}}},
      "epoch", "cross-entropy (nats)");
  std::vector<plot::Series> acc{{model + " (test)", h.epoch, {}, {214, 39, 40}}};
  for (double a : h.test_accuracy) acc[0].ys.push_back(100 * a);
  const plot::Color colors[] = {{127, 127, 127}, {44, 160, 44}, {148, 103, 189}, {255, 127, 14}};
  const double first = h.epoch.front(), last = std::max(h.epoch.back(), first + 1);
  for (std::size_t k = 0; k < baselines.size(); ++k)
    acc.push_back(
        {baselines[k].name, {first, last}, {100 * baselines[k].accuracy, 100 * baselines[k].accuracy}, colors[k % 4]});
  plot::linear_chart(out + "/accuracy.png", "Fashion-MNIST test accuracy", acc, "epoch", "accuracy (%)");
}

int64_t draw_misclassified(const std::string& path, const Tensor& images, const std::vector<int64_t>& targets,
                           const std::vector<int64_t>& predicted, const std::vector<std::string>& classes,
                           int64_t count) {
  std::vector<std::vector<double>> pictures;
  std::vector<std::string> captions;
  const auto name = [&](int64_t k) {
    return k >= 0 && k < static_cast<int64_t>(classes.size()) ? classes[static_cast<std::size_t>(k)] : "?";
  };
  for (std::size_t i = 0; i < targets.size() && static_cast<int64_t>(pictures.size()) < count; ++i) {
    if (targets[i] == predicted[i]) continue;
    pictures.push_back(images.select(0, static_cast<int64_t>(i)).to_vector<double>());  // (1, 28, 28)
    captions.push_back("#" + std::to_string(i) + " " + name(targets[i]) + "\nas " + name(predicted[i]));
  }
  if (pictures.empty()) return 0;
  plot::image_grid(path, "Misclassified test images: true class, then the prediction", pictures, 28, 28, captions, 8);
  return static_cast<int64_t>(pictures.size());
}

}  // namespace fashion
