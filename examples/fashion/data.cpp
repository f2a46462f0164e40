// Fashion-MNIST loading, statistics and augmentation: see data.h.
#include "fashion/data.h"

#include <cmath>

namespace fashion {

Dataset load_dataset(const std::string& root) {
  data::FashionMNIST train(root, data::Mode::train), test(root, data::Mode::test);
  Dataset d;
  d.train_images = train.images();
  d.train_targets = train.targets();
  d.test_images = test.images();
  d.test_targets = test.targets();
  d.classes = train.classes();
  std::tie(d.mean, d.std) = pixel_stats(d.train_images);
  return d;
}

std::pair<double, double> pixel_stats(const Tensor& images) {
  AG_CHECK(images.numel() > 0, ValueError, "pixel_stats: no pixels in a tensor of shape ", images.shape());
  // Two passes in double over the f32 values (47 million of them): no f64 copy of the
  // whole set, whose buffers the allocator's cache would keep for the rest of the run.
  const Tensor x = images.to(DType::f32).contiguous();
  const float* p = x.data<float>();
  const int64_t n = x.numel();
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) sum += p[i];
  const double mean = sum / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) sq += (p[i] - mean) * (p[i] - mean);
  return {mean, std::sqrt(sq / static_cast<double>(n))};
}

std::vector<Crop> draw_crops(int64_t batch, int64_t pad, bool flip, Generator& gen) {
  AG_CHECK(batch >= 0 && pad >= 0, ValueError, "draw_crops: batch ", batch, " and pad ", pad, " must be >= 0");
  std::vector<Crop> crops(static_cast<std::size_t>(batch));
  for (Crop& c : crops) {
    c.dy = gen.integer(0, 2 * pad + 1);
    c.dx = gen.integer(0, 2 * pad + 1);
    c.flip = flip && gen.uniform() < 0.5;
  }
  return crops;
}

Tensor crop_flip(const Tensor& images, const std::vector<Crop>& crops, int64_t pad) {
  AG_CHECK(images.dim() == 4 && images.dtype() == DType::f32, ShapeError,
           "crop_flip: expected f32 images (B, C, H, W), got ", images.dtype(), " ", images.shape());
  const int64_t B = images.size(0), C = images.size(1), H = images.size(2), W = images.size(3);
  AG_CHECK(static_cast<int64_t>(crops.size()) == B, ValueError, "crop_flip: ", crops.size(), " crops for ", B,
           " images");
  Tensor src = images.contiguous();
  Tensor out = zeros(images.shape(), DType::f32);  // what falls in the padding stays 0
  const float* in = src.data<float>();
  float* o = out.data<float>();
  for (int64_t b = 0; b < B; ++b) {
    const Crop& c = crops[static_cast<std::size_t>(b)];
    AG_CHECK(c.dy >= 0 && c.dy <= 2 * pad && c.dx >= 0 && c.dx <= 2 * pad, ValueError, "crop_flip: crop (", c.dy, ", ",
             c.dx, ") of image ", b, " is outside [0, ", 2 * pad, "]");
    for (int64_t ch = 0; ch < C; ++ch) {
      const float* plane = in + (b * C + ch) * H * W;
      float* dst = o + (b * C + ch) * H * W;
      for (int64_t y = 0; y < H; ++y) {
        const int64_t sy = y + c.dy - pad;
        if (sy < 0 || sy >= H) continue;
        for (int64_t x = 0; x < W; ++x) {
          const int64_t sx = (c.flip ? W - 1 - x : x) + c.dx - pad;
          if (sx >= 0 && sx < W) dst[y * W + x] = plane[sy * W + sx];
        }
      }
    }
  }
  return out;
}

}  // namespace fashion
