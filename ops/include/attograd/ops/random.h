#pragma once
/// \file
/// Ops that draw random numbers (ops/random.cpp): dropout and sampling. Draws come from
/// `gen`, or the default generator when it is null, so a seeded Generator repeats them
/// exactly.
#include <cstdint>

#include "attograd/generator.h"
#include "attograd/tensor.h"

namespace ag {

/// Zeroes each element with probability p and scales the rest by 1/(1-p) when training.
/// Its backward (g * saved mask) is differentiable, so double backward works as is.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

/// F.dropout1d, channel dropout: x (N, C, L) or unbatched (C, L) times a mask (N, C, 1)
/// (or (C, 1)) that zeroes each whole channel with probability p and scales the others
/// by 1/(1-p), drawn from `gen` when training. x itself in eval or with p == 0, zeros
/// with p == 1; ValueError for p outside [0, 1], ShapeError for another rank.
Tensor dropout1d(const Tensor& x, double p, bool training, Generator* gen = nullptr);
/// F.dropout2d: x (N, C, H, W) or unbatched (C, H, W), a mask (N, C, 1, 1) or (C, 1, 1),
/// otherwise as dropout1d. (PyTorch 1.13 treats a 3-D input as (N, C, L) with a warning;
/// this follows its documented (C, H, W), the behaviour that warning announces.)
Tensor dropout2d(const Tensor& x, double p, bool training, Generator* gen = nullptr);

/// torch.multinomial: probs (C) or (N, C), non-negative and finite weights (rows need not
/// sum to 1, but must not sum to 0) -> i64 class indices (num_samples) or (N, num_samples).
/// With replacement each draw is independent; without, a class is drawn at most once per
/// row, so each row needs at least num_samples classes of non-zero weight. A class of
/// weight 0 is never drawn. No gradient (indices are discrete): to differentiate through
/// a sample, gather the probabilities at the drawn indices.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);

}  // namespace ag
