// safetensors reader and writer.
//
// File layout:  [u64 little-endian N][N bytes of JSON header][data buffer]
//   header: {"__metadata__": {str: str},
//            "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// Offsets are relative to the start of the data buffer. As the spec asks, the tensors
// must cover the buffer exactly: no overlaps, no holes, no trailing bytes.
//
// The reader trusts nothing in the header: every size it claims is checked against the
// real file size before anything is allocated, so a corrupt file costs at most one
// allocation of the header (<= 100 MB, and <= the file size) plus the file's own size.
#include "attograd/safetensors.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <system_error>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace ag {

// ---- TensorMap ---------------------------------------------------------------

bool TensorMap::contains(const std::string& name) const { return index_.count(name) > 0; }

const Tensor& TensorMap::at(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw IndexError(detail::cat("TensorMap: no tensor named '", name, "'"));
  return items_[it->second].second;
}

void TensorMap::insert(const std::string& name, const Tensor& t) {
  auto [it, fresh] = index_.try_emplace(name, items_.size());
  if (fresh)
    items_.emplace_back(name, t);
  else
    items_[it->second].second = t;  // replacing keeps the position, so file order stays stable
}

namespace {

using json = nlohmann::json;

// A SAX handler that only watches the keys of the top-level object, for the first one
// that appears twice; a syntax error is left to json::parse, which reports it.
struct DuplicateKeys : nlohmann::json_sax<json> {
  int depth = 0;
  std::unordered_set<std::string> seen;
  std::string duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth, true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool key(string_t& k) override {
    if (depth == 1 && duplicate.empty() && !seen.insert(k).second) duplicate = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swapping here");

constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;  // the reference implementation's cap

std::atomic<int64_t> g_fault_after_bytes{-1};  // see ag::testing::set_save_fault_after_bytes

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {{DType::f32, "F32"}, {DType::f64, "F64"},
                                     {DType::i32, "I32"}, {DType::i64, "I64"},
                                     {DType::b8, "BOOL"}, {DType::bf16, "BF16"},
                                     {DType::f16, "F16"}, {DType::i8, "I8"},
                                     {DType::u8, "U8"}};  // BF16/F16: raw little-endian bits

const char* safetensors_name(DType t) {
  for (const auto& d : kDTypeNames)
    if (d.dtype == t) return d.name;
  throw DTypeError(detail::cat("save_safetensors: dtype ", t, " has no safetensors name"));
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Names and strings from a bad file can be huge; keep messages readable. (Not named
// `quoted`: ADL would pick std::quoted for a non-const std::string.)
std::string squoted(const std::string& s) {
  constexpr size_t kMax = 80;
  return "'" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "'";
}

// A JSON value for an error message. Never dumps containers: a hostile header may nest
// deeply, and dump() recurses.
std::string describe(const json& v) {
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

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw IOError(detail::cat("load_safetensors: ", path_, ": ", args...));
  }

  // Reads exactly n bytes at `offset`; a short read means the file shrank under us.
  void read_at(int fd, void* dst, uint64_t n, uint64_t offset, const char* what) const {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd, p, std::min<uint64_t>(n, uint64_t{1} << 30), static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("cannot read ", what, " (", errno_text(errno), ")");
      if (got == 0) fail("unexpected end of file while reading ", what);
      p += got, n -= static_cast<uint64_t>(got), offset += static_cast<uint64_t>(got);
    }
  }

  uint64_t to_u64(const json& v, const std::string& what) const {
    if (!v.is_number_unsigned()) fail(what, " must be a non-negative integer, got ", describe(v));
    return v.get<uint64_t>();
  }

  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;  // byte range in the data buffer
  };

  Entry parse_entry(const std::string& name, const json& info, uint64_t data_size) const {
    const std::string tn = "tensor " + squoted(name);
    if (name.empty()) fail("a tensor has an empty name");
    if (!info.is_object()) fail(tn, ": expected an object with dtype, shape and data_offsets, got ", describe(info));
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!info.contains(key)) fail(tn, ": missing \"", key, "\"");

    Entry e{name, DType::f32, {}, 0, 0};
    const json& dt = info["dtype"];
    if (!dt.is_string()) fail(tn, ": dtype must be a string, got ", describe(dt));
    auto it = std::find_if(std::begin(kDTypeNames), std::end(kDTypeNames),
                           [&](const DTypeName& d) { return dt.get<std::string>() == d.name; });
    if (it == std::end(kDTypeNames))
      fail(tn, ": unsupported dtype ", squoted(dt.get<std::string>()),
           " (attograd reads F32, F64, I32, I64, BOOL, BF16, F16, I8, U8)");
    e.dtype = it->dtype;

    const json& sh = info["shape"];
    if (!sh.is_array()) fail(tn, ": shape must be an array of non-negative integers, got ", describe(sh));
    if (sh.size() > size_t(kMaxDims))
      fail(tn, ": shape has ", sh.size(), " dims; attograd supports at most ", kMaxDims);
    // The product of the non-zero dims bounds every stride, so it must fit in int64 even
    // when a zero dim makes the tensor empty.
    int64_t span = 1;
    for (size_t i = 0; i < sh.size(); ++i) {
      uint64_t d = to_u64(sh[i], tn + ": shape dim " + std::to_string(i));
      if (d > uint64_t(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(span, std::max<int64_t>(int64_t(d), 1), &span))
        fail(tn, ": shape dim ", i, " (", d, ") is too large");
      e.shape.push_back(int64_t(d));
    }

    const json& off = info["data_offsets"];
    if (!off.is_array() || off.size() != 2)
      fail(tn, ": data_offsets must be [begin, end], got ",
           off.is_array() ? "an array of " + std::to_string(off.size()) : describe(off));
    e.begin = to_u64(off[0], tn + ": data_offsets begin");
    e.end = to_u64(off[1], tn + ": data_offsets end");
    if (e.begin > e.end) fail(tn, ": data_offsets [", e.begin, ", ", e.end, "] has begin > end");
    if (e.end > data_size)
      fail(tn, ": data_offsets [", e.begin, ", ", e.end, "] go beyond the data buffer (", data_size,
           " bytes); the file is truncated or corrupt");

    // numel * itemsize, checked: span fits int64 but times 8 may not (F64 [2^61] wrapped
    // to 0 bytes and loaded over an empty buffer, F32 [2^62 + 1] to 4 bytes).
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(uint64_t(numel(e.shape)), uint64_t(itemsize(e.dtype)), &nbytes))
      fail(tn, ": shape ", e.shape, " of ", dt.get<std::string>(), " needs 2^64 bytes or more but data_offsets [",
           e.begin, ", ", e.end, "] hold ", e.end - e.begin);
    if (nbytes != e.end - e.begin)
      fail(tn, ": shape ", e.shape, " of ", dt.get<std::string>(), " needs ", nbytes, " bytes but data_offsets [",
           e.begin, ", ", e.end, "] hold ", e.end - e.begin);
    return e;
  }

