#pragma once
// Helpers shared by the test suites.
#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

// AG_TEST_ASAN: built with AddressSanitizer (GCC's macro, or clang's feature test);
// AG_TEST_SANITIZED: with AddressSanitizer or ThreadSanitizer (.ci/run's later phases,
// where the code runs 10-20x slower than in its release phase).
#if defined(__SANITIZE_ADDRESS__)
#define AG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_TEST_ASAN 1
#endif
#endif
#if defined(AG_TEST_ASAN) || defined(__SANITIZE_THREAD__)
#define AG_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AG_TEST_SANITIZED 1
#endif
#endif

namespace test_util {

#if defined(AG_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Training steps for a test that trains a model to a quality bound: n, or n / 10 under a
// sanitizer. The release phase has run the test in full by then; under a sanitizer the
// same code paths run for fewer steps, and the test checks what needs no trained model.
inline int64_t training_steps(int64_t n) { return kSanitized ? std::max<int64_t>(n / 10, 2) : n; }

// The message of the E that f throws, or "<no error>".
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  return "<no error>";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// max |a - b| over all elements (shapes must match; NaN anywhere gives NaN).
inline double max_abs_diff(const ag::Tensor& a, const ag::Tensor& b) {
  if (!(a.shape() == b.shape())) return INFINITY;
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double d = std::abs(x[i] - y[i]);
    if (std::isnan(d)) return NAN;
    m = std::max(m, d);
  }
  return m;
}

// A fresh folder AG_TMP_DIR/suite/name per test case, so cases (and parallel ctest
// runs) do not collide.
inline std::string tmp_dir(const std::string& suite, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(AG_TMP_DIR) / suite / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

// Exact equality of two tensor maps (names, shapes, dtypes, bit-identical values);
// "" when equal, else what differs first.
inline std::string map_diff(const ag::TensorMap& a, const ag::TensorMap& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (auto& [k, t] : a) {
    if (!b.contains(k)) return "'" + k + "' missing";
    const ag::Tensor& u = b.at(k);
    if (!(t.shape() == u.shape()) || t.dtype() != u.dtype()) return "'" + k + "' differs in shape or dtype";
    if (t.to_vector<double>() != u.to_vector<double>()) return "'" + k + "' differs in value";
  }
  return "";
}

// ---- PyTorch reference fixtures (tests/fixtures, see its README.md) -----------------
// Every test reads them through load_fixture, so that a missing or damaged file, or a
// missing key, fails the test with a message naming the file, the key and the command
// that regenerates the fixtures, instead of crashing or reading garbage.

// A fixture file that is missing or unreadable, or a key or metadata entry it lacks.
class FixtureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline const char* kRegenerate = "tools/make_fixtures.py (needs python3-torch)";

inline std::string fixtures_dir() { return AG_FIXTURES_DIR; }

// The path of fixture `name` ("mha_self_causal"); throws FixtureError if it does not exist.
inline std::string fixture_path(const std::string& name, const std::string& dir = fixtures_dir()) {
  const std::string path = dir + "/" + name + ".safetensors";
  if (!std::filesystem::is_regular_file(path))
    throw FixtureError("fixture " + path + " does not exist; regenerate tests/fixtures with " + kRegenerate);
  return path;
}

struct Fixture {
  std::string name, path;
  ag::TensorMap tensors;
  ag::Metadata metadata;

  bool contains(const std::string& key) const { return tensors.contains(key); }
  const ag::Tensor& at(const std::string& key) const {
    if (!tensors.contains(key))
      throw FixtureError("fixture " + path + " has no tensor '" + key + "' (stale file? regenerate with " +
                         kRegenerate + ")");
    return tensors.at(key);
  }
  const std::string& meta(const std::string& key) const {
    auto it = metadata.find(key);
    if (it == metadata.end())
      throw FixtureError("fixture " + path + " has no metadata entry '" + key + "' (stale file? regenerate with " +
                         kRegenerate + ")");
    return it->second;
  }
  // The tensors whose keys start with `prefix`, keyed without it (one module's state
  // dict out of a fixture holding several).
  ag::TensorMap with_prefix(const std::string& prefix) const {
    ag::TensorMap m;
    for (const auto& entry : tensors)
      if (entry.first.rfind(prefix, 0) == 0) m.insert(entry.first.substr(prefix.size()), entry.second);
    return m;
  }
  std::size_t size() const { return tensors.size(); }
  auto begin() const { return tensors.begin(); }
  auto end() const { return tensors.end(); }
};

// Loads fixture `name`; a missing or damaged file throws FixtureError naming the path.
inline Fixture load_fixture(const std::string& name, const std::string& dir = fixtures_dir()) {
  Fixture f;
  f.name = name;
  f.path = fixture_path(name, dir);
  try {
    ag::SafetensorsFile file = ag::read_safetensors(f.path);
    f.tensors = std::move(file.tensors);
    f.metadata = std::move(file.metadata);
  } catch (const ag::Error& e) {
    throw FixtureError("fixture " + f.path + " is damaged (" + e.what() + "); regenerate with " + kRegenerate);
  }
  return f;
}

}  // namespace test_util
