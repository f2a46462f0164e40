// The .mo reader of mo.h.
//
// The .mo files are parsed here rather than through libintl: gettext()/dgettext() only
// look a translation up by its msgid, and there is no call that enumerates a catalog's
// messages, which is what building a corpus needs. (msgunfmt could dump them as text,
// but that is a process per catalog and a .po parser on top.) The format is small:
//   offset  0  magic 0x950412de, written in the byte order of the machine that made it
//           4  revision (major << 16 | minor; majors 0 and 1 are this format)
//           8  N, the number of strings
//          12  O, offset of the originals table: N entries (length, offset), 8 bytes each
//          16  T, offset of the translations table, same layout
//          20  hash table size and offset (not needed to enumerate)
// A string is `length` bytes at `offset` (msgfmt adds a NUL after it, not counted).
// Minor revision 1 adds "system dependent" strings, messages using <inttypes.h> macros
// ("%" PRIu64, written "%<PRIu64>" in a .po file), which msgfmt keeps out of the tables
// above (git has 41, coreutils 21):
//          28  M segments, 32 offset of their table: M entries (length, offset) of the
//              segment names ("PRIu64", or "I" for glibc's %I flag), NUL-terminated
//          36  K strings, 40 and 44 offsets of the originals' and translations' tables:
//              K file offsets each, of a structure
//              { u32 static offset; (u32 size, u32 segment)...; (u32 size, 0xffffffff) }
//              = `size` bytes of static text (taken in order from the static offset),
//              then that segment's text, ..., the last static part ending in the NUL.
// They are expanded the way libintl does at run time on this machine ("%<PRIu64>" ->
// "%lu" on x86-64 Linux, so the corpus holds the directives users see), or to "<NAME>"
// as msgunfmt writes them for a name this table does not know; "I" stays "I".
#include "mo.h"

#include <attograd/error.h>

#include <cctype>
#include <cinttypes>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace translate {

using ag::IOError;

// ---- the .mo reader ----------------------------------------------------------------
namespace {

constexpr uint32_t kMagic = 0x950412de;

struct MoReader {
  std::string_view bytes;
  const std::string& name;
  bool big_endian = false;
  // Bytes of strings handed out so far. msgfmt stores every string once, so they add up
  // to less than the file (0.94 of it at most over the 3951 catalogs of a Debian 12
  // machine); a file whose entries all point at one large string would otherwise expand
  // quadratically (100k entries at one 1 MB string: 200 GB from 3.2 MB).
  mutable uint64_t decoded = 0;

  void charge(uint64_t n, const char* which) const {
    decoded += n;
    AG_CHECK(decoded <= bytes.size(), IOError, name, ": the strings decode to more than the file's ", bytes.size(),
             " bytes (at a ", which, " string): string ranges overlap or repeat, which msgfmt never writes");
  }

  uint32_t u32(uint64_t at, const char* what) const {
    AG_CHECK(at + 4 <= bytes.size(), IOError, name, ": truncated: ", what, " at byte ", at,
             " is past the end of the file (", bytes.size(), " bytes)");
    auto b = [&](uint64_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])); };
    return big_endian ? (b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3)) : (b(3) << 24 | b(2) << 16 | b(1) << 8 | b(0));
  }

  // String i of the table at `table` (entries checked to lie in the file by the caller).
  std::string_view string(uint64_t table, uint32_t i, const char* which) const {
    const uint64_t entry = table + 8 * static_cast<uint64_t>(i);
    const uint32_t length = u32(entry, which), offset = u32(entry + 4, which);
    AG_CHECK(static_cast<uint64_t>(offset) + length <= bytes.size(), IOError, name, ": ", which, " string ", i, " (",
             length, " bytes at offset ", offset, ") runs past the end of the file (", bytes.size(), " bytes)");
    charge(length, which);
    return bytes.substr(offset, length);
  }
};

