// nn::beam_search: a hand-computed table of next-token probabilities; on a tiny random
// encoder-decoder (float64, eval mode) beam 1 against greedy decoding, a beam wide enough
// to keep every candidate against exhaustive search, batched against one sentence at a
// time, cached scores against full recomputation; KVCache::reorder; option errors.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>

#include "test_util.h"

using namespace ag;

namespace {

constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kV = 6, kE = 8;

// A seq2seq model as examples/copy/seq2seq.h builds one: embeddings scaled by sqrt(E),
// sinusoidal positions, nn::Transformer, a generator to the vocabulary.
struct Tiny {
  nn::Embedding src_embed{nullptr}, tgt_embed{nullptr};
  nn::Transformer tr{nullptr};
  nn::Linear gen{nullptr};
  Tensor pe;  // (16, E)

  Tiny() {
    manual_seed(3);
    src_embed = nn::Embedding(kV, kE);
    tgt_embed = nn::Embedding(kV, kE);
    tr = nn::Transformer(
        nn::TransformerOptions(kE, 2).num_encoder_layers(1).num_decoder_layers(2).dim_feedforward(16).dropout(0.0));
    gen = nn::Linear(kE, kV);
    for (nn::Module* m : std::initializer_list<nn::Module*>{&*src_embed, &*tgt_embed, &*tr, &*gen}) {
      m->to(DType::f64);
      m->eval();
    }
    std::vector<double> p(16 * kE);
    for (int64_t pos = 0; pos < 16; ++pos)
      for (int64_t i = 0; i < kE; i += 2) {
        double a = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / kE);
        p[static_cast<std::size_t>(pos * kE + i)] = std::sin(a);
        p[static_cast<std::size_t>(pos * kE + i + 1)] = std::cos(a);
      }
    pe = Tensor::from_vector(p, {16, kE});
  }
  // ids (B, n) from position `start` -> (B, n, E)
  Tensor embed(nn::Embedding& table, const Tensor& ids, int64_t start) {
    return table(ids) * std::sqrt(double(kE)) + pe.narrow(0, start, ids.size(1));
  }
  // Logits scaled up so that next-token distributions are far from uniform (no near ties),
  // and eos favoured so that it competes: with seed 3 greedy decoding of the first test
  // sentence ends in eos after 5 tokens, the second never does.
  Tensor generator(const Tensor& h) { return gen(h) * 4.0 + eos_bias; }
  Tensor eos_bias = Tensor::from_vector(std::vector<double>{0, 0, 2.0, 0, 0, 0});
  Tensor encode(const Tensor& src) {
    return tr->encode(embed(src_embed, src, 0), {}, eq(src, kPad));
  }  // src_key_padding_mask: true = pad

  std::vector<std::vector<nn::Hypothesis>> beam(const Tensor& src, const nn::BeamSearchOptions& o) {
    return nn::beam_search(
        *tr->decoder, encode(src), ne(src, kPad),
        [&](const Tensor& ids, int64_t pos) { return embed(tgt_embed, ids, pos); },
        [&](const Tensor& h) { return generator(h); }, o);
  }

