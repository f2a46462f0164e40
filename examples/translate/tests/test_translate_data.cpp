// The translate example's corpus from gettext catalogs: the .mo reader on files written
// here in both byte orders (plural forms, contexts, header), damaged files (IOError
// naming the file, never a crash), the loader skipping them, each cleaning rule, dedup,
// and the split's hash fixed by hand-checked values.
#include <attograd/error.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "translate/catalog.h"

using namespace translate;
namespace fs = std::filesystem;

namespace {

using Messages = std::vector<std::pair<std::string, std::string>>;

// A .mo file's bytes: (raw msgid, raw msgstr) in the given order, in either byte order.
// Layout as msgfmt writes it: the header, originals table right after it, translations
// table, then the strings, each followed by a NUL; no hash table. With `sysdep` messages
// ("<NAME>" marks a system-dependent segment) the revision is 0.1, the header 48 bytes,
// and the segment table and the two system-dependent tables follow the translations.
std::string write_mo(const Messages& messages, bool big_endian, const Messages& sysdep = {}) {
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

const std::string header = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n";

// msgfmt sorts by msgid; the reader keeps file order whatever it is.
Messages sample_messages() {
  using namespace std::string_literals;
  return {{"", header},
          {"%d file\0%d files"s, "%d fichier\0%d fichiers"s},
          {"Cannot open %s"s, "Impossible d'ouvrir %s"s},
          {"menu\x04Open"s, "Ouvrir"s},
          {"noun\x04%zu entry\0%zu entries"s, "%zu entrée\0%zu entrées"s}};
}

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

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

TEST_CASE("fnv1a64: hand-checked values; the split bucket of given strings is fixed") {
  // FNV-1a 64 of "" is the offset basis; of "a": (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3
  // mod 2^64; of "foobar": the FNV reference test vector.
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  // Buckets (hash % 10000) computed with a Python FNV-1a: "message 35" 88 and
  // "message 66" 152 (< 200: test), "message 97" 216 and "message 101" 380 (< 400:
  // validation), "a" 1996 and "%s: cannot open" 9000 (train).
  CHECK(fnv1a64("message 35") % 10000 == 88);
  CHECK(split_of("message 35") == Split::test);
  CHECK(split_of("message 66") == Split::test);
  CHECK(split_of("message 97") == Split::validation);
  CHECK(split_of("message 101") == Split::validation);
  CHECK(split_of("a") == Split::train);
  CHECK(split_of("%s: cannot open") == Split::train);
  // Other fractions move the boundaries: with test 0.25, bucket 1996 of "a" is test.
  CHECK(split_of("a", SplitOptions{0.25, 0.0}) == Split::test);
  CHECK_THROWS_AS(split_of("a", SplitOptions{0.7, 0.5}), ag::ValueError);

  // split_pairs keeps order within each part, and 100,000 strings land near 2/2/96%
  // (Python count: 2070 / 1972 / 95958).
  std::vector<Pair> pairs;
  for (int i = 0; i < 100000; ++i) pairs.push_back({"x" + std::to_string(i), "y", "p"});
  Splits s = split_pairs(pairs);
  CHECK(s.test.size() == 2070);
  CHECK(s.validation.size() == 1972);
  CHECK(s.train.size() == 95958);
  CHECK(std::is_sorted(s.test.begin(), s.test.end(), [](const Pair& a, const Pair& b) {
    return std::stoi(a.source.substr(1)) < std::stoi(b.source.substr(1));
  }));
}

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

TEST_CASE("load_pairs: reads the packages in order, skips missing and damaged catalogs, converts Latin-1") {
  const fs::path root = fs::path(AG_TMP_DIR) / "translate" / "locale";
  fs::remove_all(root);
  const fs::path dir = root / "xx" / "LC_MESSAGES";
  write_file(dir / "one.mo", write_mo(sample_messages(), false));
  write_file(dir / "broken.mo", write_mo(sample_messages(), true).substr(0, 50));
  // Latin-1: "é" is the single byte 0xe9.
  write_file(dir / "latin.mo", write_mo({{"", "Content-Type: text/plain; charset=iso-8859-1\n"},
                                         {"Error", "Erreur"},
                                         {"Write",
                                          "\xe9"
                                          "crire"}},
                                        true));
  write_file(dir / "koi.mo", write_mo({{"", "Content-Type: text/plain; charset=KOI8-R\n"}, {"Yes", "Da"}}, false));
  const Catalogs c = load_pairs("xx", {"one", "missing", "broken", "latin", "koi"}, root.string());
  REQUIRE(c.packages.size() == 5);
  CHECK(c.packages[0].status == "ok");
  CHECK(c.packages[0].entries == 4);
  CHECK(c.packages[0].pairs == 6);  // 4 messages, 2 of them with a plural pair
  CHECK(c.packages[1].status == "missing");
  CHECK(c.packages[2].status.rfind("damaged: ", 0) == 0);
  CHECK(c.packages[2].status.find("broken.mo") != std::string::npos);
  CHECK(c.packages[3].status == "ok");
  CHECK(c.packages[3].pairs == 2);
  CHECK(c.packages[4].status == "charset koi8-r not supported");
  REQUIRE(c.pairs.size() == 8);
  CHECK(c.pairs[0].source == "%d file");
  CHECK(c.pairs[0].target == "%d fichier");
  CHECK(!c.pairs[0].plural);
  CHECK(c.pairs[1].source == "%d files");
  CHECK(c.pairs[1].target == "%d fichiers");
  CHECK(c.pairs[1].plural);
  CHECK(c.pairs[3].source == "Open");  // the context is not part of the pair
  CHECK(c.pairs[7].package == "latin");
  CHECK(c.pairs[7].target ==
        "\xc3\xa9"
        "crire");  // é in UTF-8
  CHECK_THROWS_AS(load_pairs("../etc", {"one"}, root.string()), ag::ValueError);
}

TEST_CASE("clean_pairs: each rule") {
  CHECK(normalize_whitespace("  usage:\t%s [OPTION]...\n\n  list  files\n") == "usage: %s [OPTION]... list files");
  // U+00A0 and U+202F before ':' become plain spaces.
  CHECK(normalize_whitespace("%s\xc2\xa0: %s\xe2\x80\xaf!") == "%s : %s !");
  CHECK(normalize_whitespace(" \n\t ").empty());
  CHECK(strip_accelerator("_Open") == "Open");
  CHECK(strip_accelerator("Save _As") == "Save As");
  CHECK(strip_accelerator("_\xc3\x89"
                          "dition") ==
        "\xc3\x89"
        "dition");
  CHECK(strip_accelerator("GIT_DIR is set") == "GIT_DIR is set");                // not at a word start
  CHECK(strip_accelerator("_GLOBAL_OFFSET_TABLE_") == "_GLOBAL_OFFSET_TABLE_");  // several underscores
  CHECK(strip_accelerator("_1 item") == "_1 item");                              // no letter follows
  CHECK(utf8_length("\xc3\xa9"
                    "crire") == 6);
  CHECK(valid_utf8("\xc3\xa9"));
  CHECK(
      !valid_utf8("\xe9"
                  "crire"));           // a Latin-1 byte
  CHECK(!valid_utf8("\xc0\xaf"));      // overlong '/'
  CHECK(!valid_utf8("\xed\xa0\x80"));  // a surrogate
  CHECK(!valid_utf8("\xe2\x82"));      // cut sequence

  const std::string s200(200, 'a'), s201(201, 'b');
  std::vector<Pair> in = {
      {"Cannot open %1$s: %2$s\n", "Impossible d'ouvrir %1$s : %2$s\n", "p"},  // kept, directives intact
      {"%zu files", "%zu fichiers", "p", true},                                // plural: kept by default
      {"Unused", "", "p"},                                                     // empty
      {"  \n", "x", "p"},                                                      // empty after normalizing
      {"GNU", "GNU", "p"},                                                     // identical
      {"_Open", "Open", "p"},                                                  // identical once stripped
      {s200, s200 + "x", "p"},                                                 // target over 200
      {s200, std::string(199, 'c'), "p"},                                      // 200: kept
      {s201, "b", "p"},                                                        // too long (checked first)
      {"Short one here!!", "x", "p"},                                          // 16 vs 1: ratio
      {"Fifteen chars!!", "x", "p"},                                           // 15: under the ratio rule's 16
      {"bad \xe9", "bad", "p"},                                                // invalid UTF-8
      {"%-10s %lld", "%-10s %lld ", "p"},                                      // identical after trim
  };
  CleanStats st;
  std::vector<Pair> out = clean_pairs(in, CleanOptions{}, &st);
  REQUIRE(out.size() == 4);
  CHECK(out[0].source == "Cannot open %1$s: %2$s");
  CHECK(out[0].target == "Impossible d'ouvrir %1$s : %2$s");
  CHECK(out[1].plural);
  CHECK(out[2].source == s200);
  CHECK(out[3].source == "Fifteen chars!!");
  CHECK(st.input == 13);
  CHECK(st.kept == 4);
  CHECK(st.plural == 0);
  CHECK(st.empty == 2);
  CHECK(st.identical == 3);
  CHECK(st.too_long == 2);
  CHECK(st.ratio == 1);
  CHECK(st.invalid_utf8 == 1);

  CleanOptions o;
  o.plural_pairs = false, o.drop_identical = false, o.strip_accelerators = false, o.max_chars = 300;
  o.max_length_ratio = 1000;  // s201 -> "b" is 201:1
  out = clean_pairs(in, o, &st);
  CHECK(st.plural == 1);
  CHECK(st.identical == 0);
  CHECK(st.too_long == 0);
  CHECK(st.ratio == 0);
  CHECK(out.size() == 9);
  CHECK(out[2].source == "_Open");
  CHECK_THROWS_AS(clean_pairs(in, CleanOptions{.max_chars = 0}), ag::ValueError);
}

TEST_CASE("dedup_by_source keeps the first translation of each English text") {
  std::vector<Pair> in = {{"File", "Fichier", "coreutils"},
                          {"Edit", "Modifier", "gtk"},
                          {"File", "Dossier", "gtk"},
                          {"file", "fichier", "gtk"}};
  std::vector<Pair> out = dedup_by_source(in);
  REQUIRE(out.size() == 3);
  CHECK(out[0].target == "Fichier");
  CHECK(out[0].package == "coreutils");
  CHECK(out[1].source == "Edit");
  CHECK(out[2].source == "file");  // case matters
}

TEST_CASE("the machine's French catalogs give more than 10,000 pairs") {
  if (!fs::exists("/usr/share/locale/fr/LC_MESSAGES")) {
    MESSAGE("skipped: /usr/share/locale/fr/LC_MESSAGES is absent");
    return;
  }
  for (const auto& name : default_packages()) CHECK(name.rfind("iso_", 0) != 0);
  const Corpus c = build_corpus();
  CHECK(c.unique > 10000);
  CHECK(c.splits.train.size() + c.splits.validation.size() + c.splits.test.size() == static_cast<size_t>(c.unique));
  // Each part near its fraction (2%, 2%, 96%): within a quarter of it.
  CHECK(std::abs(static_cast<double>(c.splits.test.size()) / static_cast<double>(c.unique) - 0.02) < 0.005);
  CHECK(std::abs(static_cast<double>(c.splits.validation.size()) / static_cast<double>(c.unique) - 0.02) < 0.005);
  // Clustered: no test source has a training source within the grouping threshold, nor
  // one with the same normalized text (split_by_cluster measures both).
  CHECK(c.split.test_near_train == 0);
  CHECK(c.split.max_test_train_similarity < c.split.threshold);
  CHECK(c.split.test_with_train_normalized_twin == 0);
  CHECK(c.split.messages[2] == static_cast<int64_t>(c.splits.test.size()));
  MESSAGE("pairs: raw ", c.raw, ", cleaned ", c.cleaned, ", unique ", c.unique, "; train ", c.splits.train.size(),
          ", validation ", c.splits.validation.size(), ", test ", c.splits.test.size());
}
