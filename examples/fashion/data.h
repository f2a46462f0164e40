#pragma once
// Fashion-MNIST for the example: the two splits read through ag::data::FashionMNIST, the
// training set's pixel statistics (inputs are normalized by them), and the augmentation
// of training batches: random crops of the zero-padded image and horizontal flips, drawn
// from a seeded ag::Generator (torchvision's RandomCrop(28, padding) + RandomHorizontalFlip).
// Legend: N images, B batch, H = W = 28 pixels, pixel values in [0, 1] before normalization.
#include <attograd/attograd.h>
#include <attograd/data.h>

#include <string>
#include <vector>

namespace fashion {

using namespace ag;

struct Dataset {
  Tensor train_images, train_targets;  // (N, 1, H, W) f32 in [0, 1], (N,) i64
  Tensor test_images, test_targets;    // (10000, 1, H, W), (10000,)
  std::vector<std::string> classes;    // the 10 names, by label
  double mean = 0, std = 1;            // over every training pixel: inputs are (x - mean) / std
};

// Both splits from `root` (IOError naming the files when they are missing or malformed),
// with the training set's mean and standard deviation.
Dataset load_dataset(const std::string& root);

// The mean and (population) standard deviation of every element of `images`.
std::pair<double, double> pixel_stats(const Tensor& images);

// (x - mean) / std, as one op (x in [0, 1]).
inline Tensor normalize(const Tensor& x, double mean, double std) { return (x - mean) / std; }

// One image's augmentation: the crop's top-left corner in the padded image (each in
// [0, 2 pad]) and whether it is then mirrored left to right.
struct Crop {
  int64_t dy = 0, dx = 0;
  bool flip = false;
};

// For each image of a batch, a crop drawn uniformly (dy, dx in [0, 2 pad]) and a flip
// with probability 1/2 (flip = false: no flip ever; pad = 0: no shift).
std::vector<Crop> draw_crops(int64_t batch, int64_t pad, bool flip, Generator& gen);

// images (B, C, H, W) contiguous f32 -> (B, C, H, W): image b padded by `pad` zeros on
// every side (black, the background), cut at crops[b] back to H x W, then mirrored when
// crops[b].flip. out[b, c, y, x] = in[b, c, y + dy - pad, x' + dx - pad] with x' = x, or
// W - 1 - x when flipped, and 0 outside the image.
Tensor crop_flip(const Tensor& images, const std::vector<Crop>& crops, int64_t pad);

}  // namespace fashion
