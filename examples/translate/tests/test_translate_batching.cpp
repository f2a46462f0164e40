// The translate example's length-bucketed batches (examples/translate/batching.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "translate/batching.h"

using namespace translate;

namespace {

// 50 pairs of lengths 1..25 and their targets one longer; ids are 10 + position.
std::vector<TokenPair> pairs() {
  std::vector<TokenPair> p;
  for (int64_t k = 0; k < 50; ++k) {
    TokenPair x;
    for (int64_t i = 0; i < 1 + (k * 7) % 25; ++i) x.src.push_back(10 + i);
    x.tgt = x.src;
    x.tgt.push_back(99);
    p.push_back(x);
  }
  return p;
}

int64_t padded(const std::vector<TokenPair>& p, const std::vector<int64_t>& b) {
  int64_t S = 1, T = 1;
  for (int64_t i : b) {
    S = std::max<int64_t>(S, static_cast<int64_t>(p[size_t(i)].src.size()));
    T = std::max<int64_t>(T, static_cast<int64_t>(p[size_t(i)].tgt.size()) + 1);
  }
  return (S + T) * static_cast<int64_t>(b.size());
}

}  // namespace

TEST_CASE("make_batch: padding, bos / eos, teacher forcing shift, token count") {
  std::vector<TokenPair> p = {{{5, 6, 7}, {8, 9}}, {{5}, {8, 9, 10, 11}}};
  Batch b = make_batch(p, {0, 1});
  CHECK(b.src.shape() == ag::Shape{2, 3});
  CHECK(b.tgt_in.shape() == ag::Shape{2, 5});
  CHECK(b.src.to_vector<int64_t>() == std::vector<int64_t>{5, 6, 7, 5, 0, 0});
  CHECK(b.tgt_in.to_vector<int64_t>() == std::vector<int64_t>{2, 8, 9, 0, 0, 2, 8, 9, 10, 11});
  CHECK(b.tgt_out.to_vector<int64_t>() == std::vector<int64_t>{8, 9, 3, 0, 0, 8, 9, 10, 11, 3});
  CHECK(b.tgt_tokens == 3 + 5);
  CHECK_THROWS_WITH_AS(make_batch(p, {}), doctest::Contains("translate: an empty batch"), ag::ValueError);
  CHECK_THROWS_WITH_AS(make_batch(p, {2}), doctest::Contains("translate: pair 2 of 2"), ag::IndexError);
}

TEST_CASE("bucket_batches: every pair once, within the budget, lengths close, seeded") {
  const auto p = pairs();
  const int64_t budget = 200;
  auto batches = bucket_batches(p, budget, 7, 0);
  std::multiset<int64_t> seen;
  int64_t spread = 0, within = 0;
  for (const auto& b : batches) {
    for (int64_t i : b) seen.insert(i);
    if (b.size() > 1) CHECK(padded(p, b) <= budget);  // a single long pair may exceed it alone
    auto [lo, hi] = std::minmax_element(
        b.begin(), b.end(), [&](int64_t x, int64_t y) { return p[size_t(x)].src.size() < p[size_t(y)].src.size(); });
    spread += static_cast<int64_t>(p[size_t(*hi)].src.size() - p[size_t(*lo)].src.size());
    within += 1;
  }
  CHECK(seen.size() == p.size());
  CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == p.size());
  // Sorted windows: the source lengths within a batch differ by little on average
  // (random batches of this corpus would differ by about 15).
  CHECK(static_cast<double>(spread) / static_cast<double>(within) < 5.0);
  CHECK(bucket_batches(p, budget, 7, 0) == batches);  // the same seed and epoch: the same batches
  CHECK(bucket_batches(p, budget, 7, 1) != batches);  // another epoch: another order
}

TEST_CASE("ordered_batches keep corpus order; a pair longer than the budget is alone") {
  auto p = pairs();
  auto batches = ordered_batches(p, 60);
  std::vector<int64_t> flat;
  for (const auto& b : batches) {
    if (b.size() > 1) CHECK(padded(p, b) <= 60);
    flat.insert(flat.end(), b.begin(), b.end());
  }
  std::vector<int64_t> want(p.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<int64_t>(i);
  CHECK(flat == want);
  CHECK_THROWS_WITH_AS(ordered_batches(p, 0), doctest::Contains("translate batches: max_tokens 0 must be positive"),
                       ag::ValueError);
}
