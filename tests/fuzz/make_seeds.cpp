// Writes the fuzzers' seed corpora (small valid inputs, a few KB per target):
//   fuzz_make_seeds <dir>     (tools/fuzz seeds runs it with dir = tests/fuzz/corpus)
// into <dir>/<target>/seed-*; regression inputs (regress-*) beside them are kept.
// The checkpoint and nn_load seeds are saved from the same objects the fuzzers load
// into (rigs.h), so a mutation starts from a file that loads.
#include <attograd/attograd.h>

#include "rigs.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;
using ag::Tensor;

namespace {

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw ag::IOError("make_seeds: cannot write " + path.string());
}

// ---- .mo files (GNU gettext; the layout is described in examples/translate/mo.cpp)

// (msgid, msgstr) pairs, sorted by msgid as msgfmt writes them; no hash table.
std::string make_mo(std::vector<std::pair<std::string, std::string>> msgs, bool big_endian) {
  std::string out;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out += char(big_endian ? (v >> (24 - 8 * i)) & 0xff : (v >> (8 * i)) & 0xff);
  };
  const uint32_t n = uint32_t(msgs.size()), originals = 28, translations = originals + 8 * n;
  uint32_t at = translations + 8 * n;  // strings follow the two tables, each NUL-terminated
  u32(0x950412de), u32(0), u32(n), u32(originals), u32(translations), u32(0), u32(0);
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> orig, trans;
  for (auto& [id, str] : msgs)
    orig.push_back({uint32_t(id.size()), at + uint32_t(strings.size())}), strings += id + '\0';
  for (auto& [id, str] : msgs)
    trans.push_back({uint32_t(str.size()), at + uint32_t(strings.size())}), strings += str + '\0';
  for (auto [len, off] : orig) u32(len), u32(off);
  for (auto [len, off] : trans) u32(len), u32(off);
  return out + strings;
}

void mo_seeds(const fs::path& dir) {
  using namespace std::string_literals;
  const std::vector<std::pair<std::string, std::string>> msgs = {
      {"", "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n"},
      {"%s: cannot open"s, "%s : impossible d'ouvrir"s},
      {"file\0files"s, "fichier\0fichiers"s},
      {"menu\x04Open"s, "Ouvrir"s},
  };
  write_file(dir / "seed-le.mo", make_mo(msgs, false));
  write_file(dir / "seed-be.mo", make_mo(msgs, true));
  write_file(dir / "seed-latin1.mo",
             make_mo({{"", "Content-Type: text/plain; charset=ISO-8859-1\n"}, {"Yes", "Oui \xe9t\xe9"}}, false));
  write_file(dir / "seed-empty.mo", make_mo({}, false));
}

// ---- safetensors, nn_load, checkpoint --------------------------------------------------

void safetensors_seeds(const fs::path& dir) {
  ag::TensorMap all;
  all.insert("f32", Tensor::from_vector(std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f}, Shape{2, 2}));
  all.insert("f64", Tensor::from_vector(std::vector<double>{1e-3, -7.0}));
  all.insert("i32", Tensor::from_vector(std::vector<int32_t>{-1, 2, 3}));
  all.insert("i64", Tensor::from_vector(std::vector<int64_t>{5}, Shape{}));
  all.insert("bool", Tensor::from_vector(std::vector<double>{1, 0, 1}).to(ag::DType::b8));
  ag::save_safetensors((dir / "seed-dtypes.safetensors").string(), all, {{"format", "pt"}, {"note", "seed"}});
  ag::TensorMap empty;
  empty.insert("empty", ag::zeros(Shape{0, 3}));
  empty.insert("scalar", ag::scalar_tensor(2.0));
  ag::save_safetensors((dir / "seed-empty.safetensors").string(), empty);
  write_file(dir / "seed-header-only.safetensors", std::string("\x02\0\0\0\0\0\0\0{}", 10));
}

