// load_bench: the time to load a safetensors file with a large header (issue 23: loading
// was quadratic in the number of tensors, 731 s for an 8 MB header).
//
//   load_bench [--tensors N] [--runs R] [--dir D]   (defaults: 100000, 3, $TMPDIR or /tmp)
//
// Writes D/load_bench.<pid>.safetensors with N tensors named "layers.0001234.attn.wq",
// ...wk, wv, wo, F32 of shape [1] (about 80 header bytes each: an 8 MB header for 100k),
// then times load_safetensors R times and load_checkpoint-style lookups (TensorMap::at
// of every name) once. Prints one line per run and removes the file.
#include <attograd/attograd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string tensor_name(int64_t i) {
  static const char* const kProj[] = {"wq", "wk", "wv", "wo"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "layers.%07lld.attn.%s", static_cast<long long>(i / 4), kProj[i % 4]);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 100000, runs = 3;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--tensors"))
      n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: load_bench [--tensors N] [--runs R] [--dir D]\n");
      return 2;
    }
  }
  if (n <= 0 || runs <= 0) {
    std::fprintf(stderr, "load_bench: --tensors and --runs must be positive\n");
    return 2;
  }
  const std::string path = dir + "/load_bench." + std::to_string(::getpid()) + ".safetensors";
  try {
    ag::TensorMap tensors;
    for (int64_t i = 0; i < n; ++i)
      tensors.insert(tensor_name(i), ag::full(ag::Shape{1}, static_cast<double>(i), ag::DType::f32));
    auto t0 = std::chrono::steady_clock::now();
    ag::save_safetensors(path, tensors);
    const double save_s = seconds_since(t0);
    // The header length: the file's first 8 bytes, little-endian.
    uint64_t header = 0;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      unsigned char b[8] = {};
      if (std::fread(b, 1, 8, f) == 8)
        for (int i = 7; i >= 0; --i) header = header << 8 | b[i];
      std::fclose(f);
    }
    std::printf("load_bench: %lld tensors, header %.2f MB, file %.2f MB, save %.3f s\n", static_cast<long long>(n),
                header / 1e6, std::filesystem::file_size(path) / 1e6, save_s);
    for (int64_t r = 0; r < runs; ++r) {
      t0 = std::chrono::steady_clock::now();
      ag::TensorMap loaded = ag::load_safetensors(path);
      const double load_s = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += loaded.at(tensor_name(i)).item<double>();
      const double lookup_s = seconds_since(t0);
      std::printf("run %lld: load_safetensors %.3f s (%zu tensors), every name looked up %.3f s (checksum %.0f)\n",
                  static_cast<long long>(r + 1), load_s, loaded.size(), lookup_s, sum);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "load_bench: %s\n", e.what());
    std::filesystem::remove(path);
    return 1;
  }
  std::filesystem::remove(path);
  return 0;
}
