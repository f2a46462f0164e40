#pragma once
// Character-level text data for the language model.
//   text      the license texts Debian ships in /usr/share/common-licenses (read at run
//             time; --data overrides), concatenated in a fixed order
//   split     the first 90% trains, the last 10% is held out (the split is by position,
//             so no held-out window overlaps a training window)
//   vocab     the characters of the training split, sorted; id 0 is reserved for
//             characters the training split never had (they can only occur in the
//             held-out split or a prompt)
//   batches   random windows of context + 1 characters: x = the first context, y = the
//             last context (the next character at every position)
#include <attograd/attograd.h>

#include <string>
#include <vector>

namespace lm {

using namespace ag;

// The license texts every Debian 12 system has (regular files, not the GPL/LGPL/GFDL
// symlinks), ~237 KB of English, in sorted order.
std::vector<std::string> default_text_files();
// The files' contents joined by blank lines; IOError naming a file that cannot be read.
std::string read_texts(const std::vector<std::string>& paths);

class CharVocab {
 public:
  static constexpr int64_t kUnknown = 0;
  CharVocab() = default;
  explicit CharVocab(const std::string& training_text);
  int64_t size() const { return static_cast<int64_t>(chars_.size()) + 1; }
  int64_t id(char c) const { return ids_[static_cast<unsigned char>(c)]; }
  std::vector<int64_t> encode(const std::string& s) const;
  std::string decode(const std::vector<int64_t>& ids) const;  // kUnknown -> '?'
  const std::string& chars() const { return chars_; }         // id i + 1 is chars()[i]

 private:
  std::string chars_;
  int64_t ids_[256] = {};  // kUnknown for characters not in chars_
};

struct Corpus {
  CharVocab vocab;
  std::vector<int64_t> train, val;  // token ids
};
// Splits `text` at (1 - val_fraction) of its length and builds the vocabulary from the
// first part. ValueError when either part is shorter than min_len characters.
Corpus make_corpus(const std::string& text, double val_fraction = 0.1, int64_t min_len = 2);

struct Batch {
  Tensor x, y;  // (B, T) i64 each; y[b, t] = the character after x[b, t]
};
// B windows at positions drawn from `gen`: (B, T) inputs and their next characters.
Batch random_windows(const std::vector<int64_t>& ids, int64_t B, int64_t T, Generator& gen);
// The consecutive non-overlapping windows of `ids`: n = (size - 1) / T of them, cut into
// batches of at most B windows (for a held-out loss over every character once).
std::vector<Batch> sequential_windows(const std::vector<int64_t>& ids, int64_t B, int64_t T);

// The held-out loss (nats per character) of a bigram model counted on `train` with
// add-one smoothing, over the same predictions as sequential_windows(val, ., T): a
// baseline any model with context should beat.
double bigram_loss(const std::vector<int64_t>& train, const std::vector<int64_t>& val, int64_t vocab, int64_t T);

}  // namespace lm