void nn_load_seeds(const fs::path& dir) {
  ag::nn::Sequential model = fuzz::make_load_model();
  ag::nn::save(*model, (dir / "seed-model.safetensors").string());
  ag::TensorMap f64;
  for (auto& [k, t] : model->state_dict()) f64.insert(k, t.to(ag::DType::f64));
  ag::save_safetensors((dir / "seed-f64.safetensors").string(), f64);
}

void checkpoint_seeds(const fs::path& dir) {
  fuzz::CheckpointRig rig;
  rig.step();
  ag::save_checkpoint((dir / "seed-step1.safetensors").string(), *rig.model, rig.opt.get(), rig.sched.get());
  rig.step();
  rig.step();
  ag::save_checkpoint((dir / "seed-step3.safetensors").string(), *rig.model, rig.opt.get(), rig.sched.get(),
                      {{"epoch", "2"}});
}

// ---- IDX files (data::read_idx): a magic, big-endian u32 dims, big-endian elements

std::string idx_file(unsigned char code, const std::vector<uint32_t>& dims, std::size_t element_bytes) {
  std::string b{'\0', '\0', static_cast<char>(code), static_cast<char>(dims.size())};
  std::size_t n = 1;
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) b += static_cast<char>((d >> shift) & 0xFF);
    n *= d;
  }
  for (std::size_t i = 0; i < n * element_bytes; ++i) b += static_cast<char>((i * 37 + 11) & 0xFF);
  return b;
}

void idx_seeds(const fs::path& dir) {
  write_file(dir / "seed-images-u8", idx_file(0x08, {3, 4, 5}, 1));
  write_file(dir / "seed-labels-u8", idx_file(0x08, {6}, 1));
  write_file(dir / "seed-i16", idx_file(0x0B, {2, 3}, 2));
  write_file(dir / "seed-f32", idx_file(0x0D, {4}, 4));
  write_file(dir / "seed-f64", idx_file(0x0E, {2, 1}, 8));
  write_file(dir / "seed-scalar-i32", idx_file(0x0C, {}, 4));
  write_file(dir / "seed-empty", idx_file(0x09, {0, 7}, 1));
}

// ---- ops: bytes that the op fuzzer decodes into programs ---------------------------------

void ops_seeds(const fs::path& dir) {
  ag::Generator gen(2024);
  for (int i = 0; i < 12; ++i) {
    std::string bytes(size_t(48 + 16 * (i % 4)), '\0');
    for (char& c : bytes) c = char(gen.next_u64() & 0xff);
    char name[32];
    std::snprintf(name, sizeof name, "seed-%02d", i);
    write_file(dir / name, bytes);
  }
  // Edge seeds: every other byte in 240..255, which the fuzzer decodes as integer edges
  // (INT64_MIN / MAX, the int32 edges, -1, 0, 2^53 + 1, ...) in tensors, indices, sizes,
  // pads and ranges, and as inf, NaN, 1e300, denormals and 2^63 in float values.
  for (int i = 0; i < 12; ++i) {
    std::string bytes(size_t(64 + 16 * (i % 4)), '\0');
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      const uint64_t r = gen.next_u64();
      bytes[k] = char(k % 2 ? 240 + (r & 15) : r & 0xff);
    }
    char name[32];
    std::snprintf(name, sizeof name, "seed-edge-%02d", i);
    write_file(dir / name, bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>  (writes <dir>/<target>/seed-*)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  const std::vector<std::pair<const char*, void (*)(const fs::path&)>> targets = {{"safetensors", safetensors_seeds},
                                                                                  {"nn_load", nn_load_seeds},
                                                                                  {"checkpoint", checkpoint_seeds},
                                                                                  {"mo", mo_seeds},
                                                                                  {"idx", idx_seeds},
                                                                                  {"ops", ops_seeds}};
  for (auto& [name, write] : targets) {
    const fs::path dir = root / name;
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("seed-", 0) == 0) fs::remove(e.path());
    write(dir);
    std::printf("%s: seeds written to %s\n", name, dir.string().c_str());
  }
  return 0;
}
