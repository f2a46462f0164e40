#pragma once
/// \file
/// Ops that build a new tensor of another shape from x's elements (ops/shape.cpp): copies,
/// joins, flips, rolls, padding, repetition, triangles and diagonals. PyTorch 1.13's names,
/// defaults and errors; dims may be negative. All are differentiable (composites of views,
/// cat and index_select, or ops whose backward is itself one of these ops).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// ---- copies ----
Tensor contiguous(const Tensor& x);       ///< x when already row-major, else a copy
Tensor clone(const Tensor& x);            ///< a fresh contiguous copy; gradient passes through
Tensor to(const Tensor& x, DType dtype);  ///< converted; the gradient comes back in x's dtype

// ---- joins ----
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);    ///< joined along an existing dim
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);  ///< equal shapes joined along a new dim

// ---- flip / roll ----
/// x reversed along each of `dims` (a copy, as in PyTorch; a 0-d tensor accepts dim 0/-1).
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
/// x shifted by shifts[i] along dims[i], elements wrapping around; with dims empty, the
/// flattened x is shifted by the single shift and the shape restored.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
Tensor roll(const Tensor& x, int64_t shift, std::optional<int64_t> dim = {});  ///< one shift along dim (or flattened)

// ---- pad (torch.nn.functional.pad) ----
/// `pad` lists (left, right) pairs from the LAST dim backwards: {l_W, r_W, l_H, r_H, ...}.
/// constant: any rank, fills with `value`; negative pads crop.
/// reflect / replicate: pads the last 1, 2 or 3 dims of a 2-D/3-D, 3-D/4-D or 4-D/5-D
///   input (reflect needs each pad < that dim's size); negative pads crop.
/// circular: pads the last k dims of a (k+2)-D input (N, C, ...) with wrap-around.
enum class PadMode { constant, reflect, replicate, circular };
/// x padded (or cropped) as `pad` and `mode` say; see above.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pad, PadMode mode = PadMode::constant, double value = 0.0);
/// pad(x, PadFuncOptions({1, 2}).mode(PadMode::reflect)), as LibTorch's
/// nn::functional::PadFuncOptions.
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  ///< implicit, as in LibTorch
  /// Sets the (left, right) pairs.
  PadFuncOptions& pad(std::vector<int64_t> v) {
    pad_ = std::move(v);
    return *this;
  }
  /// Sets the padding mode.
  PadFuncOptions& mode(PadMode m) {
    mode_ = m;
    return *this;
  }
  /// Sets the constant fill.
  PadFuncOptions& value(double v) {
    value_ = v;
    return *this;
  }
  const std::vector<int64_t>& pad() const { return pad_; }  ///< the (left, right) pairs, last dim first
  PadMode mode() const { return mode_; }                    ///< constant (the default), reflect, replicate or circular
  double value() const { return value_; }                   ///< the fill of constant padding (0 by default)

 private:
  std::vector<int64_t> pad_;
  PadMode mode_ = PadMode::constant;
  double value_ = 0.0;
};
Tensor pad(const Tensor& x, const PadFuncOptions& options);  ///< pad with LibTorch's options struct

// ---- repetition ----
/// torch.Tensor.repeat: x tiled repeats[i] times along dim i; repeats.size() >= x.dim()
/// (x gets leading 1-dims to match).
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
/// torch.tile: repeat with `dims` padded with leading 1s up to x.dim().
Tensor tile(const Tensor& x, const std::vector<int64_t>& dims);
/// Each element (slice along dim) repeated `repeats` times in place: [a, b] -> [a, a, b, b].
/// Without dim, x is flattened first. A repeats tensor (i64, 0-d or 1-D of x.size(dim)
/// counts, or one count) gives each slice its own count.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = {});
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats,
                         std::optional<int64_t> dim = {});  ///< a count per slice

// ---- triangles and diagonals ----
/// (..., R, C): elements with col - row <= diagonal kept (tril) / >= diagonal (triu), others 0.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);  ///< the upper triangle, see tril
/// 1-D (n) -> 2-D (n+|d|, n+|d|) with x on diagonal d; 2-D -> 1-D copy of diagonal d.
Tensor diag(const Tensor& x, int64_t diagonal = 0);

}  // namespace ag
