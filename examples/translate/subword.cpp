// SentencePiece training, caching and encoding: see subword.h.
#include "subword.h"

#include <attograd/error.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace translate {

namespace {

// Feeds the training sentences to SentencePiece from memory.
class Sentences : public sentencepiece::SentenceIterator {
 public:
  explicit Sentences(const std::vector<std::string>& s) : s_(s) {}
  bool done() const override { return i_ >= s_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return s_[i_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& s_;
  std::size_t i_ = 0;
};

// FNV-1a 64 over the options and every sentence (with its length, so that boundaries count).
std::string fingerprint(const std::vector<std::string>& sentences, const SubwordOptions& o) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : std::to_string(s.size()) + ":" + s) h = (h ^ c) * 1099511628211ull;
  };
  mix(std::to_string(o.vocab_size) + "/" + o.model_type);
  for (const auto& s : sentences) mix(s);
  std::ostringstream out;
  out << std::hex << h;
  return out.str();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes via a temporary file and a rename, so a crash never leaves half a file.
void write_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    AG_CHECK(out.good(), IOError, "subword: cannot write ", tmp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    AG_CHECK(out.good(), IOError, "subword: cannot write ", tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::shared_ptr<sentencepiece::SentencePieceProcessor> processor(const std::string& serialized,
                                                                 const std::string& what) {
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->LoadFromSerializedProto(serialized);
  AG_CHECK(status.ok(), IOError, "subword: cannot load the SentencePiece model ", what, ": ", status.ToString());
  return sp;
}

}  // namespace

const std::vector<std::string>& Subword::format_directives() {
  static const std::vector<std::string> d = {"%s",  "%d",   "%i",   "%u",   "%c",   "%f",   "%x",   "%lu",  "%ld",
                                             "%zu", "%zd",  "%lld", "%llu", "%1$s", "%2$s", "%3$s", "%1$d", "%2$d",
                                             "%%",  "%.*s", "%*s",  "%o",   "%g",   "%e",   "%p",   "%ls",  "%lc"};
  return d;
}

Subword Subword::train_or_load(const std::vector<std::string>& sentences, const SubwordOptions& o,
                               const std::string& cache_path) {
  AG_CHECK(!sentences.empty(), ValueError, "subword: no training sentences");
  AG_CHECK(o.vocab_size > 4 + static_cast<int64_t>(format_directives().size()), ValueError, "subword: vocab_size ",
           o.vocab_size, " is too small");
  AG_CHECK(o.model_type == "unigram" || o.model_type == "bpe", ValueError, "subword: model_type '", o.model_type,
           "' must be unigram or bpe");
  const std::string key = fingerprint(sentences, o);
  if (read_file(cache_path + ".key") == key) {
    const std::string cached = read_file(cache_path);
    if (!cached.empty()) return Subword(processor(cached, cache_path));
  }
  std::string symbols;
  for (const auto& d : format_directives()) symbols += (symbols.empty() ? "" : ",") + d;
  std::unordered_map<std::string, std::string> args = {
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"character_coverage", "1.0"},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "2"},
      {"eos_id", "3"},
      {"user_defined_symbols", symbols},
      {"num_threads", std::to_string(o.threads)},
      {"hard_vocab_limit", "false"},  // a small corpus may not support the full size
      {"shuffle_input_sentence", "false"},
      {"minloglevel", "2"}};
  Sentences it(sentences);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &it, &model);
  AG_CHECK(status.ok(), ValueError, "subword: SentencePiece training failed: ", status.ToString());
  if (!cache_path.empty()) {
    write_atomically(cache_path, model);
    write_atomically(cache_path + ".key", key);
  }
  return Subword(processor(model, "(just trained)"));
}

Subword Subword::load(const std::string& path) {
  const std::string bytes = read_file(path);
  AG_CHECK(!bytes.empty(), IOError, "subword: cannot read ", path);
  return Subword(processor(bytes, path));
}

std::vector<int64_t> Subword::encode(const std::string& text) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  AG_CHECK(status.ok(), ValueError, "subword: cannot encode: ", status.ToString());
  return {ids.begin(), ids.end()};
}

std::string Subword::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> keep;
  for (int64_t i : ids)
    if (i > kEos && i < vocab_size()) keep.push_back(static_cast<int>(i));
  std::string out;
  const auto status = sp_->Decode(keep, &out);
  AG_CHECK(status.ok(), ValueError, "subword: cannot decode: ", status.ToString());
  return out;
}

std::vector<std::string> Subword::pieces(const std::string& text) const {
  std::vector<std::string> p;
  const auto status = sp_->Encode(text, &p);
  AG_CHECK(status.ok(), ValueError, "subword: cannot encode: ", status.ToString());
  return p;
}

int64_t Subword::vocab_size() const { return sp_->GetPieceSize(); }

}  // namespace translate
