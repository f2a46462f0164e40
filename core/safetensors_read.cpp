// safetensors reading: the header length and the header, then each tensor's bytes into
// its own storage (pread, no mmap). Every size the header claims is checked against the
// real file size before anything is allocated (safetensors_header.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "safetensors_internal.h"

namespace ag {

namespace safetensors_detail {

namespace {

constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;  // the reference implementation's cap

}  // namespace

void Reader::read_at(int fd, void* dst, uint64_t n, uint64_t offset, const char* what) const {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, std::min<uint64_t>(n, uint64_t{1} << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("cannot read ", what, " (", errno_text(errno), ")");
    if (got == 0) fail("unexpected end of file while reading ", what);
    p += got, n -= static_cast<uint64_t>(got), offset += static_cast<uint64_t>(got);
  }
}

SafetensorsFile Reader::read() const {
  Fd f(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) fail("cannot open file (", errno_text(errno), ")");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail("cannot stat file (", errno_text(errno), ")");
  if (!S_ISREG(st.st_mode)) fail("not a regular file");
  const uint64_t file_size = uint64_t(st.st_size);

  if (file_size < 8) fail("file is ", file_size, " bytes, shorter than the 8-byte header length");
  unsigned char len_bytes[8];
  read_at(f.fd, len_bytes, 8, 0, "the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > kMaxHeaderBytes)
    fail("header length ", n, " exceeds the 100 MB limit; the file is corrupt or not safetensors");
  if (n > file_size - 8)
    fail("header length ", n, " is larger than the rest of the file (", file_size - 8,
         " bytes); the file is truncated or not safetensors");
  const uint64_t data_start = 8 + n, data_size = file_size - data_start;

  std::string text(n, '\0');
  read_at(f.fd, text.data(), n, 8, "the header");
  const json header = parse_header(text);

  SafetensorsFile out;
  const std::vector<Entry> entries = layout(header, data_size, out.metadata);

  for (const Entry& e : entries) {
    const uint64_t nbytes = e.end - e.begin;  // checked against the file size above
    auto storage = std::make_shared<Storage>(nbytes);
    if (nbytes > 0) read_at(f.fd, storage->data(), nbytes, data_start + e.begin, "tensor data");
    if (e.dtype == DType::b8) {
      const auto* b = static_cast<const unsigned char*>(storage->data());
      for (uint64_t i = 0; i < nbytes; ++i)
        if (b[i] > 1) fail("tensor ", squoted(e.name), ": BOOL element ", i, " is ", int(b[i]), ", not 0 or 1");
    }
    out.tensors.insert(e.name, Tensor(storage, e.shape, contiguous_strides(e.shape), 0, e.dtype));
  }
  return out;
}

}  // namespace safetensors_detail

// ---- public API ----------------------------------------------------------------

SafetensorsFile read_safetensors(const std::string& path) { return safetensors_detail::Reader(path).read(); }

TensorMap load_safetensors(const std::string& path) { return read_safetensors(path).tensors; }

Metadata load_safetensors_metadata(const std::string& path) { return read_safetensors(path).metadata; }

}  // namespace ag
