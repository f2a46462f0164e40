// read_safetensors on arbitrary bytes: it returns or throws ag::Error (IOError for a
// bad file), never reads out of bounds or allocates what a bad header claims (libFuzzer
// runs with -rss_limit_mb, which also caps a single malloc). An accepted file's tensors
// must cover exactly their bytes: every element is read back, so a tensor claiming more
// elements than its storage holds is an AddressSanitizer report.
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  const std::string& path = file.write(data, size);
  ag::SafetensorsFile out;
  if (!fuzz::accepts("read_safetensors", [&] { out = ag::read_safetensors(path); })) return 0;

  uint64_t total = 0;
  for (const auto& [name, t] : out.tensors) {
    if (name.empty()) fuzz::fail("read_safetensors accepted a tensor with an empty name");
    if (!t.is_contiguous()) fuzz::fail("read_safetensors returned a non-contiguous tensor '" + name + "'");
    const uint64_t nbytes = uint64_t(t.numel()) * ag::itemsize(t.dtype());
    if (nbytes > size) fuzz::fail("tensor '" + name + "' claims more bytes than the file has");
    total += nbytes;
    if (t.numel() > 0) {
      volatile double sink = 0;
      for (double v : t.to_vector<double>()) sink = sink + v;
    }
  }
  if (total > size) fuzz::fail("the tensors claim more bytes than the file has");
  return 0;
}