  // Full forward without the cache: log-probs (T, V) after each token of `in` (bos first),
  // for one unpadded source sentence.
  std::vector<double> full_log_probs(const std::vector<int64_t>& src, const std::vector<int64_t>& in) {
    NoGradGuard ng;
    Tensor s = Tensor::from_vector(src, {1, static_cast<int64_t>(src.size())});
    nn::TransformerMasks m;
    m.tgt_causal = true;
    Tensor h =
        tr->decode(embed(tgt_embed, Tensor::from_vector(in, {1, static_cast<int64_t>(in.size())}), 0), encode(s), m);
    return log_softmax(generator(h), -1).to_vector<double>();
  }
  // Sum of the log-probs of `seq` (without bos) given src.
  double score(const std::vector<int64_t>& src, const std::vector<int64_t>& seq) {
    std::vector<int64_t> in{kBos};
    in.insert(in.end(), seq.begin(), seq.end() - 1);
    auto lp = full_log_probs(src, in);
    double s = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) s += lp[i * kV + static_cast<std::size_t>(seq[i])];
    return s;
  }

  // Greedy decoding of `src` (B, S) for max_len steps, pad never chosen (as in beam
  // search), each row cut after its first eos.
  std::vector<std::vector<int64_t>> greedy(const Tensor& src, int64_t max_len, bool use_cache) {
    NoGradGuard ng;
    const int64_t B = src.size(0);
    Tensor mask = ne(src, kPad), memory = encode(src);
    Tensor ys = full({B, 1}, kBos, DType::i64);
    nn::KVCache cache;
    for (int64_t t = 0; t < max_len; ++t) {
      Tensor h;
      if (use_cache) {
        h = tr->decoder->forward_step(embed(tgt_embed, ys.narrow(1, t, 1), t), memory, cache, mask);
      } else {
        nn::TransformerMasks m;
        m.tgt_causal = true;
        m.memory_keep_mask = mask;
        h = tr->decode(embed(tgt_embed, ys, 0), memory, m).narrow(1, t, 1);
      }
      auto logits = generator(h).to_vector<double>();  // (B, 1, V)
      std::vector<int64_t> next(static_cast<std::size_t>(B));
      for (int64_t b = 0; b < B; ++b) {
        int64_t best = kPad == 0 ? 1 : 0;
        for (int64_t v = 0; v < kV; ++v)
          if (v != kPad &&
              logits[static_cast<std::size_t>(b * kV + v)] > logits[static_cast<std::size_t>(b * kV + best)])
            best = v;
        next[static_cast<std::size_t>(b)] = best;
      }
      ys = cat({ys, Tensor::from_vector(next, {B, 1})}, 1);
    }
    std::vector<std::vector<int64_t>> out;
    auto all = ys.to_vector<int64_t>();
    for (int64_t b = 0; b < B; ++b) {
      std::vector<int64_t> row;
      for (int64_t t = 1; t <= max_len; ++t) {
        row.push_back(all[static_cast<std::size_t>(b * (max_len + 1) + t)]);
        if (row.back() == kEos) break;
      }
      out.push_back(row);
    }
    return out;
  }
};

// Two sentences of different lengths, padded: (2, 5).
Tensor two_sources() { return Tensor::from_vector(std::vector<int64_t>{3, 4, 5, 3, 4, 5, 5, 3, kPad, kPad}, {2, 5}); }
std::vector<int64_t> row_of(const Tensor& src, int64_t b) {
  std::vector<int64_t> r;
  auto all = src.to_vector<int64_t>();
  for (int64_t s = 0; s < src.size(1); ++s)
    if (all[static_cast<std::size_t>(b * src.size(1) + s)] != kPad)
      r.push_back(all[static_cast<std::size_t>(b * src.size(1) + s)]);
  return r;
}

}  // namespace

TEST_CASE("beam search on a hand-written table of next-token probabilities") {
  // Vocabulary: pad 0, bos 1, eos 2, a 3, b 4. P(next | last token), independent of the
  // rest, so the step function needs no state and reorder nothing.
  //   after bos: eos .1, a .5, b .4     after a: eos .3, a .4, b .3     after b: eos .9, a .05, b .05
  const std::map<int64_t, std::vector<double>> table{
      {kBos, {0, 0, .1, .5, .4}}, {3, {0, 0, .3, .4, .3}}, {4, {0, 0, .9, .05, .05}}};
  auto step = [&](const Tensor& tokens) {
    std::vector<double> out;
    for (int64_t tok : tokens.to_vector<int64_t>())
      for (double p : table.count(tok) ? table.at(tok) : std::vector<double>{1, 0, 0, 0, 0}) out.push_back(std::log(p));
    return Tensor::from_vector(out, {tokens.size(0), 5});
  };
  auto no_reorder = [](const Tensor&) {};
  auto o = nn::BeamSearchOptions().max_length(3).length_penalty(0.0);

  // Greedy: a (.5), a (.4), a (.4): cut at max_length, P = .08. [a, eos] (.15) ties with
  // [a, b] and ranks below it by token id, outside the beam of 1.
  auto g = nn::beam_search(step, no_reorder, 1, o.beam_size(1));
  REQUIRE(g[0].size() == 1);
  CHECK(g[0][0].tokens == std::vector<int64_t>{3, 3, 3});
  CHECK(!g[0][0].finished);
  CHECK(g[0][0].log_prob == doctest::Approx(std::log(.08)));

  // Beam 2: step 2 finishes [b, eos] = .4 * .9 = .36 and keeps [a, a] .2, [a, b] .15; step 3
  // finishes [a, b, eos] = .135; the open [a, a, a] .08 cannot beat it.
  auto r = nn::beam_search(step, no_reorder, 1, o.beam_size(2).num_return(2));
  REQUIRE(r[0].size() == 2);
  CHECK(r[0][0].tokens == std::vector<int64_t>{4, kEos});
  CHECK(r[0][0].log_prob == doctest::Approx(std::log(.36)));
  CHECK(r[0][0].finished);
  CHECK(r[0][1].tokens == std::vector<int64_t>{3, 4, kEos});
  CHECK(r[0][1].score == doctest::Approx(std::log(.135)));

  // alpha 1: score = log P / ((5 + |Y|) / 6); [b, eos] has |Y| = 2.
  auto a1 = nn::beam_search(step, no_reorder, 1, o.beam_size(2).length_penalty(1.0));
  CHECK(a1[0][0].tokens == std::vector<int64_t>{4, kEos});
  CHECK(a1[0][0].score == doctest::Approx(std::log(.36) * 6.0 / 7.0));
  // early_stopping: the pool holds K = 2 finished after step 3, so the search stops there.
  // Without it, alpha 1 and max_length 10, the open [a, a, a] could still reach
  // log(.08) / lp(10) = -1.01 > log(.135) / lp(3) = -1.50, so the search goes on.
  int steps = 0;
  auto counted = [&](const Tensor& tokens) { return ++steps, step(tokens); };
  auto stop = o.beam_size(2).num_return(1).length_penalty(1.0).max_length(10);
  nn::beam_search(counted, no_reorder, 1, nn::BeamSearchOptions(stop).early_stopping(true));
  CHECK(steps == 3);
  steps = 0;
  auto late = nn::beam_search(counted, no_reorder, 1, nn::BeamSearchOptions(stop).early_stopping(false));
  CHECK(steps > 3);
  CHECK(late[0][0].tokens == std::vector<int64_t>{4, kEos});  // log(.36) * 6/7 = -0.88 stays best
  CHECK(nn::gnmt_length_penalty(1, 0.6) == doctest::Approx(1.0));
  CHECK(nn::gnmt_length_penalty(5, 1.0) == doctest::Approx(10.0 / 6.0));
  CHECK(nn::gnmt_length_penalty(7, 0.0) == 1.0);
}