// A system-dependent segment's text on this machine (see the top of the file).
std::string expand_segment(std::string_view name) {
  // clang-format off
#define AG_PRI(w) {"PRId" #w, PRId##w}, {"PRIi" #w, PRIi##w}, {"PRIo" #w, PRIo##w}, \
                  {"PRIu" #w, PRIu##w}, {"PRIx" #w, PRIx##w}, {"PRIX" #w, PRIX##w}
  static const std::map<std::string_view, std::string_view> pri = {
      AG_PRI(8), AG_PRI(16), AG_PRI(32), AG_PRI(64), AG_PRI(MAX), AG_PRI(PTR)};
  // clang-format on
#undef AG_PRI
  if (name.size() <= 1) return std::string(name);
  if (auto it = pri.find(name); it != pri.end()) return std::string(it->second);
  return "<" + std::string(name) + ">";
}

// The system-dependent string whose structure starts at byte `at`.
std::string sysdep_string(const MoReader& r, uint64_t at, const std::vector<std::string>& segments, const char* which) {
  const std::size_t size = r.bytes.size();
  uint64_t text = r.u32(at, which);
  std::string out;
  for (uint64_t i = at + 4;; i += 8) {
    const uint32_t part = r.u32(i, which), segment = r.u32(i + 4, which);
    AG_CHECK(text + part <= size, IOError, r.name, ": truncated: a system-dependent ", which, " string's ", part,
             " bytes at offset ", text, " run past the end of the file (", size, " bytes)");
    r.charge(part, which);
    out.append(r.bytes.substr(text, part));
    text += part;
    if (segment == 0xffffffffu) {
      AG_CHECK(!out.empty() && out.back() == '\0', IOError, r.name, ": a system-dependent ", which,
               " string at offset ", at, " does not end in a NUL");
      out.pop_back();
      return out;
    }
    AG_CHECK(segment < segments.size(), IOError, r.name, ": a system-dependent ", which, " string at offset ", at,
             " names segment ", segment, " of ", segments.size());
    r.charge(segments[segment].size(), which);
    out += segments[segment];
  }
}

std::vector<std::string> split_nul(std::string_view s) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = s.find('\0', start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

MoCatalog parse_mo(std::string_view bytes, const std::string& name) {
  MoReader r{bytes, name};
  AG_CHECK(bytes.size() >= 28, IOError, name, ": not a .mo file: ", bytes.size(),
           " bytes, shorter than the 28-byte header");
  if (r.u32(0, "magic") != kMagic) {
    r.big_endian = true;
    AG_CHECK(r.u32(0, "magic") == kMagic, IOError, name, ": not a .mo file: bad magic number 0x", std::hex,
             r.u32(0, "magic"), std::dec, " (expected 0x950412de in either byte order)");
  }
  const uint32_t revision = r.u32(4, "revision");
  AG_CHECK(revision >> 16 <= 1, IOError, name, ": unsupported .mo revision ", revision >> 16, ".", revision & 0xffff);
  const bool has_sysdep = (revision & 0xffff) != 0;
  if (has_sysdep)
    AG_CHECK(bytes.size() >= 48, IOError, name, ": truncated: revision ", revision >> 16, ".", revision & 0xffff,
             " needs a 48-byte header, the file has ", bytes.size(), " bytes");
  const uint32_t n = r.u32(8, "string count"), originals = r.u32(12, "originals offset"),
                 translations = r.u32(16, "translations offset");
  // Both tables must lie in the file before any entry is read: this also rejects a huge
  // N up front instead of reading until an entry falls off the end.
  for (auto [table, which] : {std::pair{originals, "originals"}, std::pair{translations, "translations"}})
    AG_CHECK(static_cast<uint64_t>(table) + 8 * static_cast<uint64_t>(n) <= bytes.size(), IOError, name,
             ": truncated: the ", which, " table (", n, " entries of 8 bytes at offset ", table,
             ") runs past the end of the file (", bytes.size(), " bytes)");
  MoCatalog cat;
  cat.entries.reserve(n);
  auto add = [&cat](std::string_view id, std::string_view str) {
    MoEntry e;
    if (const std::size_t eot = id.find('\x04'); eot != std::string_view::npos) {
      e.context = id.substr(0, eot);
      id.remove_prefix(eot + 1);
    }
    if (const std::size_t nul = id.find('\0'); nul != std::string_view::npos) {
      e.msgid_plural = id.substr(nul + 1);
      id = id.substr(0, nul);
    }
    e.msgid = id;
    if (e.msgid.empty() && e.context.empty()) {
      cat.header = str;  // the header entry: metadata, not a message
      return;
    }
    e.msgstrs = split_nul(str);
    cat.entries.push_back(std::move(e));
  };
  for (uint32_t i = 0; i < n; ++i) add(r.string(originals, i, "original"), r.string(translations, i, "translation"));
  if (!has_sysdep) return cat;
  const uint32_t m = r.u32(28, "segment count"), segment_table = r.u32(32, "segments offset"),
                 k = r.u32(36, "system-dependent string count"), sysdep_originals = r.u32(40, "offset"),
                 sysdep_translations = r.u32(44, "offset");
  for (auto [table, entry, count, which] :
       {std::tuple{segment_table, 8u, m, "segments"}, std::tuple{sysdep_originals, 4u, k, "system-dependent originals"},
        std::tuple{sysdep_translations, 4u, k, "system-dependent translations"}})
    AG_CHECK(static_cast<uint64_t>(table) + uint64_t{entry} * count <= bytes.size(), IOError, name, ": truncated: the ",
             which, " table (", count, " entries of ", entry, " bytes at offset ", table,
             ") runs past the end of the file (", bytes.size(), " bytes)");
  std::vector<std::string> segments;
  for (uint32_t i = 0; i < m; ++i) {
    const std::string_view s = r.string(segment_table, i, "segment name");
    // Names are short macro names; the limit also bounds how much a file can expand.
    AG_CHECK(!s.empty() && s.back() == '\0' && s.size() <= 64, IOError, name, ": segment name ", i, " (", s.size(),
             " bytes) is not a NUL-terminated name of at most 63 bytes");
    segments.push_back(expand_segment(s.substr(0, s.find('\0'))));
  }
  for (uint32_t i = 0; i < k; ++i)
    add(sysdep_string(r, r.u32(sysdep_originals + 4ull * i, "offset"), segments, "original"),
        sysdep_string(r, r.u32(sysdep_translations + 4ull * i, "offset"), segments, "translation"));
  return cat;
}

MoCatalog read_mo(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  AG_CHECK(in.good(), IOError, path, ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  AG_CHECK(!in.bad(), IOError, path, ": read error");
  return parse_mo(ss.str(), path);
}

std::string header_charset(const std::string& header) {
  const std::size_t at = header.find("charset=");
  if (at == std::string::npos) return "";
  const std::size_t start = at + 8;
  std::size_t end = start;
  while (end < header.size() && !std::isspace(static_cast<unsigned char>(header[end])) && header[end] != ';') ++end;
  return header.substr(start, end - start);
}

}  // namespace translate
