// The Fashion-MNIST example end to end on tiny synthetic IDX files written here: loading
// and pixel statistics, the augmentation against hand-computed pixels, a few training
// steps of each model lowering the loss, evaluation and the confusion matrix, a run
// resumed from a checkpoint mid-epoch matching the uninterrupted one bit for bit, and the
// two pictures the example adds to common/plot.h.
#include <attograd/attograd.h>
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/plot.h"
#include "fashion/report.h"
#include "fashion/trainer.h"
#include "test_util.h"

using namespace fashion;
using test_util::contains;
using test_util::error_of;
namespace plot = examples::plot;

namespace {

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::string header(unsigned char dims, const std::vector<uint32_t>& sizes) {
  std::string b{'\0', '\0', '\x08', static_cast<char>(dims)};
  for (uint32_t d : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) b += static_cast<char>((d >> shift) & 0xFF);
  return b;
}

// n images of class i % 10: a 4 x 12 bar over faint noise whose row (2 to 20) and
// brightness both depend on the class, so that every model learns them in a few steps
// (the CNN, whose global average pool forgets where the bar is, by its brightness).
void write_split(const std::string& dir, const std::string& split, uint32_t n, uint64_t seed) {
  Generator gen(seed);
  std::string pixels, labels;
  for (uint32_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(i % 10);
    labels += static_cast<char>(k);
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) {
        const bool bar = y >= 2 + 2 * k && y < 8 + 2 * k && x >= 6 && x < 22;
        const int period = 2 + k % 5, along = k < 5 ? x : y;  // stripes: vertical, or horizontal
        const bool on = bar && along % period < (period + 1) / 2;
        pixels += static_cast<char>(on ? 200 + gen.integer(0, 56) : gen.integer(0, 40));
      }
  }
  write_gzip(dir + "/" + split + "-images-idx3-ubyte.gz", header(3, {n, 28, 28}) + pixels);
  write_gzip(dir + "/" + split + "-labels-idx1-ubyte.gz", header(1, {n}) + labels);
}

const Dataset& tiny() {
  static const Dataset d = [] {
    const std::string dir = test_util::tmp_dir("test_fashion", "data");
    write_split(dir, "train", 320, 1);
    write_split(dir, "t10k", 60, 2);
    return load_dataset(dir);
  }();
  return d;
}

Config tiny_config(ModelKind kind) {
  Config c = default_config(kind);
  c.model.widths({8, 16, 16});
  c.model.hidden(32);
  c.batch = 32;  // 10 batches per epoch
  c.epochs = 2;
  // 20 steps: at the program's peak lr 0.2 the CNN's BatchNorm running statistics trail
  // weights that move that fast, and its eval-mode loss says little after so few steps.
  if (kind == ModelKind::cnn) c.lr = 0.05;
  return c;
}

double train_loss(Run& r) {
  const Dataset& d = tiny();
  return evaluate(r.model, d.train_images, d.train_targets, d.mean, d.std, 10).loss;
}

}  // namespace

TEST_CASE("load_dataset reads both splits and the training pixels' statistics") {
  const Dataset& d = tiny();
  CHECK(d.train_images.shape() == Shape{320, 1, 28, 28});
  CHECK(d.test_targets.to_vector<int64_t>()[13] == 3);
  CHECK(d.classes[0] == "T-shirt/top");
  // Statistics over every pixel, against a plain loop in double.
  const auto px = d.train_images.to_vector<double>();
  double sum = 0, sq = 0;
  for (double v : px) sum += v;
  const double mean = sum / static_cast<double>(px.size());
  for (double v : px) sq += (v - mean) * (v - mean);
  CHECK(d.mean == doctest::Approx(mean).epsilon(1e-12));
  CHECK(d.std == doctest::Approx(std::sqrt(sq / static_cast<double>(px.size()))).epsilon(1e-12));
  CHECK(contains(error_of<IOError>([] { load_dataset(AG_TMP_DIR "/test_fashion/none"); }), "neither"));
}

