#pragma once
// Batches for translation: pairs of subword id sequences bucketed by length, so that a
// batch wastes little on padding, and cut by a token budget rather than a sentence count
// (long sentences make small batches). Legend: B sentences, S source length, T target
// length (with bos / eos).
#include <attograd/attograd.h>

#include <cstdint>
#include <vector>

namespace translate {

struct TokenPair {
  std::vector<int64_t> src, tgt;  // subword ids, no bos / eos
};

struct Batch {
  ag::Tensor src;              // (B, S) i64, 0 = padding
  ag::Tensor tgt_in;           // (B, T) i64: bos, y_1 .. y_n, padding
  ag::Tensor tgt_out;          // (B, T) i64: y_1 .. y_n, eos, padding (0 is ignored by the loss)
  int64_t tgt_tokens = 0;      // non-padding target tokens (the loss's denominator)
  std::vector<int64_t> index;  // which pairs, in batch order
};

// One padded batch of the given pairs (bos = 2, eos = 3, as translate::Subword).
Batch make_batch(const std::vector<TokenPair>& pairs, const std::vector<int64_t>& index);

// One epoch's batches: the pairs shuffled with `seed` + epoch, then in windows of
// 100 batches' worth sorted by length (source, then target), cut into batches whose
// padded size max(S) * B + max(T) * B stays within max_tokens (a sentence longer than
// that is a batch of its own), and the batches shuffled again. Every pair appears once.
std::vector<std::vector<int64_t>> bucket_batches(const std::vector<TokenPair>& pairs, int64_t max_tokens, uint64_t seed,
                                                 int64_t epoch);

// Batches in the pairs' own order, cut the same way (for validation and test: results
// come back in corpus order).
std::vector<std::vector<int64_t>> ordered_batches(const std::vector<TokenPair>& pairs, int64_t max_tokens);

}  // namespace translate