  Metadata parse_metadata(const json& m) const {
    Metadata out;
    if (m.is_null()) return out;  // what the reference writer's `metadata=None` means
    if (!m.is_object()) fail("__metadata__ must be an object of strings, got ", describe(m));
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string()) fail("__metadata__ value for ", squoted(k), " must be a string, got ", describe(v));
      out.emplace(k, v.get<std::string>());
    }
    return out;
  }

  SafetensorsFile read() const {
    Fd f(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (f.fd < 0) fail("cannot open file (", errno_text(errno), ")");
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) fail("cannot stat file (", errno_text(errno), ")");
    if (!S_ISREG(st.st_mode)) fail("not a regular file");
    const uint64_t file_size = uint64_t(st.st_size);

    if (file_size < 8) fail("file is ", file_size, " bytes, shorter than the 8-byte header length");
    unsigned char len_bytes[8];
    read_at(f.fd, len_bytes, 8, 0, "the header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
    if (n > kMaxHeaderBytes)
      fail("header length ", n, " exceeds the 100 MB limit; the file is corrupt or not safetensors");
    if (n > file_size - 8)
      fail("header length ", n, " is larger than the rest of the file (", file_size - 8,
           " bytes); the file is truncated or not safetensors");
    const uint64_t data_start = 8 + n, data_size = file_size - data_start;

    std::string text(n, '\0');
    read_at(f.fd, text.data(), n, 8, "the header");
    // Duplicate names would silently keep the last one: a SAX pass collects the
    // top-level keys first. (Not parse()'s callback: nlohmann's callback parser rescans
    // the enclosing object at each object's end, quadratic in the tensors of a file.)
    DuplicateKeys keys;
    json::sax_parse(text, &keys, json::input_format_t::json, /*strict=*/true);
    json header;
    try {
      header = json::parse(text);
    } catch (const json::exception& e) { fail("header is not valid JSON: ", e.what()); }
    const std::string& duplicate = keys.duplicate;
    if (!header.is_object()) fail("header must be a JSON object, got ", describe(header));
    if (!duplicate.empty()) fail("header names ", squoted(duplicate), " twice");

    SafetensorsFile out;
    std::vector<Entry> entries;
    for (const auto& [name, info] : header.items()) {
      if (name == "__metadata__")
        out.metadata = parse_metadata(info);
      else
        entries.push_back(parse_entry(name, info, data_size));
    }
    // File order; ties (empty tensors) keep name order since json objects are sorted.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
    uint64_t covered = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      if (e.begin < covered)
        fail("tensor ", squoted(e.name), " (bytes [", e.begin, ", ", e.end, ")) overlaps tensor ",
             squoted(entries[i - 1].name));
      if (e.begin > covered)
        fail("tensor ", squoted(e.name), " starts at byte ", e.begin, ", leaving a hole after byte ", covered,
             " of the data buffer");
      covered = e.end;
    }
    if (covered != data_size) fail("the data buffer has ", data_size, " bytes but the tensors cover only ", covered);

    for (const Entry& e : entries) {
      const uint64_t nbytes = e.end - e.begin;  // checked against the file size above
      auto storage = std::make_shared<Storage>(nbytes);
      if (nbytes > 0) read_at(f.fd, storage->data(), nbytes, data_start + e.begin, "tensor data");
      if (e.dtype == DType::b8) {
        const auto* b = static_cast<const unsigned char*>(storage->data());
        for (uint64_t i = 0; i < nbytes; ++i)
          if (b[i] > 1) fail("tensor ", squoted(e.name), ": BOOL element ", i, " is ", int(b[i]), ", not 0 or 1");
      }
      out.tensors.insert(e.name, Tensor(storage, e.shape, contiguous_strides(e.shape), 0, e.dtype));
    }
    return out;
  }

 private:
  std::string path_;
};

// ---- writing -----------------------------------------------------------------

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

}  // namespace

// ---- public API ----------------------------------------------------------------

SafetensorsFile read_safetensors(const std::string& path) { return Reader(path).read(); }

TensorMap load_safetensors(const std::string& path) { return read_safetensors(path).tensors; }

Metadata load_safetensors_metadata(const std::string& path) { return read_safetensors(path).metadata; }

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
  for (const auto& [name, t] : tensors) {
    // One contiguous copy at a time keeps peak memory near the largest tensor.
    Tensor c = t.detach().contiguous();
    const uint64_t nbytes = uint64_t(c.numel()) * itemsize(c.dtype());
    if (nbytes > 0) file.write(c.raw_data(), nbytes);
  }
  file.commit();
}

namespace testing {
void set_save_fault_after_bytes(int64_t n) { g_fault_after_bytes.store(n < 0 ? -1 : n); }
}  // namespace testing

}  // namespace ag
