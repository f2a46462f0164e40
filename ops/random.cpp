// Ops that draw random numbers. dropout: a mask drawn in the same pass as the forward,
// and again in backward (kernels/fused.cpp); multinomial: inverse-CDF sampling per row,
// in double whatever the input dtype.
#include "attograd/ops/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/fused.h"
#include "op_util.h"

namespace ag {

// ---- dropout ------------------------------------------------------------------------
// Inverted dropout: kept elements are scaled by 1/(1-p) so the expectation is x.
// out = x * mask with mask drawn in the same pass.   dx = g * mask, the mask drawn again
// from the call's Philox key: nothing (B, T, E)-sized is saved, where a saved mask in x's
// dtype (PyTorch's CPU dropout) was workload 7's 9 MiB of f32 masks.
namespace {
// x times the mask of the dropout call that drew `key` (kernels/fused.h). Its gradient is
// the incoming gradient times the same mask, drawn again: the same op, so double backward
// works and the forward saves no mask. In 16 bits the backward multiplies by the mask
// rounded to the dtype, the bits it had when that mask was saved.
Tensor times_mask(const char* name, const Tensor& x, double p, uint64_t key, bool rounded_mask) {
  Tensor out = K::dropout_apply(x, p, key, rounded_mask);
  return record(name, out, {x}, [p, key](const Tensor& g, NeedsGrad) {
    return Grads{times_mask("dropout_backward", g, p, key, true)};
  });
}
}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  AG_CHECK(p >= 0 && p <= 1, ValueError, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  check_float(x, "dropout");
  if (p == 1) return x * 0.0;
  Generator& rng = gen ? *gen : default_generator();
  const uint64_t key = [&] {
    auto hold = rng.lock();
    return rng.next_u64();  // one draw per call: the whole mask comes from this key
  }();
  return times_mask("dropout", x, p, key, false);
}

// ---- dropout1d / dropout2d (channel dropout) ----------------------------------------
// PyTorch's feature dropout: a mask (N, C, 1, ...) of Bernoulli(1 - p) draws divided by
// 1 - p, in x's dtype, times x. The mask is a constant, so out = x * mask is all the graph:
// dx = g * mask, and that again for double backward. Its N * C draws are small enough to
// keep (an element-wise mask redrawn in backward pays off only at x's size).
namespace {
Tensor channel_dropout(const char* op, const Tensor& x, double p, bool training, Generator* gen, int64_t spatial) {
  AG_CHECK(p >= 0 && p <= 1, ValueError, op, ": dropout probability has to be between 0 and 1, but got ", p);
  const int64_t batched = spatial + 2;  // (N, C, spatial...) or unbatched (C, spatial...)
  AG_CHECK(x.dim() == batched || x.dim() == batched - 1, ShapeError, op, ": expected a ", batched - 1, "-D or ",
           batched, "-D input (", spatial == 1 ? "(C, L) or (N, C, L)" : "(C, H, W) or (N, C, H, W)", "), got shape ",
           x.shape());
  if (!training || p == 0 || x.numel() == 0) return x;
  check_float(x, op);
  if (p == 1) return x * 0.0;
  Shape mask_shape = x.shape();  // 1 in each spatial dim: one draw per (sample, channel)
  for (int64_t d = x.dim() - spatial; d < x.dim(); ++d) mask_shape[d] = 1;
  Tensor mask = bernoulli(mask_shape, 1 - p, x.dtype(), gen) / (1 - p);
  return x * mask;
}
}  // namespace

Tensor dropout1d(const Tensor& x, double p, bool training, Generator* gen) {
  return channel_dropout("dropout1d", x, p, training, gen, 1);
}

Tensor dropout2d(const Tensor& x, double p, bool training, Generator* gen) {
  return channel_dropout("dropout2d", x, p, training, gen, 2);
}

// ---- multinomial --------------------------------------------------------------------
// Index of the class that u in [0, total) falls into on the running sums `cdf` (C):
// the first c with cdf[c] > u. A class of weight 0 has cdf[c] == cdf[c - 1], so u can
// never land on it; u * total rounding up to total falls back to the last class of
// non-zero weight.
static int64_t draw(const std::vector<double>& cdf, const std::vector<double>& w, double u) {
  const auto C = static_cast<int64_t>(cdf.size());
  auto c = static_cast<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  if (c < C) return c;
  for (c = C - 1; c > 0 && w[static_cast<std::size_t>(c)] <= 0;) --c;
  return c;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  AG_CHECK(probs.dim() == 1 || probs.dim() == 2, ShapeError,
           "multinomial: probs must be 1-D (C) or 2-D (N, C), got shape ", probs.shape());
  AG_CHECK(probs.is_floating_point(), DTypeError, "multinomial: probs must be floating (f32, f64), got ", probs.dtype(),
           " with shape ", probs.shape());
  const int64_t C = probs.size(-1), N = probs.dim() == 2 ? probs.size(0) : 1;
  AG_CHECK(C > 0, ShapeError, "multinomial: probs shape ", probs.shape(), " has no classes");
  AG_CHECK(num_samples > 0, ValueError, "multinomial: num_samples must be positive, got ", num_samples);
  AG_CHECK(replacement || num_samples <= C, ValueError, "multinomial: cannot draw ", num_samples,
           " samples without replacement from ", C, " classes (probs shape ", probs.shape(), ")");
  Generator& g = gen ? *gen : default_generator();
  auto hold = g.lock();  // every sample from one run of the default sequence
  int64_t total = 0;     // N * num_samples draws; checked before sizing the output (was std::length_error)
  AG_CHECK(!__builtin_mul_overflow(N, num_samples, &total), ValueError, "multinomial: ", N, " rows x ", num_samples,
           " samples overflows int64 (probs shape ", probs.shape(), ")");
  Tensor result =
      empty(probs.dim() == 2 ? Shape{N, num_samples} : Shape{num_samples}, DType::i64);  // MemoryError if too big
  int64_t* out = result.data<int64_t>();
  const std::vector<double> p = probs.to_vector<double>();  // (N * C) row-major
  std::vector<double> w(static_cast<std::size_t>(C)), cdf(w.size());
  for (int64_t n = 0; n < N; ++n) {
    int64_t nonzero = 0;
    for (int64_t c = 0; c < C; ++c) {
      double v = p[static_cast<std::size_t>(n * C + c)];
      AG_CHECK(std::isfinite(v) && v >= 0, ValueError, "multinomial: probs must be finite and non-negative, row ", n,
               " class ", c, " is ", v, " (shape ", probs.shape(), ")");
      w[static_cast<std::size_t>(c)] = v;
      nonzero += v > 0;
    }
    AG_CHECK(nonzero > 0, ValueError, "multinomial: row ", n, " of probs (shape ", probs.shape(), ") sums to 0");
    AG_CHECK(replacement || num_samples <= nonzero, ValueError, "multinomial: row ", n, " has ", nonzero,
             " classes of non-zero weight, fewer than the ", num_samples, " samples drawn without replacement");
    for (int64_t s = 0; s < num_samples; ++s) {
      if (s == 0 || !replacement) std::partial_sum(w.begin(), w.end(), cdf.begin());
      int64_t c = draw(cdf, w, g.uniform() * cdf.back());
      out[n * num_samples + s] = c;
      if (!replacement) w[static_cast<std::size_t>(c)] = 0;  // drawn at most once
    }
  }
  return result;
}

}  // namespace ag
