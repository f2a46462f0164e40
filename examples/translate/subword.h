#pragma once
// The joint English-French subword vocabulary: a SentencePiece model (Debian's
// libsentencepiece) trained on the training split only, cached next to the run.
// SentencePiece is what translation toolkits use for this (it is Marian's and fairseq's
// tokenizer); writing a unigram trainer ourselves would add nothing.
//
// Ids: 0 padding, 1 unknown, 2 start (bos), 3 end (eos), then the pieces. printf-style
// format directives (%s, %d, %lu, %1$s, ...) are pieces of their own, never split, so
// the model can learn to carry them over whole.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace translate {

struct SubwordOptions {
  int64_t vocab_size = 8000;
  std::string model_type = "unigram";  // or "bpe"
  int threads = 2;
};

class Subword {
 public:
  static constexpr int64_t kPad = 0, kUnk = 1, kBos = 2, kEos = 3;

  // Trains on `sentences` (both languages of the training split), or loads `cache_path`
  // when it holds a model trained on the same sentences with the same options (its
  // fingerprint is stored beside it in <cache_path>.key). Writes the cache atomically.
  static Subword train_or_load(const std::vector<std::string>& sentences, const SubwordOptions& options,
                               const std::string& cache_path);
  // A model file written by train_or_load (IOError when missing or malformed).
  static Subword load(const std::string& path);

  std::vector<int64_t> encode(const std::string& text) const;  // no bos / eos
  std::string decode(const std::vector<int64_t>& ids) const;   // ids < 4 are skipped
  std::vector<std::string> pieces(const std::string& text) const;
  int64_t vocab_size() const;
  // The printf directives that are pieces of their own.
  static const std::vector<std::string>& format_directives();

 private:
  explicit Subword(std::shared_ptr<sentencepiece::SentencePieceProcessor> sp) : sp_(std::move(sp)) {}
  std::shared_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace translate