TEST_CASE("crop_flip: padded crops and mirror images, pixel by pixel") {
  // One 4 x 4 image holding 1..16 row by row; pad 1.
  Tensor img = arange(1, 17, 1, DType::f32).reshape({1, 1, 4, 4});
  auto out = [&](Crop c) { return crop_flip(img, {c}, 1).to_vector<float>(); };
  // (dy, dx) = (1, 1) is the image itself; no flip.
  CHECK(out({1, 1, false}) == img.to_vector<float>());
  // (0, 0): shifted down and right by one, zeros entering at the top and left.
  CHECK(out({0, 0, false}) == std::vector<float>{0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11});
  // (2, 1) then mirrored: rows 1..3 then a padded row, each read right to left.
  CHECK(out({2, 1, true}) == std::vector<float>{8, 7, 6, 5, 12, 11, 10, 9, 16, 15, 14, 13, 0, 0, 0, 0});
  // (1, 2) mirrored: out[y][x] = in[y][4 - x], so column 0 is padding.
  CHECK(out({1, 2, true}) == std::vector<float>{0, 4, 3, 2, 0, 8, 7, 6, 0, 12, 11, 10, 0, 16, 15, 14});
  CHECK(contains(error_of<ValueError>([&] { crop_flip(img, {{3, 0, false}}, 1); }), "outside [0, 2]"));
  CHECK(contains(error_of<ValueError>([&] { crop_flip(img, {}, 1); }), "0 crops for 1 images"));

  // Draws: every offset of [0, 2 pad] appears, about half flipped, and a seed repeats them.
  Generator g1(5), g2(5);
  auto a = draw_crops(2000, 2, true, g1), b = draw_crops(2000, 2, true, g2);
  int flips = 0, seen[5] = {};
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK((a[i].dy == b[i].dy && a[i].dx == b[i].dx && a[i].flip == b[i].flip));
    REQUIRE((a[i].dy >= 0 && a[i].dy <= 4 && a[i].dx >= 0 && a[i].dx <= 4));
    ++seen[a[i].dy], flips += a[i].flip;
  }
  for (int s : seen) CHECK(s > 300);
  CHECK(flips > 900);
  CHECK(flips < 1100);
  for (const Crop& c : draw_crops(50, 2, false, g1)) CHECK_FALSE(c.flip);
}

