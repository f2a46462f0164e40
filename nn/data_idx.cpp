// IDX files and the MNIST-style datasets: see attograd/data/idx.h.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "attograd/data/idx.h"
#include "attograd/factory.h"
#include "attograd/ops.h"

namespace ag::data {

namespace {

// ---- reading through zlib ------------------------------------------------------------

// A gzFile that closes itself; gzread decompresses a gzip stream and copies any other
// file as it is (zlib's "transparent" mode), so one path reads both kinds.
struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

class IdxReader {
 public:
  explicit IdxReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail("cannot open it: it is a folder");
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) fail("cannot open it: ", errno != 0 ? std::strerror(errno) : "out of memory");
    gzbuffer(file_.get(), 1 << 17);  // 128 KiB reads instead of zlib's 8 KiB
  }

  // Up to n bytes into dst; fewer only at the end of the file. A damaged gzip stream
  // (bad CRC, bad deflate data) is an IOError with zlib's message.
  std::size_t read(void* dst, std::size_t n) {
    auto* p = static_cast<unsigned char*>(dst);
    std::size_t got = 0;
    while (got < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 30));
      const int r = gzread(file_.get(), p + got, chunk);
      if (r < 0) {
        int code = 0;
        const char* msg = gzerror(file_.get(), &code);
        fail("cannot decompress it: ", msg != nullptr ? msg : "zlib error");
      }
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    // A gzip stream cut short reads as a short file (zlib's Z_BUF_ERROR, "unexpected end
    // of file"), which the caller reports as truncated; any other error is damage.
    if (got < n) {
      int code = 0;
      const char* msg = gzerror(file_.get(), &code);
      if (code != Z_OK && code != Z_BUF_ERROR) fail("cannot decompress it: ", msg);
    }
    return got;
  }

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError(detail::cat("read_idx: ", path_, ": ", args...));
  }

 private:
  std::string path_;
  GzFile file_;
};

uint32_t big_endian_u32(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

// One IDX element type: its code, its size in the file, the dtype it becomes.
struct IdxType {
  unsigned char code;
  std::size_t bytes;
  DType dtype;
  const char* name;
};
constexpr IdxType kTypes[] = {
    {0x08, 1, DType::u8, "u8"},   {0x09, 1, DType::i8, "i8"},   {0x0B, 2, DType::i32, "i16"},
    {0x0C, 4, DType::i32, "i32"}, {0x0D, 4, DType::f32, "f32"}, {0x0E, 8, DType::f64, "f64"},
};

// The big-endian elements of `raw` (n of `t.bytes` each) into `out`'s contiguous storage.
void convert(const std::vector<unsigned char>& raw, const IdxType& t, int64_t n, const Tensor& out) {
  if (n == 0) return;  // an empty tensor: raw.data() may be null, which memcpy must not get
  const unsigned char* s = raw.data();
  auto u16 = [](const unsigned char* b) { return static_cast<uint16_t>((b[0] << 8) | b[1]); };
  auto u64 = [](const unsigned char* b) { return (uint64_t{big_endian_u32(b)} << 32) | big_endian_u32(b + 4); };
  switch (t.code) {
    case 0x08:
    case 0x09: std::memcpy(out.raw_data(), s, static_cast<std::size_t>(n)); break;
    case 0x0B: {  // i16 widened to i32
      int32_t* d = out.data<int32_t>();
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int16_t>(u16(s + 2 * i));
      break;
    }
    case 0x0C:
    case 0x0D: {  // 4-byte elements: the bits as they are, in native order
      auto* d = static_cast<uint32_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) d[i] = big_endian_u32(s + 4 * i);
      break;
    }
    case 0x0E: {
      auto* d = static_cast<uint64_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) d[i] = u64(s + 8 * i);
      break;
    }
    default: AG_ASSERT(false, "read_idx: unhandled type code ", int(t.code));
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  IdxReader in(path);
  // ---- header: 0, 0, type code, ndims; then ndims big-endian u32 sizes
  unsigned char magic[4];
  const std::size_t got = in.read(magic, 4);
  if (got < 4) in.fail("truncated header: the file has ", got, " bytes, an IDX header needs at least 4");
  if (magic[0] != 0 || magic[1] != 0)
    in.fail("not an IDX file: its magic number starts with bytes ", int(magic[0]), ", ", int(magic[1]),
            " instead of 0, 0");
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes)
    if (t.code == magic[2]) type = &t;
  if (type == nullptr)
    in.fail("unknown IDX element type code 0x", "0123456789ABCDEF"[magic[2] >> 4], "0123456789ABCDEF"[magic[2] & 15],
            " (known: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64)");
  const int ndims = magic[3];
  if (ndims > kMaxDims) in.fail(ndims, " dims; at most ", kMaxDims, " are supported");
  std::vector<unsigned char> dims_raw(static_cast<std::size_t>(4 * ndims));
  if (const std::size_t n = in.read(dims_raw.data(), dims_raw.size()); n < dims_raw.size())
    in.fail("truncated header: ", ndims, " dims need ", dims_raw.size(), " bytes after the magic number, the file has ",
            n);
  Shape shape;
  for (int d = 0; d < ndims; ++d) shape.push_back(big_endian_u32(dims_raw.data() + 4 * d));
  // The checks every tensor gets (numel, and strides with zero dims counted as 1: a zero
  // dim empties the tensor, its other dims still make strides), as the file's IOError.
  int64_t numel = 0, bytes = 0;
  try {
    numel = ag::numel(shape, "read_idx");
    (void)contiguous_strides(shape, "read_idx");
  } catch (const ShapeError&) {
    in.fail("dims ", shape, " of ", type->name, " elements hold more bytes than fit in int64");
  }
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(type->bytes), &bytes))
    in.fail("dims ", shape, " of ", type->name, " elements hold more bytes than fit in int64");

  // ---- data: read in chunks, so that a header claiming far more than the file holds
  // fails on the short read instead of allocating all of it first
  std::vector<unsigned char> raw;
  constexpr int64_t kChunk = int64_t{1} << 24;
  while (static_cast<int64_t>(raw.size()) < bytes) {
    const std::size_t want = static_cast<std::size_t>(std::min(kChunk, bytes - static_cast<int64_t>(raw.size())));
    const std::size_t at = raw.size();
    raw.resize(at + want);
    const std::size_t n = in.read(raw.data() + at, want);
    if (n < want)
      in.fail("truncated data: shape ", shape, " of ", type->name, " needs ", bytes,
              " bytes after the header, the file has ", at + n);
  }
  unsigned char extra;
  if (in.read(&extra, 1) != 0)
    in.fail("bytes after the data: shape ", shape, " of ", type->name, " ends after ", bytes,
            " bytes of data (a wrong header, or two files joined?)");
  Tensor out = empty(shape, type->dtype);  // contiguous
  convert(raw, *type, numel, out);
  return out;
}

