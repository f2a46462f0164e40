// Batched beam search (see beam_search.h for the rules).
// Legend: B batch, K beam_size, N = B * K rows, V vocabulary, S source length, E d_model.
// Scores and hypotheses live on the host: per step only the (N, V) log-probabilities cross
// over, and each sentence ranks its K * V extensions with a partial sort.
#include "attograd/nn/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attograd/autograd.h"
#include "attograd/error.h"
#include "attograd/ops.h"

namespace ag::nn {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void check_options(const BeamSearchOptions& o) {
  AG_CHECK(o.beam_size() >= 1, ValueError, "beam_search: beam_size must be >= 1, got ", o.beam_size());
  AG_CHECK(o.max_length() >= 1, ValueError, "beam_search: max_length must be >= 1, got ", o.max_length());
  AG_CHECK(o.num_return() >= 1 && o.num_return() <= o.beam_size(), ValueError,
           "beam_search: num_return must be in [1, beam_size = ", o.beam_size(), "], got ", o.num_return());
  AG_CHECK(o.bos_id() >= 0 && o.eos_id() >= 0 && o.pad_id() >= 0, ValueError,
           "beam_search: token ids must be >= 0, got bos ", o.bos_id(), ", eos ", o.eos_id(), ", pad ", o.pad_id());
  AG_CHECK(o.eos_id() != o.pad_id(), ValueError, "beam_search: eos_id and pad_id must differ (both ", o.eos_id(),
           "): pad is never generated");
  AG_CHECK(std::isfinite(o.length_penalty()), ValueError, "beam_search: length_penalty must be finite, got ",
           o.length_penalty());
}

struct Candidate {
  double log_prob;  // of the hypothesis extended by `token`
  int64_t row;      // the open row it extends
  int64_t token;
};

// Higher log-prob first; ties by row then token, so results never depend on sort internals.
bool better(const Candidate& a, const Candidate& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  if (a.row != b.row) return a.row < b.row;
  return a.token < b.token;
}

// The K best finished hypotheses of one sentence (HF's BeamHypotheses).
struct Finished {
  std::vector<Hypothesis> hyps;
  void add(Hypothesis h, int64_t capacity) {
    hyps.push_back(std::move(h));
    if (static_cast<int64_t>(hyps.size()) > capacity) {
      // Drop the worst; among equal scores the latest, so earlier (shorter) ones stay.
      auto worst = hyps.begin();
      for (auto it = hyps.begin(); it != hyps.end(); ++it)
        if (it->score <= worst->score) worst = it;
      hyps.erase(worst);
    }
  }
  double worst_score() const {
    double w = std::numeric_limits<double>::infinity();
    for (const auto& h : hyps) w = std::min(w, h.score);
    return w;
  }
};

// The search's state on the host. Row b * K + k: beam k of sentence b. Only beam 0
// starts open (log-prob 0), so the first step does not pick the same extension K times.
struct Beams {
  const BeamSearchOptions& o;
  int64_t batch, K, N;
  std::vector<std::vector<int64_t>> seqs;
  std::vector<double> sums;   // log-prob of each row's hypothesis, -inf for an empty slot
  std::vector<int64_t> last;  // each row's next input token
  std::vector<Finished> finished;
  std::vector<char> done;
  // The next step's rows, and the row each came from (for the KV cache's reorder).
  std::vector<std::vector<int64_t>> next_seqs;
  std::vector<double> next_sums;
  std::vector<int64_t> index;
  std::vector<Candidate> cands;  // scratch

  Beams(const BeamSearchOptions& opts, int64_t b, int64_t n)
      : o(opts),
        batch(b),
        K(opts.beam_size()),
        N(n),
        seqs(static_cast<std::size_t>(n)),
        sums(static_cast<std::size_t>(n), kNegInf),
        last(static_cast<std::size_t>(n), opts.bos_id()),
        finished(static_cast<std::size_t>(b)),
        done(static_cast<std::size_t>(b), 0) {
    for (int64_t s = 0; s < batch; ++s) sums[static_cast<std::size_t>(s * K)] = 0.0;
  }

  double normalized(double log_prob, int64_t length) const {
    return log_prob / gnmt_length_penalty(length, o.length_penalty());
  }

  void step(const std::vector<double>& logp, int64_t V, int64_t t) {
    next_seqs.assign(seqs.size(), {});
    next_sums.assign(sums.size(), kNegInf);
    index.resize(static_cast<std::size_t>(N));
    std::iota(index.begin(), index.end(), int64_t{0});
    for (int64_t b = 0; b < batch; ++b)
      if (!done[static_cast<std::size_t>(b)]) extend(b, logp, V, t);  // done rows keep their state
    seqs = std::move(next_seqs);
    sums = std::move(next_sums);
  }

