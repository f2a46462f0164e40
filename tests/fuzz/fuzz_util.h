#pragma once
// Shared by the libFuzzer targets in tests/fuzz.
//
// A target's contract: for every input, the code under test either returns or throws an
// ag::Error subclass. Anything else (another exception, a sanitizer report, a broken
// invariant the target checks) ends the process through fuzz::fail or an uncaught
// exception, and libFuzzer keeps the input as a crash-* file.
#include <attograd/attograd.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

namespace fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "\nFUZZ FAILURE: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs f; an ag::Error is an accepted outcome (returns false), any other exception is
// a finding. Returns true when f returned normally.
template <class F>
bool accepts(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const ag::Error&) { return false; } catch (const std::exception& e) {
    fail(std::string(what) + " threw " + typeid(e).name() + " (not an ag::Error): " + e.what());
  }
}

// Bit-identical copies of a state (a NaN equals itself), for "a rejected load changed
// nothing" checks.
inline ag::TensorMap clone_map(const ag::TensorMap& m) {
  ag::TensorMap out;
  for (const auto& [k, t] : m) out.insert(k, t.clone());
  return out;
}

// "" when a and b hold the same names, shapes, dtypes and bytes, else what differs first.
inline std::string map_diff(const ag::TensorMap& a, const ag::TensorMap& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (const auto& [k, t] : a) {
    if (!b.contains(k)) return "'" + k + "' missing";
    const ag::Tensor u = b.at(k).contiguous(), v = t.contiguous();
    if (!(v.shape() == u.shape()) || v.dtype() != u.dtype()) return "'" + k + "' differs in shape or dtype";
    if (std::memcmp(v.raw_data(), u.raw_data(), size_t(v.numel()) * ag::itemsize(v.dtype())) != 0)
      return "'" + k + "' differs in value";
  }
  return "";
}

// The current input as a file, for readers that take a path: an in-memory file
// (memfd) reopened through /proc/self/fd, so that nothing is left on disk after a crash.
class InputFile {
 public:
  InputFile() {
    fd_ = ::memfd_create("ag_fuzz_input", 0);
    if (fd_ < 0) fail("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) fail("ftruncate failed");
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pwrite(fd_, data + done, size - done, off_t(done));
      if (n <= 0) fail("pwrite failed");
      done += size_t(n);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// The input read front to back as small numbers; past the end every read gives 0, so
// any input decodes to something.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
  // An integer in [lo, hi] (hi - lo < 256).
  int64_t range(int64_t lo, int64_t hi) { return lo + int64_t(u8()) % (hi - lo + 1); }
  bool flag() { return u8() & 1; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace fuzz