TEST_CASE("two epochs of each model lower its training loss") {
  for (ModelKind kind : {ModelKind::logistic, ModelKind::mlp, ModelKind::cnn}) {
    CAPTURE(model_name(kind));
    Run r(tiny_config(kind), tiny().train_images.size(0));
    CHECK(r.batches_per_epoch == 10);
    CHECK(r.total_steps == 20);
    const double before = train_loss(r);
    EpochStats s = train_epoch(r, tiny());
    CHECK(s.steps == 10);
    CHECK(s.samples == 320);
    CHECK(r.epoch() == 1);
    EpochStats s2 = train_epoch(r, tiny());
    CHECK(r.done());
    CHECK(s2.loss < s.loss);  // the training loss of epoch 2 below epoch 1's
    CHECK(train_loss(r) < 0.8 * before);
    CHECK(std::isfinite(s.loss));
  }
  // The default CNN, ResNet-9: prep, three conv stacks pooling 28 -> 14 -> 7 -> 3, two
  // residual stacks, fc on the global max.
  Classifier r9(ModelOptions(ModelKind::cnn).widths({4, 8, 16}));
  auto sd9 = r9->state_dict();
  for (const char* key :
       {"prep.0.weight", "prep.1.running_mean", "layer1.0.weight", "res1.3.weight", "res1.4.num_batches_tracked",
        "layer2.1.bias", "layer3.0.weight", "res3.4.running_var", "fc.weight"})
    CHECK_MESSAGE(sd9.contains(key), std::string(key));
  CHECK(sd9.at("prep.0.weight").shape() == Shape{2, 1, 3, 3});  // c0 = c1 / 2
  CHECK(sd9.at("res3.3.weight").shape() == Shape{16, 16, 3, 3});
  CHECK(sd9.at("fc.weight").shape() == Shape{10, 16});
  CHECK(r9->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  CHECK(ModelOptions().arch() == Arch::resnet9);
  CHECK(Classifier(ModelOptions())->num_parameters() == 412666);  // the README's figure
  CHECK(contains(error_of<ValueError>([] { Classifier(ModelOptions().widths({8, 16})); }), "three positive"));
  CHECK(arch_of("resnet") == Arch::resnet);
  CHECK(contains(error_of<ValueError>([] { arch_of("vgg"); }), "--arch must be resnet9 or resnet, got 'vgg'"));
  // Its residual stacks add to their input: zeroing res1's last BatchNorm makes res1 add
  // relu(0 + 0) = 0, so the net equals itself without the stack.
  {
    NoGradGuard no_grad;
    r9->eval();
    Tensor x = randn({2, 1, 28, 28});
    Tensor h = r9->layer1(r9->prep(x));
    for (auto& [name, p] : r9->named_parameters())
      if (name == "res1.4.weight" || name == "res1.4.bias") p.zero_();
    CHECK(test_util::max_abs_diff(r9->res1(h), zeros_like(h)) == 0.0);
  }

  // The resnet arch's layers carry torchvision's names.
  Classifier cnn(ModelOptions(ModelKind::cnn).arch(Arch::resnet).widths({4, 8, 8}));
  auto sd = cnn->state_dict();
  for (const char* key : {"conv1.weight", "bn1.running_mean", "layer1.0.conv2.weight", "layer2.0.downsample.0.weight",
                          "layer3.0.downsample.1.running_var", "fc.bias"})
    CHECK_MESSAGE(sd.contains(key), std::string(key));
  CHECK(cnn->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  // The flatten head reads all 7 x 7 positions of the last stage's 8 channels.
  Classifier flat(ModelOptions(ModelKind::cnn).arch(Arch::resnet).widths({4, 8, 8}).head(Head::flatten));
  CHECK(flat->fc->weight.shape() == Shape{10, 8 * 7 * 7});
  CHECK(flat->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  // zero_init_residual: a block whose shape does not change starts as the identity on
  // non-negative inputs (relu(0 + x) = x).
  Classifier zi(ModelOptions(ModelKind::cnn).arch(Arch::resnet).widths({4, 8, 8}).zero_init_residual(true));
  BasicBlock first = zi->blocks.front();
  CHECK(first->bn2->weight.abs().sum().item<double>() == 0.0);
  Tensor x = rand({2, 4, 28, 28});
  CHECK(test_util::max_abs_diff(first(x), x) == 0.0);
  CHECK(cnn->blocks.front()->bn2->weight.sum().item<double>() == 4.0);  // the default: ones
  CHECK(contains(error_of<ShapeError>([&] { cnn->forward(zeros({2, 28, 28})); }), "expected images (B, 1, 28, 28)"));
}

TEST_CASE("evaluate: accuracy and the confusion matrix agree with the predictions") {
  auto m = confusion_matrix({0, 0, 1, 2, 2, 2}, {0, 1, 1, 2, 0, 2}, 3);
  CHECK(m == std::vector<std::vector<int64_t>>{{1, 1, 0}, {0, 1, 0}, {1, 0, 2}});
  CHECK(contains(error_of<IndexError>([] { confusion_matrix({0, 3}, {0, 0}, 3); }), "pair 1 (target 3"));
  CHECK(contains(error_of<ValueError>([] { confusion_matrix({0}, {}, 3); }), "1 targets but 0 predictions"));

  const Dataset& d = tiny();
  Run r(tiny_config(ModelKind::logistic), d.train_images.size(0));
  train_epoch(r, d);
  EvalResult e = evaluate(r.model, d.test_images, d.test_targets, d.mean, d.std, 10, DType::f32, 7);  // ragged batches
  REQUIRE(e.predicted.size() == 60);
  const auto want = d.test_targets.to_vector<int64_t>();
  int64_t right = 0, total = 0;
  for (std::size_t i = 0; i < want.size(); ++i) right += want[i] == e.predicted[i];
  for (const auto& row : e.confusion)
    for (int64_t v : row) total += v;
  CHECK(total == 60);
  CHECK(e.accuracy == doctest::Approx(static_cast<double>(right) / 60));
  CHECK(e.accuracy > 0.5);  // the bars are easy after one epoch
  // The same figures in one batch of everything.
  EvalResult whole = evaluate(r.model, d.test_images, d.test_targets, d.mean, d.std, 10, DType::f32, 1000);
  CHECK(whole.predicted == e.predicted);
  CHECK(whole.loss == doctest::Approx(e.loss).epsilon(1e-6));
}

TEST_CASE("a run resumed from a checkpoint mid-epoch matches the uninterrupted run") {
  const Dataset& d = tiny();
  const std::string path = test_util::tmp_dir("test_fashion", "resume") + "/checkpoint.safetensors";
  const Config c = tiny_config(ModelKind::cnn);
  Run straight(c, d.train_images.size(0));
  while (!straight.done()) train_epoch(straight, d);

  Run first(c, d.train_images.size(0));
  train_epoch(first, d);         // epoch 1, whole
  train_epoch(first, d, {}, 3);  // 3 steps into epoch 2
  REQUIRE(first.steps_done() == 13);
  save_checkpoint(path, *first.model, &first.opt, &first.sched, {{"history", "{}"}});
  Run resumed(c, d.train_images.size(0));
  load_checkpoint(path, *resumed.model, &resumed.opt, &resumed.sched);
  CHECK(resumed.steps_done() == 13);
  CHECK(resumed.epoch() == 1);
  while (!resumed.done()) train_epoch(resumed, d);
  // Weights, BatchNorm running statistics and momentum buffers all equal, bit for bit.
  CHECK(test_util::map_diff(straight.model->state_dict(), resumed.model->state_dict()) == "");
  CHECK(straight.opt.lr() == resumed.opt.lr());
}

TEST_CASE("the confusion matrix and the image grid are PNGs; bad input is a ValueError") {
  namespace fs = std::filesystem;
  const std::string dir = test_util::tmp_dir("test_fashion", "pictures");
  const std::vector<std::string> names{"T-shirt/top", "Trouser", "Ankle boot"};
  plot::confusion_matrix(dir + "/confusion.png", "Confusion", {{50, 2, 0}, {3, 40, 1}, {0, 0, 47}}, names);
  CHECK(fs::file_size(dir + "/confusion.png") > 1000);
  CHECK(contains(error_of<ValueError>([&] {
                   plot::confusion_matrix(dir + "/x.png", "x", {{1, 2}, {3}}, {"a", "b"});
                 }),
                 "row 1 has 1 counts, not 2"));
  CHECK(contains(error_of<ValueError>([&] { plot::confusion_matrix(dir + "/x.png", "x", {{-1}}, {"a"}); }),
                 "negative count -1"));

  const Dataset& d = tiny();
  std::vector<int64_t> targets = d.test_targets.to_vector<int64_t>(), predicted = targets;
  predicted[3] = (predicted[3] + 1) % 10, predicted[7] = (predicted[7] + 4) % 10;
  CHECK(draw_misclassified(dir + "/wrong.png", d.test_images, targets, predicted, d.classes) == 2);
  CHECK(fs::file_size(dir + "/wrong.png") > 1000);
  CHECK(draw_misclassified(dir + "/none.png", d.test_images, targets, targets, d.classes) == 0);
  CHECK_FALSE(fs::exists(dir + "/none.png"));
  CHECK(contains(error_of<ValueError>([&] { plot::image_grid(dir + "/x.png", "x", {{0.5}}, 2, 2, {"a"}, 4); }),
                 "image 0 has 1 values, not 2 x 2"));
  CHECK(contains(error_of<ValueError>([&] { plot::image_grid(dir + "/x.png", "x", {{NAN}}, 1, 1, {"a"}, 4); }),
                 "NaN in image 0"));
  CHECK_FALSE(fs::exists(dir + "/x.png"));
}