  // Sentence b's K * V extensions, ranked; the best K open ones fill its rows.
  void extend(int64_t b, const std::vector<double>& logp, int64_t V, int64_t t) {
    const auto bi = static_cast<std::size_t>(b);
    cands.clear();
    for (int64_t row = b * K; row < (b + 1) * K; ++row) {
      const double base = sums[static_cast<std::size_t>(row)];
      if (base == kNegInf) continue;  // an empty beam slot
      for (int64_t v = 0; v < V; ++v) {
        const double lp = logp[static_cast<std::size_t>(row * V + v)];
        AG_CHECK(!std::isnan(lp) && lp != std::numeric_limits<double>::infinity(), ValueError,
                 "beam_search: step returned ", lp, " for row ", row, ", token ", v, " (log-probabilities expected)");
        if (v == o.pad_id() || lp == kNegInf) continue;
        cands.push_back({base + lp, row, v});
      }
    }
    // Each open row has one eos extension, so at most K of the best 2K are eos: the rest
    // fill the K open slots whenever there are enough candidates.
    const auto top = static_cast<std::ptrdiff_t>(std::min<std::size_t>(cands.size(), static_cast<std::size_t>(2 * K)));
    std::partial_sort(cands.begin(), cands.begin() + top, cands.end(), better);
    int64_t open = 0;
    for (std::ptrdiff_t r = 0; r < top && open < K; ++r) {
      const Candidate& c = cands[static_cast<std::size_t>(r)];
      std::vector<int64_t> seq = seqs[static_cast<std::size_t>(c.row)];
      seq.push_back(c.token);
      if (c.token == o.eos_id()) {
        if (r < K) finished[bi].add({std::move(seq), normalized(c.log_prob, t), c.log_prob, true}, K);
        continue;
      }
      const auto dst = static_cast<std::size_t>(b * K + open++);
      next_seqs[dst] = std::move(seq);
      next_sums[dst] = c.log_prob;
      index[dst] = c.row;
      last[dst] = c.token;
    }
    for (int64_t k = open; k < K; ++k) last[static_cast<std::size_t>(b * K + k)] = o.pad_id();  // empty slots
    done[bi] = finished_after(b, open, t);
    // A finished sentence's open hypotheses cannot make the returned list; its rows idle.
    if (done[bi])
      for (int64_t k = 0; k < K; ++k) last[static_cast<std::size_t>(b * K + k)] = o.pad_id();
  }

  // Whether sentence b is done after step t with `open` open rows (sorted: row b * K holds
  // the best open log-prob).
  bool finished_after(int64_t b, int64_t open, int64_t t) const {
    const auto& fin = finished[static_cast<std::size_t>(b)];
    if (open == 0) return true;
    if (static_cast<int64_t>(fin.hyps.size()) < K) return false;
    if (o.early_stopping()) return true;
    // Best final score any open hypothesis can reach: its log-prob (log-probs <= 0 only
    // lower it) over the largest lp at a length it can end with, in [t + 1, max_length]
    // (exactly max_length once there); lp is monotone in the length, so that is one of
    // the two ends.
    const double best = next_sums[static_cast<std::size_t>(b * K)];
    const int64_t max_len = o.max_length();
    const double reach = std::max(normalized(best, std::min(t + 1, max_len)), normalized(best, max_len));
    return reach <= fin.worst_score();
  }

