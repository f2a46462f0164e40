// safetensors writing: the header is built and validated before the disk is touched, then
// written through a temporary file beside the destination, fsynced and renamed over it, so
// a failed or killed save never leaves a partial file under the destination's name.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "safetensors_internal.h"

namespace ag {

namespace {

using safetensors_detail::errno_text;
using safetensors_detail::Fd;
using safetensors_detail::kDTypeNames;
using safetensors_detail::squoted;

std::atomic<int64_t> g_fault_after_bytes{-1};  // see ag::testing::set_save_fault_after_bytes

const char* safetensors_name(DType t) {
  for (const auto& d : kDTypeNames)
    if (d.dtype == t) return d.name;
  throw DTypeError(detail::cat("save_safetensors: dtype ", t, " has no safetensors name"));
}

// A decimal number without sign or leading zeros (as getpid() and rd() print), <= max.
bool parse_decimal(const std::string& s, uint64_t max, uint64_t& out) {
  if (s.empty() || s.size() > 20 || (s[0] == '0' && s.size() > 1)) return false;
  out = 0;
  for (char c : s)
    if (c < '0' || c > '9' || __builtin_mul_overflow(out, 10, &out) || __builtin_add_overflow(out, c - '0', &out))
      return false;
  return out <= max;
}

// A save killed mid-write (SIGKILL, power loss) leaves its `<dest>.tmp.<pid>.<n>` behind,
// tens of MB each for a checkpoint. Removes those whose process no longer exists: regular
// files matching the pattern exactly, with kill(pid, 0) failing with ESRCH. A live
// process's file (another save in progress, ours included; EPERM: another user's) and
// anything else are kept. The pid is only meaningful on this host: on a directory shared
// by several hosts a live remote save could lose its temporary and fail with IOError
// (never a damaged checkpoint). Best effort: errors leave files in place.
void remove_stale_temporaries(const std::string& dest) {
  auto slash = dest.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dest.substr(0, slash);
  const std::string prefix = (slash == std::string::npos ? dest : dest.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>.<n>"
    const auto dot = rest.find('.');
    uint64_t pid = 0, n = 0;
    if (dot == std::string::npos || !parse_decimal(rest.substr(0, dot), std::numeric_limits<pid_t>::max(), pid) ||
        pid == 0 || !parse_decimal(rest.substr(dot + 1), std::numeric_limits<uint64_t>::max(), n))
      continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  for (const std::string& name : stale) ::unlinkat(::dirfd(d), name.c_str(), 0);
  ::closedir(d);
}

// The file a save to `dest` must replace: dest itself, or, when dest is a symbolic link,
// the end of its chain of links (absolute targets as they are, relative ones from the
// link's folder), which may not exist yet (a dangling link: the save creates it).
// Renaming onto the link would replace the link with a regular file and leave its
// target stale. Links in the folders along the way need nothing: rename follows them.
std::string resolve_links(const std::string& dest, const std::string& shown) {
  std::string path = dest;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;  // absent or not a link
    AG_CHECK(hops < 40, IOError, "save_safetensors: ", shown, ": more than 40 symbolic links (a loop?)");
    std::vector<char> buf(std::size_t(std::max<off_t>(st.st_size, 0)) + 256);
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    AG_CHECK(n >= 0 && std::size_t(n) < buf.size(), IOError, "save_safetensors: ", shown,
             ": cannot read the symbolic link ", squoted(path), " (", errno_text(errno), ")");
    const std::string target(buf.data(), std::size_t(n));
    const auto slash = path.find_last_of('/');
    path = target.starts_with('/') || slash == std::string::npos ? target : path.substr(0, slash + 1) + target;
  }
}

// A temporary file next to `dest`: write(), then commit() fsyncs it and renames it over
// dest. Destroyed uncommitted (an error, a fault), it removes itself. Stale temporaries
// of dead processes are removed first, which also frees their space for this save.
// (Named, not O_TMPFILE + linkat: linkat cannot replace an existing dest, so a name and a
// rename would still be needed, and not every filesystem has O_TMPFILE.)
class TempFile {
 public:
  // dest's links are followed first (resolve_links): the temporary sits beside the file
  // it replaces, so the rename stays on one filesystem and a link stays a link.
  explicit TempFile(const std::string& dest) : dest_(dest), target_(resolve_links(dest, dest)) {
    remove_stale_temporaries(target_);
    std::random_device rd;
    for (int attempt = 0; fd_ < 0; ++attempt) {
      tmp_ = detail::cat(target_, ".tmp.", ::getpid(), ".", rd());
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt == 10))
        fail("cannot create temporary file ", squoted(tmp_), " (", errno_text(errno), ")");
    }
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError(detail::cat("save_safetensors: ", dest_, ": ", args...));
  }