TEST_CASE("beam_size 1 equals greedy decoding with and without the KV cache") {
  Tiny m;
  Tensor src = two_sources();
  for (int64_t max_len : {1, 4, 8}) {
    auto cached = m.greedy(src, max_len, true), full = m.greedy(src, max_len, false);
    CHECK(cached == full);
    // alpha 0 or early_stopping: beam 1 never continues past an eos it has chosen.
    for (auto o : {nn::BeamSearchOptions().length_penalty(0.0), nn::BeamSearchOptions().early_stopping(true)}) {
      auto r = m.beam(src, o.beam_size(1).max_length(max_len).bos_id(kBos).eos_id(kEos).pad_id(kPad));
      for (int64_t b = 0; b < 2; ++b) {
        INFO("max_len ", max_len, " sentence ", b);
        REQUIRE(r[static_cast<std::size_t>(b)].size() == 1);
        const auto& h = r[static_cast<std::size_t>(b)][0];
        CHECK(h.tokens == cached[static_cast<std::size_t>(b)]);
        CHECK(h.finished == (h.tokens.back() == kEos));
        CHECK(h.log_prob == doctest::Approx(m.score(row_of(src, b), h.tokens)).epsilon(1e-9));
      }
    }
  }
  // The runs above must exercise eos after some tokens, and running to max_length.
  auto g = m.greedy(src, 8, true);
  CHECK(g[0].size() > 1);
  CHECK(g[0].size() < 8);
  CHECK(g[0].back() == kEos);
  CHECK(g[1].size() == 8);
}