  // Sentences still open at max_length: their open hypotheses compete, unfinished.
  std::vector<std::vector<Hypothesis>> results() {
    std::vector<std::vector<Hypothesis>> result(static_cast<std::size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Hypothesis> all = std::move(finished[static_cast<std::size_t>(b)].hyps);
      if (!done[static_cast<std::size_t>(b)])
        for (int64_t row = b * K; row < (b + 1) * K; ++row) {
          const double s = sums[static_cast<std::size_t>(row)];
          if (s == kNegInf) continue;
          const auto& seq = seqs[static_cast<std::size_t>(row)];
          all.push_back({seq, normalized(s, static_cast<int64_t>(seq.size())), s, false});
        }
      std::stable_sort(all.begin(), all.end(),
                       [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      if (static_cast<int64_t>(all.size()) > o.num_return()) all.resize(static_cast<std::size_t>(o.num_return()));
      result[static_cast<std::size_t>(b)] = std::move(all);
    }
    return result;
  }
};

}  // namespace

double gnmt_length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search(const BeamStepFn& step, const BeamReorderFn& reorder, int64_t batch,
                                                 const BeamSearchOptions& o) {
  check_options(o);
  AG_CHECK(batch >= 1, ValueError, "beam_search: batch must be >= 1, got ", batch);
  AG_CHECK(static_cast<bool>(step) && static_cast<bool>(reorder), ValueError,
           "beam_search: step and reorder must be callable");
  NoGradGuard no_grad;
  const int64_t K = o.beam_size();
  int64_t N = 0;  // rows: batch * beam_size hypotheses, each a few vectors' worth of state
  AG_CHECK(!__builtin_mul_overflow(batch, K, &N) && N <= (int64_t{1} << 40), ValueError, "beam_search: batch ", batch,
           " x beam_size ", K, " hypotheses is too many to hold");
  Beams beams(o, batch, N);
  int64_t t = 0;  // tokens generated so far by every open hypothesis
  while (t < o.max_length()) {
    Tensor logp_t = step(Tensor::from_vector(beams.last, {N, 1}));  // (N, V)
    AG_CHECK(logp_t.defined() && logp_t.dim() == 2 && logp_t.size(0) == N, ShapeError,
             "beam_search: step must return log-probabilities (N, V) with N = batch * beam_size = ", N, ", got ",
             logp_t.defined() ? logp_t.shape() : Shape{});
    const int64_t V = logp_t.size(1);
    AG_CHECK(o.eos_id() < V && o.pad_id() < V, ValueError, "beam_search: eos_id ", o.eos_id(), " and pad_id ",
             o.pad_id(), " must be < vocabulary size ", V);
    ++t;
    beams.step(logp_t.to_vector<double>(), V, t);
    if (std::all_of(beams.done.begin(), beams.done.end(), [](char d) { return d != 0; }) || t == o.max_length()) break;
    bool identity = true;
    for (int64_t i = 0; i < N; ++i) identity = identity && beams.index[static_cast<std::size_t>(i)] == i;
    if (!identity) reorder(Tensor::from_vector(beams.index, {N}));
  }
  return beams.results();
}

std::vector<std::vector<Hypothesis>> beam_search(const KVCacheStepFn& step, int64_t batch, const BeamSearchOptions& o) {
  AG_CHECK(static_cast<bool>(step), ValueError, "beam_search: step must be callable");
  KVCache cache;
  return beam_search([&](const Tensor& tokens) { return step(tokens, cache); },
                     [&](const Tensor& index) { cache.reorder(index); }, batch, o);
}

std::vector<std::vector<Hypothesis>> beam_search(TransformerDecoderImpl& decoder, const Tensor& memory,
                                                 const Tensor& memory_keep_mask, const BeamEmbedFn& embed,
                                                 const BeamGeneratorFn& generator, const BeamSearchOptions& o) {
  check_options(o);
  AG_CHECK(static_cast<bool>(embed) && static_cast<bool>(generator), ValueError,
           "beam_search: embed and generator must be callable");
  AG_CHECK(memory.defined() && memory.dim() == 3 && memory.size(0) >= 1, ShapeError,
           "beam_search: memory must be (B, S, E) with B >= 1, got ", memory.defined() ? memory.shape() : Shape{});
  const int64_t B = memory.size(0), K = o.beam_size(), N = B * K;
  if (memory_keep_mask.defined())
    AG_CHECK(memory_keep_mask.dim() == 2 && memory_keep_mask.size(0) == B && memory_keep_mask.size(1) == memory.size(1),
             ShapeError, "beam_search: memory_keep_mask must be (B, S) = (", B, ", ", memory.size(1), "), got ",
             memory_keep_mask.shape());
  NoGradGuard no_grad;
  // Rows b * K .. b * K + K - 1 all see sentence b; reordering never moves a row to another
  // sentence, so memory and mask need no reordering (the cache's cross k/v are reordered
  // anyway, harmlessly, by KVCache::reorder).
  const Tensor mem = repeat_interleave(memory, K, 0);  // (N, S, E)
  const Tensor mask = memory_keep_mask.defined() ? repeat_interleave(memory_keep_mask, K, 0) : Tensor{};
  auto step = [&](const Tensor& tokens, KVCache& cache) {
    Tensor h = decoder.forward_step(embed(tokens, cache.length()), mem, cache, mask);  // (N, 1, E)
    Tensor logits = generator(h);                                                      // (N, 1, V)
    AG_CHECK(logits.dim() == 3 && logits.size(0) == N && logits.size(1) == 1, ShapeError,
             "beam_search: generator must return logits (N, 1, V) with N = ", N, ", got ", logits.shape());
    return log_softmax(logits.reshape({N, logits.size(2)}), -1);  // (N, V)
  };
  return beam_search(KVCacheStepFn(step), B, o);
}

}  // namespace ag::nn