  void write(const void* src, uint64_t n) {
    const int64_t fault = g_fault_after_bytes.load();
    const bool crash = fault >= 0 && written_ + n > uint64_t(fault);
    if (crash) n = uint64_t(fault) - written_;
    const auto* p = static_cast<const char*>(src);
    while (n > 0) {
      ssize_t put = ::write(fd_, p, std::min<uint64_t>(n, uint64_t{1} << 30));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) fail("cannot write ", squoted(tmp_), " (", errno_text(errno), ")");
      p += put, n -= uint64_t(put), written_ += uint64_t(put);
    }
    if (crash) fail("simulated crash after ", fault, " bytes (testing::set_save_fault_after_bytes)");
  }

  void commit() {
    if (::fsync(fd_) != 0) fail("cannot fsync ", squoted(tmp_), " (", errno_text(errno), ")");
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot close ", squoted(tmp_), " (", errno_text(errno), ")");
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0)
      fail("cannot rename ", squoted(tmp_), " onto ", squoted(target_), " (", errno_text(errno), ")");
    committed_ = true;
    // Make the rename itself durable; best effort, the data is already safe.
    auto slash = target_.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.fd >= 0) ::fsync(d.fd);
  }

 private:
  std::string dest_, target_, tmp_;  // as given, after its links, the temporary
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// t's elements in row-major order: a contiguous tensor's bytes as they are, a strided
// one's gathered run by run (runs of its innermost dim when that has stride 1) through a
// buffer of at most 1 MiB, so peak memory does not grow with the tensor. Core cannot call
// Tensor::contiguous (an op of the layer above).
void write_row_major(TempFile& file, const Tensor& t) {
  const auto item = static_cast<std::size_t>(itemsize(t.dtype()));
  if (t.numel() == 0) return;
  if (t.is_contiguous()) return file.write(t.raw_data(), static_cast<std::size_t>(t.numel()) * item);
  const Shape& shape = t.shape();
  const int64_t nd = t.dim(), last = shape[nd - 1], last_stride = t.stride(nd - 1);
  const bool runs = last_stride == 1;
  const std::size_t run_bytes = runs ? static_cast<std::size_t>(last) * item : item;
  std::vector<unsigned char> buffer;
  buffer.reserve(std::max<std::size_t>(run_bytes, std::size_t{1} << 20));
  const auto* base = static_cast<const unsigned char*>(t.raw_data());
  std::vector<int64_t> idx(static_cast<std::size_t>(nd), 0);  // of the next element (run)
  const int64_t outer = runs ? nd - 1 : nd;                   // dims the counter walks
  for (int64_t done = 0; done < t.numel(); done += runs ? last : 1) {
    int64_t off = 0;
    for (int64_t d = 0; d < outer; ++d) off += idx[static_cast<std::size_t>(d)] * t.stride(d);
    if (buffer.size() + run_bytes > buffer.capacity()) {
      file.write(buffer.data(), buffer.size());
      buffer.clear();
    }
    const unsigned char* from = base + off * static_cast<int64_t>(item);
    buffer.insert(buffer.end(), from, from + run_bytes);
    for (int64_t d = outer - 1; d >= 0; --d) {  // the next index, row-major
      if (++idx[static_cast<std::size_t>(d)] < shape[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  file.write(buffer.data(), buffer.size());
}

}  // namespace

// ---- public API ----------------------------------------------------------------

void save_safetensors(const std::string& path, const TensorMap& tensors, const Metadata& metadata) {
  // Validate everything before touching the disk. The header is written entry by entry:
  // an ordered_json object finds each new key by a linear scan (quadratic: 100k tensors
  // took minutes); TensorMap's keys are unique already.
  std::string text = "{";
  uint64_t offset = 0;
  try {
    if (!metadata.empty()) text += "\"__metadata__\":" + nlohmann::json(metadata).dump();
    for (const auto& [name, t] : tensors) {
      AG_CHECK(!name.empty(), ValueError, "save_safetensors: ", path, ": tensor names must be non-empty");
      AG_CHECK(name != "__metadata__", ValueError, "save_safetensors: ", path,
               ": '__metadata__' is reserved and cannot name a tensor");
      AG_CHECK(t.defined(), ValueError, "save_safetensors: ", path, ": tensor ", squoted(name), " is undefined");
      const uint64_t nbytes = uint64_t(t.numel()) * itemsize(t.dtype());
      const nlohmann::ordered_json entry = {{"dtype", safetensors_name(t.dtype())},
                                            {"shape", t.shape().vec()},
                                            {"data_offsets", {offset, offset + nbytes}}};
      if (text.size() > 1) text += ',';
      text += nlohmann::json(name).dump() + ':' + entry.dump();
      offset += nbytes;
    }
  } catch (const nlohmann::json::exception& e) {  // e.g. a name or value that is not UTF-8
    throw ValueError(detail::cat("save_safetensors: ", path, ": cannot encode the header: ", e.what()));
  }
  text += '}';
  // Pad with spaces so the data buffer starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');

  TempFile file(path);
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));
  file.write(len_bytes, 8);
  file.write(text.data(), text.size());
  for (const auto& [name, t] : tensors) write_row_major(file, t);
  file.commit();
}

namespace testing {
void set_save_fault_after_bytes(int64_t n) { g_fault_after_bytes.store(n < 0 ? -1 : n); }
}  // namespace testing

}  // namespace ag
