// Sampling: see sample.h.
#include "sample.h"

#include <limits>
#include <memory>

namespace lm {

Tensor next_token_probs(const Tensor& logits, const SamplingOptions& o) {
  AG_CHECK(logits.dim() == 1, ShapeError, "lm sample: logits must be (V), got shape ", logits.shape());
  AG_CHECK(o.temperature >= 0 && o.top_k >= 0 && o.top_p > 0 && o.top_p <= 1, ValueError,
           "lm sample: need temperature >= 0, top_k >= 0, top_p in (0, 1]; got ", o.temperature, ", ", o.top_k, ", ",
           o.top_p);
  const int64_t V = logits.size(0);
  Tensor z = logits.to(DType::f64);  // (V)
  if (o.temperature == 0) return one_hot(argmax(z, 0), V).to(DType::f64);
  z = z / o.temperature;
  if (o.top_k > 0 && o.top_k < V) {
    Tensor kth = topk(z, o.top_k).first.narrow(0, o.top_k - 1, 1);  // (1): the k-th largest logit
    z = masked_fill(z, lt(z, kth), -std::numeric_limits<double>::infinity());
  }
  Tensor p = softmax(z, 0);  // (V)
  if (o.top_p < 1) {
    // Sorted descending, a token is kept while the mass before it is below top_p (the
    // most likely token always is); everything at least as likely as the last kept one stays.
    Tensor sorted = sort(p, 0, true).first;                 // (V)
    Tensor keep = lt(cumsum(sorted, 0) - sorted, o.top_p);  // (V) bool, a prefix
    int64_t n_keep = sum(keep).item<int64_t>();
    p = where(ge(p, sorted.narrow(0, n_keep - 1, 1)), p, 0.0);
    p = p / sum(p);
  }
  return p;
}

std::vector<int64_t> generate(const CharLM& model, std::vector<int64_t> ids, int64_t n, const SamplingOptions& o,
                              Generator& gen, bool use_cache) {
  AG_CHECK(!ids.empty(), ValueError, "lm generate: the prompt is empty");
  NoGradGuard no_grad;
  model->eval();
  // A GPT reads at most its context; a recurrent model reads everything.
  const int64_t context = model->max_length() > 0 ? model->max_length() : std::numeric_limits<int64_t>::max();
  const std::size_t prompt = ids.size();
  // The last `keep` tokens through the model at once -> the last position's logits (V).
  auto window = [&](int64_t keep) {
    const auto T = std::min<int64_t>(keep, static_cast<int64_t>(ids.size()));
    return Tensor::from_vector(std::vector<int64_t>(ids.end() - T, ids.end()), {1, T});  // (1, T)
  };
  auto last_row = [](const Tensor& logits) { return logits.select(0, 0).select(0, logits.size(1) - 1); };
  if (!use_cache) {
    for (int64_t i = 0; i < n; ++i) {
      Tensor p = next_token_probs(last_row(model(window(context))), o);  // (1, T, V) -> (V)
      ids.push_back(multinomial(p, 1, false, &gen).item<int64_t>());
    }
  } else {
    std::unique_ptr<Decoder> dec = model->decoder();
    Tensor logits = last_row(dec->step(window(context)));  // prefill
    for (int64_t i = 0; i < n; ++i) {
      const int64_t next = multinomial(next_token_probs(logits, o), 1, false, &gen).item<int64_t>();
      ids.push_back(next);
      if (i + 1 == n) break;
      if (dec->length() < context) {
        logits = last_row(dec->step(Tensor::from_vector(std::vector<int64_t>{next}, {1, 1})));
      } else {  // a full GPT cache: restart from the last context/2 tokens
        dec = model->decoder();
        logits = last_row(dec->step(window(std::max<int64_t>(context / 2, 1))));
      }
    }
  }
  return {ids.begin() + static_cast<std::ptrdiff_t>(prompt), ids.end()};
}

}  // namespace lm