// ---- MNIST, FashionMNIST ---------------------------------------------------------------

namespace {

// <root>/<stem>, or <root>/<stem>.gz when only that exists; IOError naming both otherwise.
std::string locate(const char* who, const std::string& root, const std::string& stem) {
  namespace fs = std::filesystem;
  const fs::path plain = fs::path(root) / stem;
  fs::path gz = plain;
  gz += ".gz";
  std::error_code ec;
  if (fs::exists(plain, ec)) return plain.string();
  if (fs::exists(gz, ec)) return gz.string();
  const bool fashion = who == std::string("FashionMNIST");
  throw IOError(detail::cat(who, ": neither ", plain.string(), " nor ", gz.string(), " exists",
                            fashion ? " (Debian's dataset-fashion-mnist installs them in " : "",
                            fashion ? FashionMNIST::kDefaultRoot : "", fashion ? ")" : ""));
}

}  // namespace

const std::vector<std::string>& MNIST::digit_classes() {
  static const std::vector<std::string> names{"0 - zero", "1 - one", "2 - two",   "3 - three", "4 - four",
                                              "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"};
  return names;
}

MNIST::MNIST(const std::string& root, Mode mode) : MNIST(root, mode, digit_classes()) {}

MNIST::MNIST(const char* name, const std::string& root, Mode mode, std::vector<std::string> classes, int64_t height,
             int64_t width)
    : mode_(mode), classes_(std::move(classes)) {
  AG_CHECK(!classes_.empty() && height > 0 && width > 0, ValueError, name, ": ", classes_.size(),
           " classes and images of ", height, " x ", width, "; need at least one class and a positive size");
  const std::string split = mode == Mode::train ? "train" : "t10k";
  files_ = {locate(name, root, split + "-images-idx3-ubyte"), locate(name, root, split + "-labels-idx1-ubyte")};
  const std::string& image_file = files_[0];
  const std::string& label_file = files_[1];
  Tensor images = read_idx(image_file);  // (N, H, W) u8
  Tensor labels = read_idx(label_file);  // (N,) u8
  AG_CHECK(images.dtype() == DType::u8 && images.dim() == 3 && images.size(1) == height && images.size(2) == width,
           IOError, name, ": ", image_file, " holds ", images.dtype(), " of shape ", images.shape(),
           "; expected u8 of (N, ", height, ", ", width, ")");
  AG_CHECK(labels.dtype() == DType::u8 && labels.dim() == 1, IOError, name, ": ", label_file, " holds ", labels.dtype(),
           " of shape ", labels.shape(), "; expected u8 of (N,)");
  AG_CHECK(images.size(0) == labels.size(0), IOError, name, ": ", image_file, " has ", images.size(0), " images but ",
           label_file, " has ", labels.size(0), " labels");
  const auto* l = labels.data<uint8_t>();
  const int64_t n_classes = static_cast<int64_t>(classes_.size());
  for (int64_t i = 0; i < labels.size(0); ++i)
    AG_CHECK(l[i] < n_classes, IOError, name, ": ", label_file, ": label ", int(l[i]), " of example ", i,
             " is outside [0, ", n_classes - 1, "]");
  // u8 -> f32 / 255: the [0, 1] scaling of torchvision's ToTensor and LibTorch's MNIST.
  images_ = images.to(DType::f32).div_(255.0).unsqueeze(1);  // (N, 1, H, W), one buffer
  targets_ = labels.to(DType::i64);                          // (N,)
}

Example MNIST::get(int64_t index) const {
  AG_CHECK(index >= 0 && index < size(), IndexError, "MNIST.get: index ", index, " is out of range for ", size(),
           " examples");
  return {images_.select(0, index), targets_.select(0, index)};
}

const std::vector<std::string>& FashionMNIST::fashion_classes() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

FashionMNIST::FashionMNIST(const std::string& root, Mode mode)
    : MNIST("FashionMNIST", root, mode, fashion_classes(), 28, 28) {}

}  // namespace ag::data