TEST_CASE("a beam that keeps every candidate returns what exhaustive search finds") {
  // L = 3, tokens other than pad: bos, eos, 3, 4, 5. Open prefixes of length t number at
  // most 4^t (no pad, no eos), their candidates 4^t * 5 <= 4^2 * 5 = 80 = K at the last
  // step, so every candidate ranks within the beam and nothing is ever pruned.
  constexpr int64_t L = 3, K = 80;
  Tiny m;
  Tensor src = two_sources();
  const std::vector<int64_t> words{kBos, 3, 4, 5};
  // Every sequence the search can return: w* eos with at most L tokens, or L words.
  std::vector<std::vector<int64_t>> all;
  std::function<void(std::vector<int64_t>)> grow = [&](std::vector<int64_t> prefix) {
    auto ended = prefix;
    ended.push_back(kEos);
    all.push_back(ended);
    if (static_cast<int64_t>(prefix.size()) == L - 1) {
      for (int64_t w : words) {
        all.push_back(prefix);
        all.back().push_back(w);
      }
      return;
    }
    for (int64_t w : words) {
      auto longer = prefix;
      longer.push_back(w);
      grow(longer);
    }
  };
  grow({});
  REQUIRE(all.size() == 1 + 4 + 16 + 64);

  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> log_p;
    for (const auto& y : all) log_p.push_back(m.score(row_of(src, b), y));
    for (double alpha : {0.0, 0.6}) {
      INFO("sentence ", b, " alpha ", alpha);
      std::vector<std::pair<double, std::size_t>> ranked;
      for (std::size_t i = 0; i < all.size(); ++i)
        ranked.push_back({log_p[i] / nn::gnmt_length_penalty(static_cast<int64_t>(all[i].size()), alpha), i});
      std::sort(ranked.begin(), ranked.end(), [](auto& x, auto& y) { return x.first > y.first; });
      REQUIRE(ranked[0].first - ranked[3].first > 1e-6);  // no near ties among the top 3
      REQUIRE(ranked[0].first - ranked[1].first > 1e-6);
      REQUIRE(ranked[1].first - ranked[2].first > 1e-6);
      auto r = m.beam(src, nn::BeamSearchOptions().beam_size(K).max_length(L).length_penalty(alpha).num_return(3));
      REQUIRE(r[static_cast<std::size_t>(b)].size() == 3);
      for (std::size_t i = 0; i < 3; ++i) {
        const auto& h = r[static_cast<std::size_t>(b)][i];
        CHECK(h.tokens == all[ranked[i].second]);
        CHECK(h.score == doctest::Approx(ranked[i].first).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("batched beam search equals one sentence at a time; cached scores equal recomputation") {
  Tiny m;
  Tensor src = two_sources();
  auto o = nn::BeamSearchOptions().beam_size(3).max_length(6).num_return(3);
  auto batched = m.beam(src, o);
  for (int64_t b = 0; b < 2; ++b) {
    auto row = row_of(src, b);
    auto alone = m.beam(Tensor::from_vector(row, {1, static_cast<int64_t>(row.size())}), o)[0];
    const auto& got = batched[static_cast<std::size_t>(b)];
    REQUIRE(got.size() == alone.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("sentence ", b, " hypothesis ", i);
      CHECK(got[i].tokens == alone[i].tokens);
      CHECK(got[i].score == doctest::Approx(alone[i].score).epsilon(1e-9));
      // The cached, reordered path against a full forward of the chosen tokens.
      CHECK(got[i].log_prob == doctest::Approx(m.score(row, got[i].tokens)).epsilon(1e-9));
      CHECK(got[i].score == doctest::Approx(got[i].log_prob /
                                            nn::gnmt_length_penalty(static_cast<int64_t>(got[i].tokens.size()), 0.6)));
      if (i > 0) CHECK(got[i - 1].score >= got[i].score);
    }
  }
}

TEST_CASE("a model plugs in through step and reorder; beams really get reordered") {
  // The general form, written out as a model other than nn::Transformer would: the step
  // keeps its own KV cache and memory expanded K times.
  Tiny m;
  Tensor src = two_sources();
  const int64_t K = 4;
  NoGradGuard ng;
  Tensor memory = repeat_interleave(m.encode(src), K, 0);  // (B K, S, E)
  Tensor mask = repeat_interleave(ne(src, kPad), K, 0);    // (B K, S)
  nn::KVCache cache;
  int reorders = 0, moved = 0;
  auto step = [&](const Tensor& tokens) {
    Tensor h = m.tr->decoder->forward_step(m.embed(m.tgt_embed, tokens, cache.length()), memory, cache, mask);
    return log_softmax(m.generator(h).reshape({tokens.size(0), kV}), -1);
  };
  auto reorder = [&](const Tensor& index) {
    ++reorders;
    auto ix = index.to_vector<int64_t>();
    for (std::size_t i = 0; i < ix.size(); ++i) moved += ix[i] != static_cast<int64_t>(i);
    for (std::size_t i = 0; i < ix.size(); ++i) CHECK(ix[i] / K == static_cast<int64_t>(i) / K);  // same sentence
    cache.reorder(index);
  };
  auto r = nn::beam_search(step, reorder, 2, nn::BeamSearchOptions().beam_size(K).max_length(6).num_return(K));
  CHECK(reorders > 0);
  CHECK(moved > 0);
  for (int64_t b = 0; b < 2; ++b)
    for (const auto& h : r[static_cast<std::size_t>(b)])
      CHECK(h.log_prob == doctest::Approx(m.score(row_of(src, b), h.tokens)).epsilon(1e-9));
  // Same answer as the nn::TransformerDecoder convenience.
  auto conv = m.beam(src, nn::BeamSearchOptions().beam_size(K).max_length(6).num_return(K));
  for (std::size_t b = 0; b < 2; ++b) {
    REQUIRE(conv[b].size() == r[b].size());
    for (std::size_t i = 0; i < r[b].size(); ++i) CHECK(conv[b][i].tokens == r[b][i].tokens);
  }
}

TEST_CASE("KVCache::reorder selects rows of every cached tensor") {
  nn::KVCache cache;
  cache.layers.resize(2);
  // Row r of every tensor holds the value 10 r + (which tensor).
  auto rows = [](double add) {
    return Tensor::from_vector(std::vector<double>{0 + add, 10 + add, 20 + add}, {3, 1, 1});
  };
  cache.layers[0] = {rows(1), rows(2), rows(3), rows(4)};
  cache.layers[1].self_k = rows(5);  // the others undefined
  cache.reorder(Tensor::from_vector(std::vector<int64_t>{2, 0, 0}));
  CHECK(cache.layers[0].self_k.to_vector<double>() == std::vector<double>{21, 1, 1});
  CHECK(cache.layers[0].cross_v.to_vector<double>() == std::vector<double>{24, 4, 4});
  CHECK(cache.layers[1].self_k.to_vector<double>() == std::vector<double>{25, 5, 5});
  CHECK(!cache.layers[1].self_v.defined());
  CHECK(!cache.layers[1].cross_k.defined());
  CHECK_THROWS_AS(cache.reorder(Tensor::from_vector(std::vector<int64_t>{3})), IndexError);
  CHECK_THROWS_AS(cache.reorder(Tensor::from_vector(std::vector<double>{0.0})), ValueError);
}

TEST_CASE("beam search rejects bad options and bad step outputs") {
  auto uniform = [](const Tensor& tokens) { return full({tokens.size(0), 4}, std::log(0.25), DType::f64); };
  auto none = [](const Tensor&) {};
  auto run = [&](const nn::BeamSearchOptions& o) { nn::beam_search(uniform, none, 1, o); };
  using test_util::contains;
  using test_util::error_of;
  CHECK(contains(error_of<ValueError>([&] { run(nn::BeamSearchOptions().beam_size(0)); }),
                 "beam_size must be >= 1, got 0"));
  CHECK(contains(error_of<ValueError>([&] { run(nn::BeamSearchOptions().max_length(0)); }),
                 "max_length must be >= 1, got 0"));
  CHECK_THROWS_AS(run(nn::BeamSearchOptions().beam_size(2).num_return(3)), ValueError);
  CHECK_THROWS_AS(run(nn::BeamSearchOptions().num_return(0)), ValueError);
  CHECK_THROWS_AS(run(nn::BeamSearchOptions().eos_id(0).pad_id(0)), ValueError);
  CHECK_THROWS_AS(run(nn::BeamSearchOptions().eos_id(-1)), ValueError);
  CHECK_THROWS_AS(run(nn::BeamSearchOptions().eos_id(4)), ValueError);  // vocabulary of 4
  CHECK_THROWS_AS(nn::beam_search(uniform, none, 0, {}), ValueError);
  // batch x beam_size overflowed int64 (undefined) and sized vectors from it (std::length_error).
  CHECK_THROWS_WITH_AS(nn::beam_search(uniform, none, int64_t{1} << 62, nn::BeamSearchOptions().beam_size(4)),
                       doctest::Contains("too many to hold"), ValueError);
  CHECK_THROWS_AS(nn::beam_search([](const Tensor&) { return zeros({3, 4}); }, none, 1, {}), ShapeError);
  CHECK_THROWS_AS(nn::beam_search(
                      [](const Tensor& t) {
                        return full({t.size(0), 4}, NAN, DType::f64);
                      },
                      none, 1, {}),
                  ValueError);
  Tiny m;
  CHECK_THROWS_AS(m.beam(Tensor::from_vector(std::vector<int64_t>{3, 4}, {1, 2}), nn::BeamSearchOptions().beam_size(0)),
                  ValueError);
  CHECK_THROWS_AS(nn::beam_search(*m.tr->decoder, zeros({2, 3}), {}, {}, {}, {}), ValueError);  // no embed
}
