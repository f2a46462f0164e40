#pragma once
// Helpers shared by the test suites.
#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace test_util {

// The message of the E that f throws, or "<no error>".
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
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

}  // namespace test_util
