// Parallel corpus from gettext catalogs: see catalog.h.
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
#include "catalog.h"

#include "split.h"

#include <attograd/error.h>
#include <attograd/log.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

namespace translate {

using ag::IOError;
using ag::ValueError;

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

// ---- loading a language ------------------------------------------------------------

const std::vector<CatalogSource>& default_catalogs() {
  // clang-format off
  static const std::vector<CatalogSource> list = {
      // GNU core tools first: their translations are kept when other catalogs share a message.
      {"coreutils", "coreutils"}, {"findutils", "findutils"}, {"grep", "grep"}, {"sed", "sed"}, {"tar", "tar"},
      {"diffutils", "diffutils"}, {"bash", "bash"}, {"gettext-tools", "gettext"}, {"gettext-runtime", "gettext-base"},
      {"libc", "libc-l10n"}, {"make", "make"}, {"m4", "m4"},
      // toolchain
      {"binutils", "binutils-common"}, {"bfd", "binutils-common"}, {"gas", "binutils-common"},
      {"ld", "binutils-common"}, {"gold", "binutils-common"}, {"gprof", "binutils-common"},
      {"opcodes", "binutils-common"},
      // version control, crypto
      {"git", "git"}, {"gnupg2", "gnupg-l10n"}, {"gnutls30", "libgnutls30"}, {"libidn2", "libidn2-0"},
      // Debian packaging and system tools
      {"dpkg", "dpkg"}, {"dpkg-dev", "libdpkg-perl"}, {"apt", "apt"}, {"libapt-pkg6.0", "libapt-pkg6.0"},
      {"adduser", "adduser"}, {"procps-ng", "procps"}, {"psmisc", "psmisc"}, {"shadow", "login"},
      {"Linux-PAM", "libpam-runtime"}, {"systemd", "systemd"}, {"man-db", "man-db"}, {"wget", "wget"},
      {"xz", "xz-utils"}, {"net-tools", "net-tools"},
      // desktop libraries
      {"glib20", "libglib2.0-data"}, {"gtk20", "libgtk2.0-common"}, {"gtk20-properties", "libgtk2.0-common"},
      {"gdk-pixbuf", "libgdk-pixbuf2.0-common"}, {"gstreamer-1.0", "libgstreamer1.0-0"},
      {"gst-plugins-base-1.0", "libgstreamer-plugins-base1.0-0"}, {"at-spi2-core", "at-spi2-common"},
      {"avahi", "libavahi-common-data"}, {"PackageKit", "packagekit"}, {"appstream", "appstream"},
      {"gsettings-desktop-schemas", "gsettings-desktop-schemas"},
      // PostgreSQL 15 (Debian 12's version) and a COBOL compiler: large catalogs of messages
      {"postgres-15", "postgresql-15"}, {"psql-15", "postgresql-client-15"}, {"pg_dump-15", "postgresql-client-15"},
      {"pg_basebackup-15", "postgresql-client-15"}, {"pgscripts-15", "postgresql-client-15"},
      {"libpq5-15", "libpq5"}, {"initdb-15", "postgresql-15"}, {"pg_ctl-15", "postgresql-15"},
      {"pg_upgrade-15", "postgresql-15"}, {"pg_rewind-15", "postgresql-15"}, {"plpgsql-15", "postgresql-15"},
      {"gnucobol", "gnucobol3"},
  };
  // clang-format on
  return list;
}

std::vector<std::string> default_packages() {
  std::vector<std::string> names;
  for (const auto& c : default_catalogs()) names.emplace_back(c.name);
  return names;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string latin1_to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xc0 | c >> 6);
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

}  // namespace

