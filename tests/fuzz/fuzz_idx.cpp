// data::read_idx (IDX files, MNIST's format) on arbitrary bytes, written to a file as the
// reader takes a path: it returns or throws ag::IOError, never allocates more than the
// file holds (a header claiming 2^64 bytes fails on the short read), and a tensor it
// returns has the header's element count in the input's bytes (the gzip form is fuzzed
// through its plain one: zlib reads a file that is not gzip as it is).
#include <unistd.h>

#include <attograd/data.h>

#include <fstream>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fuzz_idx_" + std::to_string(getpid()) + ".idx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) fuzz::fail("cannot write " + path);
  }
  ag::Tensor t;
  bool ok = false;
  try {
    t = ag::data::read_idx(path);
    ok = true;
  } catch (const ag::IOError&) {
  } catch (const std::exception& e) {
    fuzz::fail(std::string("read_idx threw ") + typeid(e).name() + " (not an ag::IOError): " + e.what());
  }
  if (!ok || (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) return 0;  // gzip: sizes differ
  // A plain file is the 4-byte magic, 4 bytes a dim, then exactly the elements.
  const size_t header = 4 + 4 * static_cast<size_t>(t.dim());
  const size_t element = data[2] == 0x0B ? 2 : ag::itemsize(t.dtype());  // i16 becomes i32
  if (header + static_cast<size_t>(t.numel()) * element != size)
    fuzz::fail("read_idx returned " + std::to_string(t.numel()) + " elements from " + std::to_string(size) + " bytes");
  return 0;
}
