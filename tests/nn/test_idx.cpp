// ag::data::read_idx (IDX files, plain and gzip: every element type, shapes, each
// malformed-file error) and the MNIST-style datasets (MNIST, FashionMNIST) on small files
// written here, and on Debian's Fashion-MNIST files when they are installed.
#include <attograd/attograd.h>
#include <attograd/data.h>
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

// An IDX file's bytes: magic (0, 0, code, dims.size()), big-endian u32 dims, then `data`
// (already big-endian).
std::string idx_bytes(unsigned char code, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string b{'\0', '\0', static_cast<char>(code), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b += static_cast<char>((d >> shift) & 0xFF);
  return b + data;
}

// Big-endian bytes of each value's bit pattern (sizeof(T) bytes each).
template <class T>
std::string big_endian(const std::vector<T>& values) {
  std::string out;
  for (T v : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (std::size_t i = sizeof(T); i-- > 0;) out += static_cast<char>(raw[i]);  // x86 is little-endian
  }
  return out;
}

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::string io_error(const std::string& path) {
  return error_of<IOError>([&] { data::read_idx(path); });
}

// A (n, h, w) u8 image file whose pixel (i, y, x) is (i * 7 + y * 3 + x) % 256, and a u8
// label file, as MNIST's files (gzip-compressed when gz).
void write_split(const std::string& dir, const std::string& split, int64_t n, const std::vector<uint8_t>& labels,
                 bool gz, uint32_t h = 28, uint32_t w = 28) {
  std::string pixels;
  for (int64_t i = 0; i < n; ++i)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) pixels += static_cast<char>((i * 7 + y * 3 + x) % 256);
  const std::string images = idx_bytes(0x08, {static_cast<uint32_t>(n), h, w}, pixels);
  const std::string lab =
      idx_bytes(0x08, {static_cast<uint32_t>(labels.size())}, std::string(labels.begin(), labels.end()));
  const std::string stem = dir + "/" + split;
  if (gz) {
    write_gzip(stem + "-images-idx3-ubyte.gz", images);
    write_gzip(stem + "-labels-idx1-ubyte.gz", lab);
  } else {
    test_util::write_bytes(stem + "-images-idx3-ubyte", images);
    test_util::write_bytes(stem + "-labels-idx1-ubyte", lab);
  }
}

}  // namespace

TEST_CASE("read_idx: u8 images, plain and gzip, give the same tensor") {
  const std::string dir = test_util::tmp_dir("test_idx", "u8");
  std::string pixels;
  for (int i = 0; i < 12; ++i) pixels += static_cast<char>(i * 20);  // 0, 20, ..., 220
  const std::string bytes = idx_bytes(0x08, {2, 3, 2}, pixels);
  test_util::write_bytes(dir + "/a-idx3-ubyte", bytes);
  write_gzip(dir + "/a-idx3-ubyte.gz", bytes);
  for (const std::string name : {"a-idx3-ubyte", "a-idx3-ubyte.gz"}) {
    CAPTURE(name);
    Tensor t = data::read_idx(dir + "/" + name);
    CHECK(t.dtype() == DType::u8);
    CHECK(t.shape() == Shape{2, 3, 2});
    CHECK(t.to_vector<int>() == std::vector<int>{0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220});
  }
  // The gzip file really is compressed (not a copy that only the plain path reads).
  CHECK(test_util::read_bytes(dir + "/a-idx3-ubyte.gz").substr(0, 2) == "\x1f\x8b");
}