Catalogs load_pairs(const std::string& lang, const std::vector<std::string>& packages, const std::string& root) {
  AG_CHECK(!lang.empty() && lang.find('/') == std::string::npos, ValueError, "load_pairs: bad language \"", lang, "\"");
  Catalogs out;
  for (const auto& package : packages) {
    PackageCount count{package, "ok"};
    const std::string path = root + "/" + lang + "/LC_MESSAGES/" + package + ".mo";
    MoCatalog cat;
    if (!std::filesystem::is_regular_file(path)) {
      count.status = "missing";
      ag::log().warn("translate data: {} is missing: package {} skipped", path, package);
      out.packages.push_back(count);
      continue;
    }
    try {
      cat = read_mo(path);
    } catch (const IOError& e) {
      count.status = std::string("damaged: ") + e.what();
      ag::log().warn("translate data: skipping damaged catalog {}", e.what());
      out.packages.push_back(count);
      continue;
    }
    // Catalogs without a header or with msgfmt's placeholder are taken as UTF-8.
    const std::string charset = lower(header_charset(cat.header));
    const bool utf8 = charset.empty() || charset == "utf-8" || charset == "utf8" || charset == "charset" ||
                      charset == "ascii" || charset == "us-ascii";
    const bool latin1 = charset == "iso-8859-1" || charset == "iso8859-1" || charset == "latin1";
    if (!utf8 && !latin1) {
      count.status = "charset " + charset + " not supported";
      ag::log().warn("translate data: {}: charset {} not supported: skipped", path, charset);
      out.packages.push_back(count);
      continue;
    }
    auto text = [&](const std::string& s) { return latin1 ? latin1_to_utf8(s) : s; };
    count.entries = static_cast<int64_t>(cat.entries.size());
    const std::size_t before = out.pairs.size();
    for (const auto& e : cat.entries) {
      out.pairs.push_back(Pair{text(e.msgid), text(e.msgstrs[0]), package, false, text(e.msgid)});
      if (!e.msgid_plural.empty() && e.msgstrs.size() >= 2)
        out.pairs.push_back(Pair{text(e.msgid_plural), text(e.msgstrs[1]), package, true, text(e.msgid)});
    }
    count.pairs = static_cast<int64_t>(out.pairs.size() - before);
    ag::log().info("translate data: {:<26} {:>6} messages {:>6} pairs", package, count.entries, count.pairs);
    out.packages.push_back(count);
  }
  return out;
}

// ---- cleaning ----------------------------------------------------------------------

std::string normalize_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t space_bytes = 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
      space_bytes = 1;
    else if (s.substr(i, 2) == "\xc2\xa0")
      space_bytes = 2;  // U+00A0 no-break space
    else if (s.substr(i, 3) == "\xe2\x80\xaf")
      space_bytes = 3;  // U+202F narrow no-break space
    if (space_bytes) {
      pending_space = !out.empty();
      i += space_bytes;
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += s[i++];
  }
  return out;
}

std::string strip_accelerator(std::string_view s) {
  const std::size_t at = s.find('_');
  if (at == std::string_view::npos || s.find('_', at + 1) != std::string_view::npos) return std::string(s);
  const bool word_start = at == 0 || s[at - 1] == ' ';
  // A letter follows: ASCII, or the lead byte of a non-ASCII character ("_Édition").
  const bool letter_follows = at + 1 < s.size() && (std::isalpha(static_cast<unsigned char>(s[at + 1])) ||
                                                    static_cast<unsigned char>(s[at + 1]) >= 0xc0);
  if (!word_start || !letter_follows) return std::string(s);
  std::string out(s);
  out.erase(at, 1);
  return out;
}

