// test_translate_data, part: the .mo reader on files written here in both byte orders
// (plural forms, contexts, header, system-dependent strings) and on damaged, truncated
// and randomly corrupted files (IOError naming the file, never a crash).
#include <attograd/error.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../mo_test_util.h"
#include "translate/mo.h"

using namespace translate;
using namespace mo_test_util;
namespace fs = std::filesystem;

namespace {

// The message of the IOError that f throws, "" if it throws none.
std::string io_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ag::IOError& e) { return e.what(); }
  return "";
}

void set_u32_le(std::string& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>(v >> 8 * i & 0xff);
}
uint32_t get_u32_le(const std::string& b, std::size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// Two system-dependent messages: "<NAME>" marks a segment (PRIu64, PRIxMAX, I, odd).
Messages sysdep_messages() {
  using namespace std::string_literals;
  return {{"%<PRIu64> byte\0%<PRIu64> bytes"s, "%<PRIu64> octet\0%<PRIu64> octets"s},
          {"ctx\x04offset %<PRIxMAX> (%<I>d) <odd>"s, "décalage %<PRIxMAX> (%<I>d) <odd>"s}};
}

}  // namespace

TEST_CASE("read_mo: both byte orders, plural forms, contexts, header left out") {
  for (bool big : {false, true}) {
    CAPTURE(big);
    const fs::path path = fs::path(AG_TMP_DIR) / "translate" / (big ? "be.mo" : "le.mo");
    write_file(path, write_mo(sample_messages(), big));
    const MoCatalog cat = read_mo(path.string());
    CHECK(cat.header == header);
    CHECK(header_charset(cat.header) == "UTF-8");
    REQUIRE(cat.entries.size() == 4);
    const MoEntry& plural = cat.entries[0];
    CHECK(plural.context.empty());
    CHECK(plural.msgid == "%d file");
    CHECK(plural.msgid_plural == "%d files");
    CHECK(plural.msgstrs == std::vector<std::string>{"%d fichier", "%d fichiers"});
    CHECK(cat.entries[1].msgid == "Cannot open %s");
    CHECK(cat.entries[1].msgid_plural.empty());
    CHECK(cat.entries[1].msgstrs == std::vector<std::string>{"Impossible d'ouvrir %s"});
    CHECK(cat.entries[2].context == "menu");
    CHECK(cat.entries[2].msgid == "Open");
    CHECK(cat.entries[2].msgstrs == std::vector<std::string>{"Ouvrir"});
    CHECK(cat.entries[3].context == "noun");
    CHECK(cat.entries[3].msgid == "%zu entry");
    CHECK(cat.entries[3].msgid_plural == "%zu entries");
    CHECK(cat.entries[3].msgstrs.size() == 2);
  }
  // System-dependent strings come after the others, their segments expanded for this
  // machine: PRIu64 and PRIxMAX are <cinttypes>'s, "I" stays, an unknown name is "<NAME>".
  for (bool big : {false, true}) {
    const MoCatalog cat = parse_mo(write_mo(sample_messages(), big, sysdep_messages()), "r1.mo");
    REQUIRE(cat.entries.size() == 6);
    CHECK(cat.entries[3].msgid == "%zu entry");
    CHECK(cat.entries[4].msgid == "%" PRIu64 " byte");
    CHECK(cat.entries[4].msgid_plural == "%" PRIu64 " bytes");
    CHECK(cat.entries[4].msgstrs == std::vector<std::string>{"%" PRIu64 " octet", "%" PRIu64 " octets"});
    CHECK(cat.entries[5].context == "ctx");
    CHECK(cat.entries[5].msgid == "offset %" PRIxMAX " (%Id) <odd>");
    CHECK(cat.entries[5].msgstrs[0] == "décalage %" PRIxMAX " (%Id) <odd>");
  }
  // An empty catalog is fine.
  CHECK(parse_mo(write_mo({}, true), "empty.mo").entries.empty());
}

