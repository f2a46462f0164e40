#pragma once
/// \file
/// IDX files (LeCun's MNIST format) and the datasets stored in them, as LibTorch's
/// torch::data::datasets::MNIST and torchvision's FashionMNIST:
///
///   Tensor images = data::read_idx("train-images-idx3-ubyte.gz");  // (60000, 28, 28) u8
///   data::FashionMNIST train;                                      // Debian's dataset-fashion-mnist
///   data::FashionMNIST test("/usr/share/datasets/fashion-mnist", data::Mode::test);
///   train.images();   // (60000, 1, 28, 28) f32 in [0, 1]
///   train.targets();  // (60000,) i64 in [0, 9]
///   data::DataLoader loader(train, data::DataLoaderOptions(128).shuffle(true));
///
/// An IDX file is a 4-byte magic (two zero bytes, the element type's code, the number of
/// dims), one big-endian u32 per dim, then the elements row-major and big-endian. The
/// reader takes it plain or gzip-compressed (zlib reads a plain file as it is), checks
/// every part of it, and raises an ag::IOError naming the file for anything wrong.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attograd/data.h"
#include "attograd/tensor.h"

namespace ag::data {

/// Reads one IDX file, plain or gzip-compressed, into a tensor of the shape its header
/// gives. Element types: u8 (0x08) -> DType::u8, i8 (0x09) -> i8, i16 (0x0B) -> i32
/// (attograd has no i16), i32 (0x0C) -> i32, f32 (0x0D) -> f32, f64 (0x0E) -> f64.
/// IOError naming `path` for: a file that cannot be opened or decompressed, a magic
/// whose first two bytes are not zero, an unknown type code, more than kMaxDims dims, a
/// header or data shorter than the header says, bytes after the data, and dims whose
/// product (in bytes) overflows int64.
Tensor read_idx(const std::string& path);

/// Which split of a dataset (LibTorch's MNIST::Mode::kTrain / kTest).
enum class Mode { train, test };

/// MNIST-style image classification from four IDX files in `root`:
/// {train,t10k}-{images-idx3,labels-idx1}-ubyte, each plain or with ".gz" (the plain
/// file wins when both exist). Images become f32 (N, 1, H, W) in [0, 1] (byte / 255),
/// targets i64 (N,). IOError naming the files when either is missing or malformed, when
/// the counts of images and labels differ, when a label is outside [0, classes - 1], or
/// when the images are not (N, height, width) u8. Example i is {images[i] (1, H, W),
/// targets[i] ()}.
class MNIST : public Dataset {
 public:
  /// The 10 digit classes, torchvision's MNIST.classes ("0 - zero", ...).
  static const std::vector<std::string>& digit_classes();

  /// Digits: 28 x 28 images of the 10 digit_classes(), from `root` (LibTorch's MNIST(root, mode)).
  explicit MNIST(const std::string& root, Mode mode = Mode::train);
  /// Any dataset of MNIST's layout: class names (their count bounds the labels) and the
  /// image size the files must have.
  MNIST(const std::string& root, Mode mode, std::vector<std::string> classes, int64_t height = 28, int64_t width = 28)
      : MNIST("MNIST", root, mode, std::move(classes), height, width) {}

  int64_t size() const override { return images_.size(0); }             ///< N
  Example get(int64_t index) const override;                            ///< {(1, H, W) f32, () i64}; IndexError
  const Tensor& images() const { return images_; }                      ///< (N, 1, H, W) f32 in [0, 1]
  const Tensor& targets() const { return targets_; }                    ///< (N,) i64
  const std::vector<std::string>& classes() const { return classes_; }  ///< names, by label
  bool is_train() const { return mode_ == Mode::train; }                ///< LibTorch's is_train()
  /// The two files read: {images, labels}.
  const std::array<std::string, 2>& files() const { return files_; }

 protected:
  /// As above, with the class name that errors start with.
  MNIST(const char* name, const std::string& root, Mode mode, std::vector<std::string> classes, int64_t height,
        int64_t width);

 private:
  Mode mode_;
  std::vector<std::string> classes_;
  std::array<std::string, 2> files_;
  Tensor images_, targets_;
};

/// Zalando's Fashion-MNIST (same layout as MNIST: 60000 training and 10000 test images of
/// 28 x 28, 10 classes), by default from Debian's dataset-fashion-mnist package.
class FashionMNIST : public MNIST {
 public:
  /// Where Debian's dataset-fashion-mnist installs the files.
  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";
  /// torchvision's FashionMNIST.classes: "T-shirt/top", "Trouser", ..., "Ankle boot".
  static const std::vector<std::string>& fashion_classes();
  /// The split `mode` of the files in `root`.
  explicit FashionMNIST(const std::string& root = kDefaultRoot, Mode mode = Mode::train);
};

}  // namespace ag::data
