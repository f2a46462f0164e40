#pragma once
// Internal to the safetensors reader and writer (core/safetensors*.cpp): the dtype names,
// message helpers, and the Reader whose header parsing (safetensors_header.cpp) and file
// reading (safetensors_read.cpp) sit in separate files. Not installed.
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "attograd/safetensors.h"

namespace ag::safetensors_detail {

using json = nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swapping here");

struct DTypeName {
  DType dtype;
  const char* name;
};
inline constexpr DTypeName kDTypeNames[] = {{DType::f32, "F32"}, {DType::f64, "F64"},
                                            {DType::i32, "I32"}, {DType::i64, "I64"},
                                            {DType::b8, "BOOL"}, {DType::bf16, "BF16"},
                                            {DType::f16, "F16"}, {DType::i8, "I8"},
                                            {DType::u8, "U8"}};  // BF16/F16: raw little-endian bits

inline std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Names and strings from a bad file can be huge; keep messages readable. (Not named
// `quoted`: ADL would pick std::quoted for a non-const std::string.)
inline std::string squoted(const std::string& s) {
  constexpr size_t kMax = 80;
  return "'" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "'";
}

// A JSON value for an error message. Never dumps containers: a hostile header may nest
// deeply, and dump() recurses.
inline std::string describe(const json& v) {
  if (v.is_string()) return "the string " + squoted(v.get<std::string>());
  if (v.is_primitive()) return v.dump();
  return std::string("a JSON ") + v.type_name();
}

// Owns a file descriptor.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// ---- reading -----------------------------------------------------------------

// Reads one file; every error is an IOError "load_safetensors: <path>: ...".
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError(detail::cat("load_safetensors: ", path_, ": ", args...));
  }

  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;  // byte range in the data buffer
  };

  // ---- the header (safetensors_header.cpp) ----
  uint64_t to_u64(const json& v, const std::string& what) const;
  // One tensor's entry, checked against the data buffer's size.
  Entry parse_entry(const std::string& name, const json& info, uint64_t data_size) const;
  Metadata parse_metadata(const json& m) const;
  // The header text -> a JSON object with no name twice.
  json parse_header(const std::string& text) const;
  // The header's tensor entries in file order, checked to cover the data buffer exactly
  // (no overlap, hole or trailing byte); its __metadata__ goes to `metadata`.
  std::vector<Entry> layout(const json& header, uint64_t data_size, Metadata& metadata) const;

  // ---- the file (safetensors_read.cpp) ----
  // Reads exactly n bytes at `offset`; a short read means the file shrank under us.
  void read_at(int fd, void* dst, uint64_t n, uint64_t offset, const char* what) const;
  SafetensorsFile read() const;

 private:
  std::string path_;
};

}  // namespace ag::safetensors_detail
