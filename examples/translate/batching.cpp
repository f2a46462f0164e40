// Length-bucketed batches: see batching.h.
#include "batching.h"

#include <algorithm>
#include <numeric>

namespace translate {

using namespace ag;

namespace {

constexpr int64_t kBos = 2, kEos = 3;

int64_t len(const std::vector<int64_t>& v) { return static_cast<int64_t>(v.size()); }

// Cuts `order` into consecutive batches within the padded token budget.
std::vector<std::vector<int64_t>> cut(const std::vector<TokenPair>& pairs, const std::vector<int64_t>& order,
                                      int64_t max_tokens) {
  AG_CHECK(max_tokens > 0, ValueError, "translate batches: max_tokens ", max_tokens, " must be positive");
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t S = 0, T = 0;
  for (int64_t i : order) {
    const TokenPair& p = pairs[static_cast<std::size_t>(i)];
    const int64_t s = std::max<int64_t>(len(p.src), 1), t = len(p.tgt) + 1;
    const int64_t S2 = std::max(S, s), T2 = std::max(T, t);
    const int64_t B2 = static_cast<int64_t>(current.size()) + 1;
    if (!current.empty() && (S2 + T2) * B2 > max_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      S = s, T = t;
    } else {
      S = S2, T = T2;
    }
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace

Batch make_batch(const std::vector<TokenPair>& pairs, const std::vector<int64_t>& index) {
  AG_CHECK(!index.empty(), ValueError, "translate: an empty batch");
  int64_t S = 1, T = 1;
  for (int64_t i : index) {
    AG_CHECK(i >= 0 && i < static_cast<int64_t>(pairs.size()), IndexError, "translate: pair ", i, " of ", pairs.size());
    S = std::max(S, len(pairs[static_cast<std::size_t>(i)].src));
    T = std::max(T, len(pairs[static_cast<std::size_t>(i)].tgt) + 1);
  }
  const int64_t B = static_cast<int64_t>(index.size());
  std::vector<int64_t> src(static_cast<std::size_t>(B * S), 0), in(static_cast<std::size_t>(B * T), 0),
      out(static_cast<std::size_t>(B * T), 0);
  Batch b;
  for (int64_t r = 0; r < B; ++r) {
    const TokenPair& p = pairs[static_cast<std::size_t>(index[static_cast<std::size_t>(r)])];
    std::copy(p.src.begin(), p.src.end(), src.begin() + r * S);
    in[static_cast<std::size_t>(r * T)] = kBos;
    std::copy(p.tgt.begin(), p.tgt.end(), in.begin() + r * T + 1);
    std::copy(p.tgt.begin(), p.tgt.end(), out.begin() + r * T);
    out[static_cast<std::size_t>(r * T + len(p.tgt))] = kEos;
    b.tgt_tokens += len(p.tgt) + 1;
  }
  b.src = Tensor::from_vector(src, {B, S});
  b.tgt_in = Tensor::from_vector(in, {B, T});
  b.tgt_out = Tensor::from_vector(out, {B, T});
  b.index = index;
  return b;
}

std::vector<std::vector<int64_t>> bucket_batches(const std::vector<TokenPair>& pairs, int64_t max_tokens, uint64_t seed,
                                                 int64_t epoch) {
  std::vector<int64_t> order(pairs.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  Generator gen(seed * 1000003 + static_cast<uint64_t>(epoch));
  auto shuffle = [&](auto& v) {
    for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i)
      std::swap(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(gen.integer(0, i + 1))]);
  };
  shuffle(order);
  // Sort within windows only, so that epochs still differ in what shares a batch.
  const int64_t mean_len = [&] {
    int64_t total = 0;
    for (const TokenPair& p : pairs) total += len(p.src) + len(p.tgt) + 1;
    return std::max<int64_t>(1, pairs.empty() ? 1 : total / static_cast<int64_t>(pairs.size()));
  }();
  const auto window = static_cast<std::size_t>(std::max<int64_t>(1, 100 * max_tokens / mean_len));
  for (std::size_t w = 0; w < order.size(); w += window) {
    auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), w + window));
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(w), end, [&](int64_t a, int64_t b) {
      const TokenPair &pa = pairs[static_cast<std::size_t>(a)], &pb = pairs[static_cast<std::size_t>(b)];
      return std::pair(len(pa.src), len(pa.tgt)) < std::pair(len(pb.src), len(pb.tgt));
    });
  }
  auto batches = cut(pairs, order, max_tokens);
  shuffle(batches);
  return batches;
}

std::vector<std::vector<int64_t>> ordered_batches(const std::vector<TokenPair>& pairs, int64_t max_tokens) {
  std::vector<int64_t> order(pairs.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  return cut(pairs, order, max_tokens);
}

}  // namespace translate
