#pragma once
// The held-out split of the translate example, by clusters of near-duplicate messages.
//
// Catalogs are full of templated siblings ("(roughly %d steps)" / "(roughly %d step)",
// "Cannot open %s" / "cannot open '%s'."): split by exact message, a sibling lands in
// test while its twin is in train, and a lookup of the nearest training message scores
// above a trained model. So every message goes to one cluster, and whole clusters go to
// train / validation / test:
//   normalize   normalize_source maps case, punctuation, printf directives, digits and
//               quoted names away ("Cannot open '%s'." -> "cannot open 0")
//   cluster     union-find over the messages: the same normalized text, the singular and
//               plural of one catalog entry (Pair::entry), near-duplicates whose
//               character 3-gram Jaccard similarity is >= threshold, on the normalized
//               text or on the source itself (similar_pairs: prefix-filtered, no n^2),
//               and normalized texts one word apart ("restart 0" / "start 0", "unary
//               operator expected" / "binary operator expected": word_neighbour_pairs)
//   assign      a cluster's part is split_of(its key), the smallest normalized text in it:
//               the same on every machine with the same catalogs. A cluster of more than
//               SplitOptions::max_held_out_cluster messages stays in train: one-word chains
//               link thousands of short messages ("tab border" - "tab fill" - "frame fill"),
//               and held out, one such cluster would be most of the test set.
// nearest_neighbours (a full n-gram inverted index) gives both the split's statistics
// (each test source's most similar training source) and the translation-memory baseline.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catalog.h"

namespace translate {

// Lowercase ASCII; a printf directive (%s, %d, %1$s, %-10lu, %zu, %.*f; not "%%") or a run
// of digits becomes the slot "0", and so does a quoted name ('x', "x", `x', ‘x’, “x”, «x»:
// at most 40 bytes, the opening quote not inside a word, so "can't" stays); every other
// ASCII character that is not a letter or digit, and the punctuation of U+2000..U+206F
// and U+00A0..U+00BF, becomes a space; spaces collapse, ends trimmed. Other UTF-8 passes.
std::string normalize_source(std::string_view s);

// Character (code point) 3-grams of " " + s + " " as sorted gram ids; the ids come from
// one table shared by every text a GramTable has seen.
class GramTable {
 public:
  std::vector<uint32_t> grams(std::string_view s);
  std::size_t size() const;

 private:
  std::unordered_map<uint64_t, uint32_t> ids_;  // 3 code points (21 bits each) -> id
  uint32_t id(uint64_t key);
};

// |a ∩ b| / |a ∪ b| of two sorted id sets (1 when both are empty).
double jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
// jaccard of the 3-gram sets of two texts.
double char_similarity(std::string_view a, std::string_view b);

// Every pair (i < j) of texts whose 3-gram Jaccard similarity is >= threshold (in (0, 1]),
// found with a prefix filter: each set indexes only its |s| - ceil(threshold |s|) + 1
// rarest grams, which two sets that similar must share; candidates are then checked
// exactly. Texts without a gram (empty) are never paired.
std::vector<std::pair<int64_t, int64_t>> similar_pairs(const std::vector<std::string>& texts, double threshold);

// Every pair (i < j) of texts whose words (split at spaces) are one edit apart: one word
// replaced, inserted or removed, the shorter text having at least min_words words (two
// one-word texts are always one word apart). Found through deletion variants, no n^2;
// equal texts are not pairs.
std::vector<std::pair<int64_t, int64_t>> word_neighbour_pairs(const std::vector<std::string>& texts,
                                                              int64_t min_words = 2);

// Levenshtein distance over the words (split at spaces) of two texts.
int64_t word_distance(std::string_view a, std::string_view b);

// For each query, the smallest word_distance d to a pool text among those where both texts
// have more than d words (so that most of the shorter text is shared: every one-word text
// is one word from every other); `cap` when there is none below cap.
std::vector<int64_t> nearest_word_distances(const std::vector<std::string>& queries,
                                            const std::vector<std::string>& pool, int64_t cap = 4);

struct Neighbour {
  int64_t index = -1;       // into the pool; -1 when no pool text shares a gram
  double similarity = 0.0;  // 3-gram Jaccard
};
// For each query, the most similar pool text (the first of equals), exactly: an inverted
// index over all of the pool's grams counts the shared grams of every candidate.
std::vector<Neighbour> nearest_neighbours(const std::vector<std::string>& queries,
                                          const std::vector<std::string>& pool);

// The cluster of each pair (ids 0, 1, ... in order of first appearance) under the rules at
// the top of this file.
std::vector<int64_t> cluster_pairs(const std::vector<Pair>& pairs, double threshold = 0.9);

// Clusters the pairs (cluster_pairs) and puts each whole cluster in the part
// split_of(smallest normalized text of the cluster, options) picks; order is kept within
// each part. `stats` (optional) gets the counts and the test -> train nearest-neighbour
// figures, measured on the sources as they are (not normalized).
Splits split_by_cluster(const std::vector<Pair>& pairs, const SplitOptions& options = {}, double threshold = 0.9,
                        SplitStats* stats = nullptr);

// The translation-memory baseline: for each query, the target of the most similar
// training source (nearest_neighbours), "" when none shares a gram.
std::vector<std::string> translation_memory(const std::vector<Pair>& train, const std::vector<std::string>& queries);

}  // namespace translate
