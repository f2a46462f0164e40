// Parallel corpus from gettext catalogs: see catalog.h (the .mo reader: mo.cpp).
#include "catalog.h"

#include "split.h"

#include <attograd/error.h>
#include <attograd/log.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

namespace translate {

using ag::IOError;
using ag::ValueError;

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
      "translate data: {} unique English texts in {} clusters (normalized text, plural entries, 3-gram Jaccard >= {}, "
      "one word apart; largest {}, {} messages in clusters over {} kept in train): train {} ({} clusters), "
      "validation {} ({}), test {} ({})",
      c.unique, st.clusters[0] + st.clusters[1] + st.clusters[2], st.threshold, st.largest_cluster,
      st.kept_in_train_for_size, split.max_held_out_cluster, st.messages[0], st.clusters[0], st.messages[1],
      st.clusters[1], st.messages[2], st.clusters[2]);
  ag::log().info(
      "translate data: test -> train nearest neighbour: largest similarity {:.3f}, {} test sources >= {}, {} with "
      "the same normalized text in train",
      st.max_test_train_similarity, st.test_near_train, st.threshold, st.test_with_train_normalized_twin);
  std::string deciles;
  for (int k = 0; k < 10; ++k) deciles += " " + std::to_string(st.test_nearest_histogram[k]);
  ag::log().info("translate data: test sources by nearest training similarity, 0-0.1 ... 0.9-1:{}", deciles);
  ag::log().info("translate data: test sources by nearest training source in words, 0 1 2 3 4+: {} {} {} {} {}",
                 st.test_nearest_words[0], st.test_nearest_words[1], st.test_nearest_words[2], st.test_nearest_words[3],
                 st.test_nearest_words[4]);
  return c;
}

}  // namespace translate