TEST_CASE("read_mo: damaged files throw IOError naming the file and what is wrong") {
  const std::string good = write_mo(sample_messages(), false);
  const std::string name = "/some/dir/broken.mo";
  auto error_of = [&](const std::string& bytes) { return io_error([&] { parse_mo(bytes, name); }); };
  auto check = [&](const std::string& bytes, const std::string& what) {
    const std::string e = error_of(bytes);
    CAPTURE(e);
    CHECK(e.find(name) != std::string::npos);
    CHECK(e.find(what) != std::string::npos);
  };
  std::string bad = good;
  bad[0] = 'X';
  check(bad, "bad magic");
  check(good.substr(0, 20), "shorter than the 28-byte header");
  check("", "shorter than the 28-byte header");
  // Revision 2.0 is not this format.
  bad = good, set_u32_le(bad, 4, 2u << 16);
  check(bad, "unsupported .mo revision 2.0");
  // The file cut inside the translations table (it starts at 28 + 5 * 8 = 68).
  check(good.substr(0, 80), "translations table");
  // N huge: 0x20000000 entries of 8 bytes cannot fit; 0xffffffff must not overflow.
  bad = good, set_u32_le(bad, 8, 0x20000000u);
  check(bad, "originals table");
  bad = good, set_u32_le(bad, 8, 0xffffffffu);
  check(bad, "past the end");
  // Originals table offset past the end.
  bad = good, set_u32_le(bad, 12, 0xfffffff0u);
  check(bad, "originals table");
  // Entry 1's string offset past the end (entry i of originals: length at 28 + 8i, offset at +4).
  bad = good, set_u32_le(bad, 28 + 8 + 4, static_cast<uint32_t>(good.size()) + 10);
  check(bad, "original string 1");
  // Entry 2's translation length runs past the end (its offset fits).
  bad = good, set_u32_le(bad, 68 + 16, 0xffffffffu);
  check(bad, "translation string 2");

  // System-dependent strings (revision 0.1, little-endian).
  const std::string r1 = write_mo(sample_messages(), false, sysdep_messages());
  check(r1.substr(0, 40), "needs a 48-byte header");
  bad = r1, set_u32_le(bad, 28, 1);  // 1 segment declared, segments 1..3 used
  check(bad, "names segment 1 of 1");
  bad = r1, set_u32_le(bad, 40, static_cast<uint32_t>(r1.size()) - 4);
  check(bad, "system-dependent originals table");
  // The first original's record: { text offset, (1, 0), (7, 0), (7, END) } for
  // "%" PRIu64 " byte\0%" PRIu64 " bytes\0".
  const uint32_t record = get_u32_le(r1, get_u32_le(r1, 40));
  REQUIRE(get_u32_le(r1, record + 20) == 7);
  bad = r1, set_u32_le(bad, record, static_cast<uint32_t>(r1.size()));
  check(bad, "run past the end");
  bad = r1, set_u32_le(bad, record + 20, 6);
  check(bad, "does not end in a NUL");
  bad = r1, set_u32_le(bad, record + 24, 7);  // END overwritten: parts run on to the table's end
  CHECK(!error_of(bad).empty());

  // read_mo on a missing file: IOError naming it.
  const std::string missing = std::string(AG_TMP_DIR) + "/translate/no_such.mo";
  CHECK(io_error([&] { read_mo(missing); }).find(missing) != std::string::npos);
}

TEST_CASE("read_mo: entries sharing one string range cannot expand the file (a decompression bomb)") {
  // 1000 entries whose msgid and msgstr all point at one 10 KB string: 20 MB of strings
  // from a 26 KB file (100k entries at 1 MB: 200 GB from 3.2 MB). msgfmt stores each
  // string once, so decoded strings never add up to more than the file.
  const uint32_t n = 1000, big = 10000, data = 28 + 16 * n;
  std::string bytes(data + big + 1, 'a');
  set_u32_le(bytes, 0, 0x950412de), set_u32_le(bytes, 4, 0), set_u32_le(bytes, 8, n);
  set_u32_le(bytes, 12, 28), set_u32_le(bytes, 16, 28 + 8 * n), set_u32_le(bytes, 20, 0), set_u32_le(bytes, 24, 0);
  for (uint32_t i = 0; i < 2 * n; ++i) set_u32_le(bytes, 28 + 8 * i, big), set_u32_le(bytes, 28 + 8 * i + 4, data);
  const auto start = std::chrono::steady_clock::now();
  const std::string e = io_error([&] { parse_mo(bytes, "bomb.mo"); });
  CAPTURE(e);
  CHECK(e.find("bomb.mo: the strings decode to more than the file's 26029 bytes") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  // The same entries each with their own string parse.
  Messages distinct;
  for (uint32_t i = 0; i < 50; ++i) distinct.push_back({"id" + std::to_string(i), std::string(big / 50, 'x')});
  CHECK(parse_mo(write_mo(distinct, false), "fine.mo").entries.size() == 50);
}

TEST_CASE("read_mo: every truncation and random corruption either parses or throws IOError") {
  const std::string good = write_mo(sample_messages(), true);
  int thrown = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    try {
      parse_mo(good.substr(0, n), "cut.mo");
    } catch (const ag::IOError&) { ++thrown; }
  }
  // Cut anywhere before the last string's end, some string or table falls off the file;
  // only the final NUL can go (lengths do not count it).
  CHECK(thrown == static_cast<int>(good.size()) - 1);
  const std::string r1 = write_mo(sample_messages(), false, sysdep_messages());
  for (std::size_t n = 0; n < r1.size(); ++n)
    CHECK_THROWS_AS(parse_mo(r1.substr(0, n), "cut.mo"), ag::IOError);  // the last record ends the file
  std::mt19937 gen(13);
  for (int trial = 0; trial < 4000; ++trial) {
    std::string bad = trial % 2 ? good : r1;
    for (int k = 0; k < 3; ++k) bad[gen() % bad.size()] = static_cast<char>(gen());
    try {
      parse_mo(bad, "random.mo");
    } catch (const ag::IOError& e) { CHECK(std::string(e.what()).find("random.mo") != std::string::npos); }
  }
}
