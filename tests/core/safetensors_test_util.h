#pragma once
// Helpers of the safetensors tests (test_safetensors.cpp and test_safetensors/*.cpp,
// the same executable): hand-made file bytes, their header length, load errors.
#include <attograd/attograd.h>

#include "test_util.h"

#include <cstdint>
#include <string>
#include <vector>

namespace safetensors_test {

inline std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("safetensors", name); }

inline std::string u64_le(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((n >> (8 * i)) & 0xff);
  return s;
}

// A file from a header text and a data buffer, with a correct header length.
inline std::string st_file(const std::string& header, const std::string& data) {
  return u64_le(header.size()) + header + data;
}

// The message of the IOError that loading `path` throws ("" if it loads).
inline std::string load_error(const std::string& path) {
  try {
    ag::load_safetensors(path);
  } catch (const ag::IOError& e) { return e.what(); }
  return "";
}

inline uint64_t header_length(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(file[size_t(i)]);
  return n;
}

inline std::string data_buffer(const std::string& file) { return file.substr(8 + header_length(file)); }

inline std::vector<std::string> names(const ag::TensorMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

}  // namespace safetensors_test