TEST_CASE("read_idx: every element type, big-endian, to its dtype") {
  const std::string dir = test_util::tmp_dir("test_idx", "types");
  auto read = [&](unsigned char code, const std::vector<uint32_t>& dims, const std::string& data) {
    const std::string path = dir + "/t.gz";
    write_gzip(path, idx_bytes(code, dims, data));
    return data::read_idx(path);
  };
  Tensor i8 = read(0x09, {4}, big_endian<int8_t>({-128, -1, 0, 127}));
  CHECK(i8.dtype() == DType::i8);
  CHECK(i8.to_vector<int>() == std::vector<int>{-128, -1, 0, 127});
  // i16 widens to i32 (attograd has no i16), keeping the sign.
  Tensor i16 = read(0x0B, {2, 2}, big_endian<int16_t>({-32768, -2, 300, 32767}));
  CHECK(i16.dtype() == DType::i32);
  CHECK(i16.shape() == Shape{2, 2});
  CHECK(i16.to_vector<int>() == std::vector<int>{-32768, -2, 300, 32767});
  Tensor i32 = read(0x0C, {3}, big_endian<int32_t>({INT32_MIN, -70000, INT32_MAX}));
  CHECK(i32.dtype() == DType::i32);
  CHECK(i32.to_vector<int64_t>() == std::vector<int64_t>{INT32_MIN, -70000, INT32_MAX});
  Tensor f32 = read(0x0D, {1, 3}, big_endian<float>({1.5f, -0.25f, 3.0e38f}));
  CHECK(f32.dtype() == DType::f32);
  CHECK(f32.to_vector<float>() == std::vector<float>{1.5f, -0.25f, 3.0e38f});
  Tensor f64 = read(0x0E, {2}, big_endian<double>({-1e300, 0.1}));
  CHECK(f64.dtype() == DType::f64);
  CHECK(f64.to_vector<double>() == std::vector<double>{-1e300, 0.1});
  // A zero-sized dim: no data bytes, an empty tensor of that shape.
  Tensor empty = read(0x08, {0, 28, 28}, "");
  CHECK(empty.shape() == Shape{0, 28, 28});
  CHECK(empty.numel() == 0);
}

TEST_CASE("read_idx: a malformed file is an IOError naming it and what is wrong") {
  const std::string dir = test_util::tmp_dir("test_idx", "errors");
  auto plain = [&](const std::string& name, const std::string& bytes) {
    test_util::write_bytes(dir + "/" + name, bytes);
    return io_error(dir + "/" + name);
  };
  const std::string good = idx_bytes(0x08, {2, 2}, "\x01\x02\x03\x04");

  std::string e = io_error(dir + "/missing-idx1-ubyte.gz");
  CHECK(contains(e, dir + "/missing-idx1-ubyte.gz"));
  CHECK(contains(e, "No such file"));
  e = io_error(dir);
  CHECK(contains(e, "is a folder"));

  // The magic: two zero bytes, then a known type code.
  e = plain("magic", std::string("\x00\x01\x08\x01", 4) + std::string(4, '\0'));
  CHECK(contains(e, dir + "/magic"));
  CHECK(contains(e, "not an IDX file"));
  CHECK(contains(plain("text", "hello world, not IDX"), "not an IDX file"));
  e = plain("code", idx_bytes(0x0A, {1}, "\x01"));
  CHECK(contains(e, "unknown IDX element type code 0x0A"));
  CHECK(contains(plain("dims", idx_bytes(0x08, std::vector<uint32_t>(65, 1), "\x01")), "65 dims; at most 64"));

  // Truncated: the magic, the dims, the data; in a plain file and in a gzip stream.
  CHECK(contains(plain("short", std::string("\x00\x00", 2)), "truncated header: the file has 2 bytes"));
  CHECK(contains(plain("nodims", good.substr(0, 8)), "truncated header: 2 dims need 8 bytes"));
  e = plain("data", good.substr(0, good.size() - 1));
  CHECK(contains(e, "truncated data: shape [2, 2] of u8 needs 4 bytes after the header, the file has 3"));
  write_gzip(dir + "/data.gz", good.substr(0, good.size() - 1));
  CHECK(contains(io_error(dir + "/data.gz"), "truncated data"));
  // A gzip stream cut short: zlib's "unexpected end of file" reads as truncated data.
  std::string big;
  for (int i = 0; i < 40000; ++i) big += static_cast<char>((i * 2654435761u) >> 24);  // barely compressible
  write_gzip(dir + "/cut.gz", idx_bytes(0x08, {200, 200}, big));
  const std::string gz = test_util::read_bytes(dir + "/cut.gz");
  test_util::write_bytes(dir + "/cut.gz", gz.substr(0, gz.size() / 2));
  e = io_error(dir + "/cut.gz");
  CHECK(contains(e, dir + "/cut.gz"));
  CHECK(contains(e, "truncated data"));
  // A damaged deflate stream: zlib's own message.
  std::string bad = gz;
  for (std::size_t i = 20; i < 60; ++i) bad[i] = static_cast<char>(~bad[i]);
  test_util::write_bytes(dir + "/bad.gz", bad);
  CHECK(contains(io_error(dir + "/bad.gz"), "cannot decompress it"));

  // Bytes after the data: a wrong header or two files joined.
  CHECK(contains(plain("long", good + "\x05"), "bytes after the data"));

  // Dims whose byte count overflows int64, and a header claiming 2^40 bytes in a small
  // file (a short read, not an attempt to allocate a terabyte first).
  e = plain("overflow", idx_bytes(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, ""));
  CHECK(contains(e, "more bytes than fit in int64"));
  // The same with a zero dim: no elements, but strides that would still overflow (found
  // by fuzz_idx: a ShapeError from the tensor instead of the file's IOError).
  e = plain("overflow-empty", idx_bytes(0x08, {0xFFFFFFFF, 0xFFFFFFFF, 0, 0xFFFFFFFF}, ""));
  CHECK(contains(e, "more bytes than fit in int64"));
  e = plain("huge", idx_bytes(0x08, {1u << 20, 1u << 20}, "abc"));
  CHECK(contains(e, "truncated data: shape [1048576, 1048576] of u8 needs 1099511627776 bytes"));
}