int64_t utf8_length(std::string_view s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; });
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n;
    uint32_t cp, min;
    if (c < 0x80)
      n = 1, cp = c, min = 0;
    else if ((c & 0xe0) == 0xc0)
      n = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
      n = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
      n = 4, cp = c & 0x07, min = 0x10000;
    else
      return false;
    if (i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

std::vector<Pair> clean_pairs(const std::vector<Pair>& pairs, const CleanOptions& o, CleanStats* stats) {
  AG_CHECK(o.max_chars > 0 && o.max_length_ratio >= 1, ValueError, "clean_pairs: max_chars ", o.max_chars,
           " must be > 0 and max_length_ratio ", o.max_length_ratio, " >= 1");
  CleanStats st;
  st.input = static_cast<int64_t>(pairs.size());
  std::vector<Pair> out;
  for (const auto& p : pairs) {
    Pair q{normalize_whitespace(p.source), normalize_whitespace(p.target), p.package, p.plural, p.entry};
    if (o.strip_accelerators) q.source = strip_accelerator(q.source), q.target = strip_accelerator(q.target);
    const int64_t ls = utf8_length(q.source), lt = utf8_length(q.target);
    const auto longer = static_cast<double>(std::max(ls, lt)), shorter = static_cast<double>(std::min(ls, lt));
    // The counter of the first rule that drops the pair, nullptr if it is kept.
    int64_t* dropped = p.plural && !o.plural_pairs                             ? &st.plural
                       : !valid_utf8(p.source) || !valid_utf8(p.target)        ? &st.invalid_utf8
                       : q.source.empty() || q.target.empty()                  ? &st.empty
                       : o.drop_identical && q.source == q.target              ? &st.identical
                       : longer > static_cast<double>(o.max_chars)             ? &st.too_long
                       : longer >= 16 && longer > o.max_length_ratio * shorter ? &st.ratio
                                                                               : nullptr;
    if (dropped)
      ++*dropped;
    else
      out.push_back(std::move(q));
  }
  st.kept = static_cast<int64_t>(out.size());
  if (stats) *stats = st;
  return out;
}

// ---- deduplication and split -------------------------------------------------------

std::vector<Pair> dedup_by_source(const std::vector<Pair>& pairs) {
  std::unordered_set<std::string> seen;
  std::vector<Pair> out;
  for (const auto& p : pairs)
    if (seen.insert(p.source).second) out.push_back(p);
  return out;
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

const char* split_name(Split s) { return s == Split::train ? "train" : s == Split::validation ? "validation" : "test"; }

Split split_of(std::string_view source, const SplitOptions& o) {
  AG_CHECK(o.test >= 0 && o.validation >= 0 && o.test + o.validation <= 1, ValueError, "split: fractions test ", o.test,
           " and validation ", o.validation, " must be >= 0 with a sum <= 1");
  const auto bucket = static_cast<double>(fnv1a64(source) % 10000);
  if (bucket < o.test * 10000) return Split::test;
  if (bucket < (o.test + o.validation) * 10000) return Split::validation;
  return Split::train;
}

Splits split_pairs(const std::vector<Pair>& pairs, const SplitOptions& o) {
  Splits s;
  for (const auto& p : pairs) {
    switch (split_of(p.source, o)) {
      case Split::train: s.train.push_back(p); break;
      case Split::validation: s.validation.push_back(p); break;
      case Split::test: s.test.push_back(p); break;
    }
  }
  return s;
}

// ---- the whole pipeline ------------------------------------------------------------

Corpus build_corpus(const std::string& lang, const std::vector<std::string>& packages, const std::string& root,
                    const CleanOptions& clean, const SplitOptions& split, double similarity) {
  Catalogs cats = load_pairs(lang, packages, root);
  Corpus c;
  c.packages = std::move(cats.packages);
  c.raw = static_cast<int64_t>(cats.pairs.size());
  const std::vector<Pair> cleaned = clean_pairs(cats.pairs, clean, &c.clean);
  c.cleaned = static_cast<int64_t>(cleaned.size());
  const std::vector<Pair> unique = dedup_by_source(cleaned);
  c.unique = static_cast<int64_t>(unique.size());
  std::map<std::string, int64_t> kept;
  for (const auto& p : unique) ++kept[p.package];
  for (const auto& pc : c.packages)
    if (pc.status == "ok") c.kept_per_package.emplace_back(pc.package, kept[pc.package]);
  c.splits = split_by_cluster(unique, split, similarity, &c.split);
  const auto& s = c.clean;
  int64_t used = 0;
  for (const auto& pc : c.packages) used += pc.status == "ok";
  ag::log().info("translate data: {} -> {}: {} of {} catalogs read, {} pairs", "en", lang, used, c.packages.size(),
                 c.raw);
  ag::log().info(
      "translate data: cleaning dropped {} plural, {} invalid UTF-8, {} empty, {} identical, {} over {} "
      "characters, {} over length ratio {}: {} kept",
      s.plural, s.invalid_utf8, s.empty, s.identical, s.too_long, clean.max_chars, s.ratio, clean.max_length_ratio,
      s.kept);
  std::string per_package;
  for (const auto& [package, n] : c.kept_per_package) per_package += " " + package + " " + std::to_string(n);
  ag::log().info("translate data: kept per package (first translation of each text):{}", per_package);
  const SplitStats& st = c.split;
  ag::log().info(
      "translate data: {} unique English texts in {} clusters (normalized text, plural entries, 3-gram Jaccard >= {}; "
      "largest {}): train {} ({} clusters), validation {} ({}), test {} ({})",
      c.unique, st.clusters[0] + st.clusters[1] + st.clusters[2], st.threshold, st.largest_cluster, st.messages[0],
      st.clusters[0], st.messages[1], st.clusters[1], st.messages[2], st.clusters[2]);
  ag::log().info(
      "translate data: test -> train nearest neighbour: largest similarity {:.3f}, {} test sources >= {}, {} with "
      "the same normalized text in train",
      st.max_test_train_similarity, st.test_near_train, st.threshold, st.test_with_train_normalized_twin);
  std::string deciles;
  for (int k = 0; k < 10; ++k) deciles += " " + std::to_string(st.test_nearest_histogram[k]);
  ag::log().info("translate data: test sources by nearest training similarity, 0-0.1 ... 0.9-1:{}", deciles);
  return c;
}

}  // namespace translate
