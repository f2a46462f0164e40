// Helpers of the test_translate_data program (test_translate_data.cpp and the parts in
// test_translate_data/, one executable): .mo file bytes written by hand in either byte
// order, the sample catalog they hold, and writing them to disk.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace mo_test_util {

using Messages = std::vector<std::pair<std::string, std::string>>;

// A .mo file's bytes: (raw msgid, raw msgstr) in the given order, in either byte order.
// Layout as msgfmt writes it: the header, originals table right after it, translations
// table, then the strings, each followed by a NUL; no hash table. With `sysdep` messages
// ("<NAME>" marks a system-dependent segment) the revision is 0.1, the header 48 bytes,
// and the segment table and the two system-dependent tables follow the translations.
inline std::string write_mo(const Messages& messages, bool big_endian, const Messages& sysdep = {}) {
  std::string head, data;
  auto u32 = [&](std::string& out, uint64_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (big_endian ? 24 - 8 * i : 8 * i) & 0xff);
  };
  const uint64_t n = messages.size(), k = sysdep.size();
  // Split the system-dependent strings into (static text, segment) parts.
  std::vector<std::string> segments;
  struct Part {
    std::string text;
    int64_t segment;
  };  // segment -1: the final part
  auto parts_of = [&](const std::string& s) {
    std::vector<Part> parts;
    std::size_t at = 0;
    for (std::size_t lt; (lt = s.find('<', at)) != std::string::npos;) {
      const std::size_t gt = s.find('>', lt);
      const std::string name = s.substr(lt + 1, gt - lt - 1);
      auto it = std::find(segments.begin(), segments.end(), name);
      if (it == segments.end()) it = segments.insert(segments.end(), name);
      parts.push_back({s.substr(at, lt - at), it - segments.begin()});
      at = gt + 1;
    }
    parts.push_back({s.substr(at) + '\0', -1});
    return parts;
  };
  std::vector<std::vector<Part>> sysdep_parts;
  for (int side = 0; side < 2; ++side)
    for (const auto& m : sysdep) sysdep_parts.push_back(parts_of(side == 0 ? m.first : m.second));
  const uint64_t m = segments.size(), header_size = k ? 48 : 28;
  const uint64_t originals = header_size, translations = originals + 8 * n, segment_table = translations + 8 * n,
                 sysdep_originals = segment_table + 8 * m, sysdep_translations = sysdep_originals + 4 * k,
                 data_start = sysdep_translations + 4 * k;
  std::string tables, sysdep_tables;
  auto add = [&](const std::string& s) {  // s (with its NUL) in the data: its offset
    const uint64_t at = data_start + data.size();
    data += s;
    return at;
  };
  for (int side = 0; side < 2; ++side)
    for (const auto& msg : messages) {
      const std::string& s = side == 0 ? msg.first : msg.second;
      u32(tables, s.size()), u32(tables, add(s + '\0'));
    }
  for (const auto& name : segments) u32(tables, name.size() + 1), u32(tables, add(name + '\0'));
  for (const auto& parts : sysdep_parts) {
    std::string text, record;
    for (const auto& p : parts) text += p.text;
    u32(record, add(text));
    for (const auto& p : parts)
      u32(record, p.text.size()), u32(record, p.segment < 0 ? 0xffffffffu : uint64_t(p.segment));
    u32(sysdep_tables, add(record));
  }
  u32(head, 0x950412de), u32(head, k ? 1 : 0), u32(head, n), u32(head, originals), u32(head, translations);
  u32(head, 0), u32(head, data_start);  // no hash table
  if (k)
    u32(head, m), u32(head, segment_table), u32(head, k), u32(head, sysdep_originals), u32(head, sysdep_translations);
  return head + tables + sysdep_tables + data;
}

inline const std::string header =
    "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n";

// msgfmt sorts by msgid; the reader keeps file order whatever it is.
inline Messages sample_messages() {
  using namespace std::string_literals;
  return {{"", header},
          {"%d file\0%d files"s, "%d fichier\0%d fichiers"s},
          {"Cannot open %s"s, "Impossible d'ouvrir %s"s},
          {"menu\x04Open"s, "Ouvrir"s},
          {"noun\x04%zu entry\0%zu entries"s, "%zu entrée\0%zu entrées"s}};
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace mo_test_util
