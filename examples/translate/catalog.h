#pragma once
// A parallel corpus (English -> another language) from the gettext message catalogs
// every Debian machine carries: <root>/<lang>/LC_MESSAGES/<package>.mo, where each
// English message (msgid) comes with its human translation (msgstr).
//   read      read_mo parses GNU gettext's binary .mo format itself (mo.h)
//   load      load_pairs reads a fixed list of packages for one language, skipping a
//             missing or damaged catalog with a warning naming it
//   clean     clean_pairs applies the rules of CleanOptions (documented there)
//   dedup     dedup_by_source keeps the first translation of each English text, in
//             package order
//   split     split_of puts an English text in train / validation / test by the FNV-1a
//             64-bit hash of its UTF-8 bytes: the same on every machine and every run
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mo.h"

namespace translate {

// ---- loading a language ------------------------------------------------------------

// A catalog's name and the Debian package that installs it (for tools/setup).
struct CatalogSource {
  const char* name;            // <name>.mo
  const char* debian_package;  // `dpkg -S` on Debian 12
};
// The default catalogs: large catalogs of software messages (toolchain, core utilities,
// package tools, libraries, git, gnupg, PostgreSQL), in the order that decides which
// translation dedup_by_source keeps. Left out on purpose: catalogs that are lists of
// names (iso-codes' iso_639*, iso_3166*, iso_4217, iso_15924; xkeyboard-config's layout
// names; shared-mime-info's file-type names; libexif's tag names; xdg-user-dirs' folder
// names), and the *-gnulib copies of messages other catalogs already hold.
const std::vector<CatalogSource>& default_catalogs();
std::vector<std::string> default_packages();  // the names of default_catalogs()

// One translation pair. A message with a plural form gives two pairs: msgid -> msgstr[0]
// and msgid_plural -> msgstr[1] (plural = true); see CleanOptions::plural_pairs.
struct Pair {
  Pair() = default;
  Pair(std::string source_, std::string target_, std::string package_ = "", bool plural_ = false,
       std::string entry_ = "")
      : source(std::move(source_)),
        target(std::move(target_)),
        package(std::move(package_)),
        plural(plural_),
        entry(std::move(entry_)) {}
  std::string source, target;  // UTF-8
  std::string package;
  bool plural = false;
  // The catalog entry's msgid (its singular): a plural pair's English differs from it, and
  // split_by_cluster keeps the two in one cluster. "" for a pair made by hand: the source.
  std::string entry;
};

struct PackageCount {
  std::string package;
  std::string status;   // "ok", "missing", "damaged: <what>", "charset <name> not supported"
  int64_t entries = 0;  // messages read (header left out)
  int64_t pairs = 0;    // pairs made from them (before cleaning)
};

struct Catalogs {
  std::vector<Pair> pairs;             // in package order, then file order
  std::vector<PackageCount> packages;  // one per requested package, in order
};

// Reads <root>/<lang>/LC_MESSAGES/<package>.mo for each package. A missing file, a
// damaged one (IOError from read_mo) or an unsupported charset is logged with
// ag::log().warn naming the file and skipped; ISO-8859-1 catalogs are converted to UTF-8.
// Logs one info line per package with its counts.
Catalogs load_pairs(const std::string& lang = "fr", const std::vector<std::string>& packages = default_packages(),
                    const std::string& root = "/usr/share/locale");

// ---- cleaning ----------------------------------------------------------------------

struct CleanOptions {
  // Longest side allowed, in characters (UTF-8 code points), after normalizing.
  int64_t max_chars = 200;
  // Drop pairs whose longer side is more than this many times the shorter one, when the
  // longer one has at least 16 characters: a translation of a very different length is
  // usually a different message (fuzzy-looking) or an explanation added by a translator.
  double max_length_ratio = 3.0;
  // Drop pairs whose two sides are equal after normalizing. In an English -> French
  // catalog these are codes, names, option names, directives alone ("%s: %s") or
  // messages left untranslated; none teaches translating, and carrying names over is
  // still learned from the translated messages that contain them.
  bool drop_identical = true;
  // Remove a GTK-style keyboard accelerator ("_Open" -> "Open"): an underscore at the
  // start of a word before a letter, only when it is the side's only underscore (so
  // GIT_DIR and _GLOBAL_OFFSET_TABLE_ stay).
  bool strip_accelerators = true;
  // Keep the msgid_plural -> msgstr[1] pairs (English plural, target's second form).
  bool plural_pairs = true;
};

// What clean_pairs dropped, by reason (each pair counted under its first failing rule).
struct CleanStats {
  int64_t input = 0, kept = 0;
  int64_t plural = 0, invalid_utf8 = 0, empty = 0, identical = 0, too_long = 0, ratio = 0;
};

// Normalizes whitespace: newlines, tabs, other ASCII whitespace and the no-break spaces
// U+00A0 and U+202F become spaces, runs collapse to one space, both ends are trimmed.
// (French catalogs write the space before : ; ? ! as any of the three.) Messages become one line each (usage
// text loses its layout, which is not translation); format directives (%s, %d, %1$s,
// %zu, %-10s, %lld) contain no whitespace and pass through unchanged.
std::string normalize_whitespace(std::string_view s);
// The GTK accelerator rule of CleanOptions::strip_accelerators.
std::string strip_accelerator(std::string_view s);
// Number of UTF-8 code points (bytes that do not continue a sequence).
int64_t utf8_length(std::string_view s);
// Well-formed UTF-8 (no stray continuation bytes, truncated or overlong sequences,
// surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s);

// Normalizes both sides of every pair, then drops: plural pairs (unless plural_pairs),
// pairs that are not valid UTF-8, pairs with an empty side, identical pairs (if drop_identical), pairs over max_chars,
// and pairs over max_length_ratio. Order is kept. `stats` (optional) gets the counts.
std::vector<Pair> clean_pairs(const std::vector<Pair>& pairs, const CleanOptions& options = {},
                              CleanStats* stats = nullptr);

// ---- deduplication and split -------------------------------------------------------

// The first pair of each distinct source text, in order (the package order of the list
// decides which translation of a shared message is kept).
std::vector<Pair> dedup_by_source(const std::vector<Pair>& pairs);

// FNV-1a, 64 bits: offset basis 0xcbf29ce484222325, prime 0x100000001b3, over the bytes.
uint64_t fnv1a64(std::string_view bytes);

enum class Split { train, validation, test };
const char* split_name(Split s);

// bucket = fnv1a64(source) % 10000; bucket < test * 10000 is test, the next
// validation * 10000 buckets are validation, the rest train.
struct SplitOptions {
  double test = 0.02, validation = 0.02;
  // split_by_cluster keeps a larger cluster in train (split.h).
  int64_t max_held_out_cluster = 50;
};
Split split_of(std::string_view source, const SplitOptions& options = {});

struct Splits {
  std::vector<Pair> train, validation, test;
};

// The figures of split_by_cluster (split.h).
struct SplitStats {
  double threshold = 0.9;
  int64_t messages[3] = {0, 0, 0};  // by Split: train, validation, test
  int64_t clusters[3] = {0, 0, 0};
  int64_t largest_cluster = 0;                  // messages in the largest cluster
  double max_test_train_similarity = 0.0;       // over test sources, the nearest training source's
  int64_t test_near_train = 0;                  // test sources with a training source >= threshold
  int64_t test_with_train_normalized_twin = 0;  // test sources whose normalized text is in train
  // Test sources by their nearest training source's similarity: [k] counts [k/10, (k+1)/10).
  int64_t test_nearest_histogram[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  // Test sources by their nearest training source in words (nearest_word_distances on the
  // normalized texts): [d] counts distance d (0 to 3), [4] counts 4 or more.
  int64_t test_nearest_words[5] = {0, 0, 0, 0, 0};
  int64_t max_held_out_cluster = 0;
  int64_t kept_in_train_for_size = 0;  // messages of clusters over max_held_out_cluster
};

Splits split_pairs(const std::vector<Pair>& pairs, const SplitOptions& options = {});

// ---- the whole pipeline ------------------------------------------------------------

struct Corpus {
  Splits splits;
  std::vector<PackageCount> packages;
  std::vector<std::pair<std::string, int64_t>> kept_per_package;  // after clean + dedup
  CleanStats clean;
  SplitStats split;
  int64_t raw = 0, cleaned = 0, unique = 0;
};
// load_pairs -> clean_pairs -> dedup_by_source -> split_by_cluster (split.h, near-duplicate
// threshold `similarity`), logging the counts.
Corpus build_corpus(const std::string& lang = "fr", const std::vector<std::string>& packages = default_packages(),
                    const std::string& root = "/usr/share/locale", const CleanOptions& clean = {},
                    const SplitOptions& split = {}, double similarity = 0.9);

}  // namespace translate
