// Character-level text data: see data.h.
#include "data.h"

#include <attograd/data.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace lm {

std::vector<std::string> default_text_files() {
  static const char* names[] = {"Apache-2.0", "Artistic", "BSD",    "CC0-1.0",  "GFDL-1.2", "GFDL-1.3", "GPL-1",
                                "GPL-2",      "GPL-3",    "LGPL-2", "LGPL-2.1", "LGPL-3",   "MPL-1.1",  "MPL-2.0"};
  std::vector<std::string> paths;
  for (const char* n : names) paths.push_back(std::string("/usr/share/common-licenses/") + n);
  return paths;
}

std::string read_texts(const std::vector<std::string>& paths) {
  AG_CHECK(!paths.empty(), ValueError, "lm data: no text files given");
  std::string text;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    AG_CHECK(in.good(), IOError, "lm data: cannot read ", p);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (!text.empty()) text += "\n\n";
    text += ss.str();
  }
  return text;
}

// ---- vocabulary ----
CharVocab::CharVocab(const std::string& training_text) {
  bool seen[256] = {};
  for (char c : training_text) seen[static_cast<unsigned char>(c)] = true;
  for (int c = 0; c < 256; ++c)
    if (seen[c]) {
      chars_.push_back(static_cast<char>(c));
      ids_[c] = static_cast<int64_t>(chars_.size());  // ids start at 1: 0 is kUnknown
    }
}

std::vector<int64_t> CharVocab::encode(const std::string& s) const {
  std::vector<int64_t> out(s.size());
  std::transform(s.begin(), s.end(), out.begin(), [&](char c) { return id(c); });
  return out;
}

std::string CharVocab::decode(const std::vector<int64_t>& ids) const {
  std::string s;
  for (int64_t i : ids)
    s += i > 0 && i <= static_cast<int64_t>(chars_.size()) ? chars_[static_cast<std::size_t>(i - 1)] : '?';
  return s;
}

Corpus make_corpus(const std::string& text, double val_fraction, int64_t min_len) {
  AG_CHECK(val_fraction > 0 && val_fraction < 1, ValueError, "lm data: val_fraction ", val_fraction,
           " must be in (0, 1)");
  const auto n = static_cast<int64_t>(text.size());
  const auto cut = static_cast<int64_t>(std::floor(static_cast<double>(n) * (1 - val_fraction)));
  AG_CHECK(cut >= min_len && n - cut >= min_len, ValueError, "lm data: ", n, " characters split into ", cut, " + ",
           n - cut, ", but each part needs at least ", min_len);
  Corpus c;
  std::string train = text.substr(0, static_cast<std::size_t>(cut));
  c.vocab = CharVocab(train);
  c.train = c.vocab.encode(train);
  c.val = c.vocab.encode(text.substr(static_cast<std::size_t>(cut)));
  return c;
}

// ---- batches ----
static Batch windows_at(const std::vector<int64_t>& ids, const std::vector<int64_t>& starts, int64_t T) {
  const auto B = static_cast<int64_t>(starts.size());
  std::vector<int64_t> x(static_cast<std::size_t>(B * T)), y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      auto i = static_cast<std::size_t>(starts[static_cast<std::size_t>(b)] + t);
      x[static_cast<std::size_t>(b * T + t)] = ids[i];
      y[static_cast<std::size_t>(b * T + t)] = ids[i + 1];
    }
  return {Tensor::from_vector(x, {B, T}), Tensor::from_vector(y, {B, T})};
}

Batch random_windows(const std::vector<int64_t>& ids, int64_t B, int64_t T, Generator& gen) {
  const auto n = static_cast<int64_t>(ids.size());
  AG_CHECK(n > T, ValueError, "lm data: ", n, " tokens cannot hold a window of ", T, " + 1");
  // ag::data draws the B starts from `gen` (so a checkpoint of gen resumes the stream)
  // and stacks the windows; one batch per call, no prefetch thread.
  data::DataLoader loader(data::RandomWindows(Tensor::from_vector(ids), T, B, gen),
                          data::DataLoaderOptions(B).prefetch(0));
  auto it = loader.begin();  // the iterator holds the batch
  return {it->data, it->target};
}

std::vector<Batch> sequential_windows(const std::vector<int64_t>& ids, int64_t B, int64_t T) {
  const int64_t n = (static_cast<int64_t>(ids.size()) - 1) / T;
  AG_CHECK(n >= 1, ValueError, "lm data: ", ids.size(), " tokens cannot hold a window of ", T, " + 1");
  std::vector<Batch> out;
  for (int64_t w = 0; w < n; w += B) {
    std::vector<int64_t> starts;
    for (int64_t k = w; k < std::min(n, w + B); ++k) starts.push_back(k * T);
    out.push_back(windows_at(ids, starts, T));
  }
  return out;
}

double bigram_loss(const std::vector<int64_t>& train, const std::vector<int64_t>& val, int64_t vocab, int64_t T) {
  const auto V = static_cast<std::size_t>(vocab);
  std::vector<double> count(V * V, 1.0), row(V, static_cast<double>(vocab));  // add-one
  for (std::size_t i = 0; i + 1 < train.size(); ++i) {
    count[static_cast<std::size_t>(train[i]) * V + static_cast<std::size_t>(train[i + 1])] += 1;
    row[static_cast<std::size_t>(train[i])] += 1;
  }
  const int64_t n = (static_cast<int64_t>(val.size()) - 1) / T * T;  // the predictions sequential_windows makes
  double nll = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto a = static_cast<std::size_t>(val[static_cast<std::size_t>(i)]),
         b = static_cast<std::size_t>(val[static_cast<std::size_t>(i + 1)]);
    nll -= std::log(count[a * V + b] / row[a]);
  }
  return nll / static_cast<double>(n);
}

}  // namespace lm