TEST_CASE("MNIST: images (N, 1, 28, 28) f32 in [0, 1], targets i64, either file kind") {
  const std::string dir = test_util::tmp_dir("test_idx", "mnist");
  write_split(dir, "train", 3, {7, 0, 9}, /*gz=*/true);
  write_split(dir, "t10k", 2, {1, 2}, /*gz=*/false);
  data::MNIST train(dir);
  CHECK(train.is_train());
  CHECK(train.size() == 3);
  CHECK(train.images().shape() == Shape{3, 1, 28, 28});
  CHECK(train.images().dtype() == DType::f32);
  CHECK(train.targets().dtype() == DType::i64);
  CHECK(train.targets().to_vector<int64_t>() == std::vector<int64_t>{7, 0, 9});
  CHECK(train.files()[0] == dir + "/train-images-idx3-ubyte.gz");
  // pixel (i, y, x) = (7 i + 3 y + x) % 256, over 255
  auto px = train.images().to_vector<float>();
  CHECK(px[0] == 0.0f);
  CHECK(px[1 * 784 + 2 * 28 + 5] == doctest::Approx((7 + 6 + 5) / 255.0));
  CHECK(px[2 * 784 + 27 * 28 + 27] == doctest::Approx(((14 + 81 + 27) % 256) / 255.0));
  data::Example ex = train.get(2);
  CHECK(ex.data.shape() == Shape{1, 28, 28});
  CHECK(ex.target.item<int64_t>() == 9);
  CHECK(contains(error_of<IndexError>([&] { train.get(3); }), "index 3 is out of range for 3"));
  CHECK(train.classes().size() == 10);

  data::MNIST test(dir, data::Mode::test);
  CHECK_FALSE(test.is_train());
  CHECK(test.files()[1] == dir + "/t10k-labels-idx1-ubyte");
  CHECK(test.targets().to_vector<int64_t>() == std::vector<int64_t>{1, 2});
  // A DataLoader batches it like any dataset.
  data::DataLoader loader(train, data::DataLoaderOptions(2));
  auto it = loader.begin();
  CHECK(it->data.shape() == Shape{2, 1, 28, 28});
  CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{7, 0});

  // The plain file wins when both exist.
  write_split(dir, "train", 1, {4}, /*gz=*/false);
  CHECK(data::MNIST(dir).targets().to_vector<int64_t>() == std::vector<int64_t>{4});
}

