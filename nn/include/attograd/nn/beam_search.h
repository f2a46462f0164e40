#pragma once
/// \file
/// Batched beam search for any autoregressive decoder (seq2seq or language model), with
/// GNMT's length penalty and Hugging Face / fairseq naming. LibTorch has no equivalent.
/// Legend: B batch (sentences), K beam_size, N = B * K rows decoded together, V vocabulary,
/// S source length, E d_model.
///
/// Each step runs all N rows through the model at once (row b * K + k is beam k of
/// sentence b), ranks the K * V extensions of each sentence by their summed log-probability,
/// and keeps:
///   - as finished: eos extensions ranked within the sentence's top K (fairseq's and HF's
///     rule); the K best finished hypotheses by length-normalized score are kept aside,
///   - as open: the K best non-eos extensions; the model's state (the KV cache) is then
///     reordered so that row i holds the state of the hypothesis it extends.
/// Sentences that are done keep their rows (fed pad_id, results ignored), so N is fixed.
/// pad_id is never generated (its log-probability is taken as -inf, as in fairseq).
/// At max_length the open hypotheses join the finished ones (unfinished, without eos).
/// beam_size 1 is greedy decoding when length_penalty is 0 or early_stopping is true; with
/// alpha > 0 and no early stop it may go on past the eos it finished, in case a longer
/// hypothesis scores better once normalized. A beam that ranks every candidate within its
/// top K (K >= open prefixes * (V - 1)) is exhaustive search up to max_length.
#include <functional>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/nn/transformer.h"

namespace ag::nn {

/// Example: BeamSearchOptions().beam_size(5).max_length(100).eos_id(2).length_penalty(1.0)
struct BeamSearchOptions {
  /// Hypotheses kept per batch row at each step.
  AG_ARG(int64_t, beam_size) = 4;
  AG_ARG(int64_t, max_length) = 64;  ///< generated tokens at most, eos included, bos not
  AG_ARG(int64_t, bos_id) = 1;       ///< fed as the first token of every hypothesis
  /// The end-of-sequence token: a hypothesis that emits it is finished.
  AG_ARG(int64_t, eos_id) = 2;
  AG_ARG(int64_t, pad_id) = 0;  ///< never generated; fed to rows of sentences already done
  /// GNMT (Wu et al. 2016): score = log P(Y) / lp(Y), lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha,
  /// |Y| = generated tokens including eos. alpha 0 ranks by the raw log-probability.
  AG_ARG(double, length_penalty) = 0.6;
  /// false: a sentence stops once it has beam_size finished hypotheses and no open one can
  ///   beat the worst of them at any length up to max_length (an exact bound: log-probs are
  ///   <= 0, so an open hypothesis's best final score is its log-prob divided by the largest
  ///   lp it can still reach), so the result is the same as decoding to max_length.
  /// true: a sentence stops as soon as beam_size hypotheses are finished (fairseq's rule,
  ///   HF's early_stopping=True); faster, may miss a longer better hypothesis.
  AG_ARG(bool, early_stopping) = false;
  AG_ARG(int64_t, num_return) = 1;  ///< hypotheses returned per sentence, best first; <= beam_size
};

/// lp(Y) above, for |Y| = length generated tokens.
double gnmt_length_penalty(int64_t length, double alpha);

/// A finished beam-search hypothesis: its tokens and its score.
struct Hypothesis {
  std::vector<int64_t> tokens;  ///< without bos; ends with eos_id when finished
  double score = 0;             ///< log_prob / lp(tokens.size())
  double log_prob = 0;          ///< sum of the tokens' log-probabilities
  bool finished = false;        ///< false: cut at max_length without eos
};

/// The model's side, for any kind of state:
///   step(tokens (N, 1) i64) -> log-probabilities (N, V) of the next token of each row,
///     given the tokens fed to the same row before (the model keeps that state),
///   reorder(index (N) i64): row i of the state becomes old row index[i] (index_select).
using BeamStepFn = std::function<Tensor(const Tensor& tokens)>;
/// Reorders the caller's per-hypothesis state (a KV cache) by an i64 index of kept rows.
using BeamReorderFn = std::function<void(const Tensor& index)>;
/// -> per sentence, up to num_return hypotheses, best score first. Runs under NoGradGuard;
/// the model should be in eval mode (dropout off).
std::vector<std::vector<Hypothesis>> beam_search(const BeamStepFn& step, const BeamReorderFn& reorder, int64_t batch,
                                                 const BeamSearchOptions& options);

/// The same with an nn::KVCache that the search owns and reorders (KVCache::reorder):
/// step(tokens (N, 1), cache) -> log-probs (N, V), decoding position cache.length().
using KVCacheStepFn = std::function<Tensor(const Tensor& tokens, KVCache& cache)>;
/// Beam search over a step function; per batch row, the finished hypotheses best first.
std::vector<std::vector<Hypothesis>> beam_search(const KVCacheStepFn& step, int64_t batch,
                                                 const BeamSearchOptions& options);

/// nn::TransformerDecoder with its KV cache, for encoder output `memory` (B, S, E) and its
/// padding mask (B, S) (true = real token; may be undefined). Memory and mask are expanded
/// K times (repeat_interleave along the batch), so each beam attends to its own sentence.
///   embed(tokens (N, 1) i64, position) -> (N, 1, E): target embedding at that position,
///   generator(h (N, 1, E)) -> logits (N, 1, V); log_softmax is taken here.
using BeamEmbedFn = std::function<Tensor(const Tensor& tokens, int64_t position)>;
/// Runs the decoder on the last tokens and returns (B', V) log-probabilities.
using BeamGeneratorFn = std::function<Tensor(const Tensor& hidden)>;
/// Beam search over a step function; per batch row, the finished hypotheses best first.
std::vector<std::vector<Hypothesis>> beam_search(TransformerDecoderImpl& decoder, const Tensor& memory,
                                                 const Tensor& memory_keep_mask, const BeamEmbedFn& embed,
                                                 const BeamGeneratorFn& generator, const BeamSearchOptions& options);

}  // namespace ag::nn
