#pragma once
// Toy translation data. Token 0 is padding and 1 the start token; content tokens are
// 2..vocab-1. A source is [1, c1, ..., c_{n-1}, 0, ...] with n in [min_len, len]; the
// target is [1, f(c)...] with f the identity (copy), reversal or sorting.
#include <attograd/attograd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace copy_task {

using namespace ag;

enum class Task { copy, reverse, sort };

inline Task parse_task(const std::string& s) {
  if (s == "copy") return Task::copy;
  if (s == "reverse") return Task::reverse;
  if (s == "sort") return Task::sort;
  throw ValueError("copy_task: unknown task '" + s + "' (copy, reverse, sort)");
}

struct Batch {
  Tensor src;          // (B, len) i64
  Tensor tgt_in;       // (B, len - 1): the target shifted right (starts with 1)
  Tensor tgt_out;      // (B, len - 1): what the decoder must predict; 0 = padding (ignored)
  int64_t tokens = 0;  // non-padding target tokens
};

inline Batch make_batch(Task task, int64_t B, int64_t len, int64_t min_len, int64_t vocab, Generator& gen) {
  std::vector<int64_t> src(static_cast<std::size_t>(B * len), 0), tgt(src.size(), 0);
  Batch b;
  for (int64_t i = 0; i < B; ++i) {
    int64_t n = min_len >= len ? len : gen.integer(min_len, len + 1);
    std::vector<int64_t> c;
    for (int64_t j = 1; j < n; ++j) c.push_back(gen.integer(2, vocab));
    std::vector<int64_t> f = c;
    if (task == Task::reverse) std::reverse(f.begin(), f.end());
    if (task == Task::sort) std::sort(f.begin(), f.end());
    src[i * len] = tgt[i * len] = 1;
    for (std::size_t j = 0; j < c.size(); ++j) {
      src[i * len + 1 + j] = c[j];
      tgt[i * len + 1 + j] = f[j];
    }
    b.tokens += n - 1;
  }
  Tensor t = Tensor::from_vector(tgt, {B, len});
  b.src = Tensor::from_vector(src, {B, len});
  b.tgt_in = t.narrow(1, 0, len - 1).contiguous();
  b.tgt_out = t.narrow(1, 1, len - 1).contiguous();
  return b;
}

}  // namespace copy_task