TEST_CASE("MNIST, FashionMNIST: files that do not fit together are IOErrors naming them") {
  const std::string dir = test_util::tmp_dir("test_idx", "mismatch");
  std::string e = error_of<IOError>([&] { data::FashionMNIST(dir, data::Mode::test); });
  CHECK(contains(
      e, "FashionMNIST: neither " + dir + "/t10k-images-idx3-ubyte nor " + dir + "/t10k-images-idx3-ubyte.gz exists"));
  CHECK(contains(e, "dataset-fashion-mnist"));

  write_split(dir, "train", 3, {1, 2}, true);  // 3 images, 2 labels
  e = error_of<IOError>([&] { data::FashionMNIST{dir}; });
  CHECK(contains(e, "FashionMNIST: " + dir + "/train-images-idx3-ubyte.gz has 3 images but " + dir +
                        "/train-labels-idx1-ubyte.gz has 2 labels"));
  write_split(dir, "train", 2, {3, 10}, true);  // label 10 of 10 classes
  e = error_of<IOError>([&] { data::FashionMNIST{dir}; });
  CHECK(contains(e, "label 10 of example 1 is outside [0, 9]"));
  write_split(dir, "train", 2, {3, 4}, true, 27, 28);
  e = error_of<IOError>([&] { data::FashionMNIST{dir}; });
  CHECK(contains(e, "holds u8 of shape [2, 27, 28]; expected u8 of (N, 28, 28)"));
  // Labels stored as i32 instead of u8.
  write_split(dir, "train", 2, {3, 4}, true);
  write_gzip(dir + "/train-labels-idx1-ubyte.gz", idx_bytes(0x0C, {2}, big_endian<int32_t>({3, 4})));
  e = error_of<IOError>([&] { data::FashionMNIST{dir}; });
  CHECK(contains(e, "train-labels-idx1-ubyte.gz holds i32 of shape [2]; expected u8 of (N,)"));
  // Another image size and class count through the general constructor.
  write_split(dir, "train", 2, {0, 2}, false, 5, 4);
  data::MNIST small(dir, data::Mode::train, {"a", "b", "c"}, 5, 4);
  CHECK(small.images().shape() == Shape{2, 1, 5, 4});
  CHECK(contains(error_of<IOError>([&] {
                   data::MNIST(dir, data::Mode::train, {"a", "b"}, 5, 4);
                 }),
                 "label 2 of example 1 is outside [0, 1]"));
}

TEST_CASE("FashionMNIST: Debian's dataset-fashion-mnist files") {
  const std::string root = data::FashionMNIST::kDefaultRoot;
  if (!std::filesystem::exists(root + "/train-labels-idx1-ubyte.gz")) {
    MESSAGE("skipped: " << root << " is absent (apt-get install dataset-fashion-mnist)");
    return;
  }
  data::FashionMNIST train;
  data::FashionMNIST test(root, data::Mode::test);
  CHECK(train.size() == 60000);
  CHECK(test.size() == 10000);
  CHECK(train.images().shape() == Shape{60000, 1, 28, 28});
  // The first labels of each split, and the training pixels' mean (0.2860, the figure
  // torchvision users normalize with).
  CHECK(train.targets().narrow(0, 0, 10).to_vector<int64_t>() == std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5});
  CHECK(test.targets().narrow(0, 0, 10).to_vector<int64_t>() == std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7});
  CHECK(train.images().mean().item<double>() == doctest::Approx(0.28604).epsilon(1e-4));
  CHECK(train.classes()[9] == "Ankle boot");
}
