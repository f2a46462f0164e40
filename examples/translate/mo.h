#pragma once
// GNU gettext's binary .mo catalogs, read by our own parser (the format and why not
// libintl: mo.cpp). Fuzzed by tests/fuzz/fuzz_mo.cpp.
#include <string>
#include <string_view>
#include <vector>

namespace translate {

// ---- the .mo reader ----------------------------------------------------------------

// One message of a catalog. A msgid stored as "ctx\x04msgid" has its context split off;
// one stored as "singular\0plural" has a plural form, and then msgstrs holds one
// translation per plural form of the language (French: [0] for n <= 1, [1] for n > 1).
struct MoEntry {
  std::string context, msgid, msgid_plural;
  std::vector<std::string> msgstrs;  // at least one (possibly empty) string
};

struct MoCatalog {
  std::string header;  // the msgstr of the empty msgid ("Content-Type: ..."), "" if none
  // In file order (msgfmt sorts them by msgid), then the system-dependent ones; header left out.
  std::vector<MoEntry> entries;
};

// Parses the bytes of a .mo file in either byte order (major revisions 0 and 1, system-
// dependent strings included, expanded for this machine: see mo.cpp). Every
// offset and length is checked against bytes.size(): a damaged or truncated file throws
// IOError naming `name` and what is wrong, and never reads out of bounds.
MoCatalog parse_mo(std::string_view bytes, const std::string& name);
// read_mo(path) = parse_mo(contents of path, path); IOError if it cannot be read.
MoCatalog read_mo(const std::string& path);

// The charset= value of a catalog header ("UTF-8", "iso-8859-1"), "" if none.
std::string header_charset(const std::string& header);

}  // namespace translate
