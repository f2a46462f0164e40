// torch.nn.functional.pad. The constant mode is one op whose backward is the same pad
// with the pads negated (cropping g back to x's shape); reflect, replicate and circular
// are composites of narrow, flip, expand and cat, one padded dim at a time (the three
// paddings are separable, so doing W, then H, then D gives PyTorch's corners).
#include <algorithm>

#include "attograd/ops/shaping.h"
#include "op_util.h"
#include "shaping_util.h"

namespace ag {
namespace {

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::constant:
      return "constant";
    case PadMode::reflect:
      return "reflect";
    case PadMode::replicate:
      return "replicate";
    case PadMode::circular:
      return "circular";
  }
  return "?";
}

// t narrowed along d, without graph (the constant pad's copy targets).
Tensor part(const Tensor& t, int64_t d, int64_t start, int64_t len) {
  Shape s = t.shape();
  s[d] = len;
  return alias(t, s, t.strides(), len > 0 ? t.offset() + start * t.strides()[d] : t.offset());
}

// out = full(padded shape, value) with x copied inside (negative pads crop x).
// dx = pad(g, -p): the same window cut back out of g.
Tensor constant_pad(const Tensor& x, const std::vector<int64_t>& p, double value) {
  const int64_t n = x.dim(), k = static_cast<int64_t>(p.size()) / 2;
  Shape out = x.shape();
  Tensor src = x, dst;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = n - 1 - i, l = p[std::size_t(2 * i)], r = p[std::size_t(2 * i + 1)];
    out[d] = x.shape()[d] + l + r;
    AG_CHECK(out[d] >= 0, ShapeError, "pad: padding (", l, ", ", r, ") of dimension ", d, " leaves a negative size ",
             out[d], " (input shape ", x.shape(), ")");
  }
  Tensor y = full(out, value, x.dtype());
  dst = y;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = n - 1 - i, l = p[std::size_t(2 * i)], r = p[std::size_t(2 * i + 1)];
    const int64_t kept = std::max<int64_t>(x.shape()[d] - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0), 0);
    src = part(src, d, std::max<int64_t>(-l, 0), kept);
    dst = part(dst, d, std::max<int64_t>(l, 0), kept);
  }
  K::copy(src, dst);
  std::vector<int64_t> neg = p;
  for (int64_t& v : neg) v = -v;
  return record("pad", y, {x}, [neg](const Tensor& g, NeedsGrad) { return Grads{pad(g, neg)}; });
}

Tensor expand_dim(const Tensor& t, int64_t d, int64_t size) {
  Shape s = t.shape();
  s[d] = size;
  return expand(t, s);
}

// One dim of a reflect / replicate / circular pad; the checks have been done.
Tensor pad_dim(const Tensor& y, int64_t d, int64_t l, int64_t r, PadMode mode) {
  const int64_t size = y.shape()[d];
  const int64_t pl = std::max<int64_t>(l, 0), pr = std::max<int64_t>(r, 0);
  const int64_t cl = std::max<int64_t>(-l, 0), cr = std::max<int64_t>(-r, 0);
  std::vector<Tensor> parts;
  if (mode == PadMode::circular) {
    // Crop first, then wrap the part that is left (PyTorch's _pad_circular).
    if (size + l + r == 0) return narrow(y, d, 0, 0);
    const int64_t m = size - cl - cr;
    Tensor mid = narrow(y, d, cl, m);
    if (pl > 0) parts.push_back(narrow(mid, d, m - pl, pl));
    parts.push_back(mid);
    if (pr > 0) parts.push_back(narrow(mid, d, 0, pr));
    return parts.size() == 1 ? mid : cat(parts, d);
  }
  // reflect / replicate: pad from the whole dim, then crop (PyTorch's index maps).
  const bool reflect = mode == PadMode::reflect;
  if (pl > 0) parts.push_back(reflect ? flip(narrow(y, d, 1, pl), {d}) : expand_dim(narrow(y, d, 0, 1), d, pl));
  parts.push_back(y);
  if (pr > 0)
    parts.push_back(reflect ? flip(narrow(y, d, size - 1 - pr, pr), {d})
                            : expand_dim(narrow(y, d, size - 1, 1), d, pr));
  Tensor z = parts.size() == 1 ? y : cat(parts, d);
  return cl > 0 || cr > 0 ? narrow(z, d, cl, size + l + r) : z;
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& p, PadMode mode, double value) {
  const int64_t n = x.dim(), np = static_cast<int64_t>(p.size());
  AG_CHECK(np % 2 == 0, ValueError, "pad: padding length must be divisible by 2, got ", np, " values ", list_str(p),
           " for input shape ", x.shape());
  AG_CHECK(np <= 2 * n, ValueError, "pad: padding length too large: ", np, " values ", list_str(p), " for input shape ",
           x.shape(), " (at most 2 per dim)");
  if (mode == PadMode::constant) return constant_pad(x, p, value);
  const char* name = mode_name(mode);
  AG_CHECK(value == 0.0, ValueError, "pad: padding mode \"", name, "\" doesn't take in value argument (got ", value,
           ")");
  const int64_t k = np / 2;
  AG_CHECK(k >= 1 && k <= 3 && (n == k + 1 || n == k + 2), ShapeError,
           "pad: only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now: ", name,
           " padding of the last k = 1, 2 or 3 dims takes a (k+1)-d or (k+2)-d input; got ", np,
           " padding values for input shape ", x.shape());
  if (mode == PadMode::circular) {
    AG_CHECK(n == k + 2, ShapeError, "pad: circular padding of the last ", k, " dims expects a ", k + 2,
             "-d input (N, C, ...), got shape ", x.shape(), " (invalid padding size, expected ", 2 * (n - 2),
             " but got ", np, ")");
  } else {
    for (int64_t d = 1; d < n; ++d)
      AG_CHECK(x.shape()[d] != 0, ShapeError, "pad: ", name, " padding expects a ", k + 1, "-d or ", k + 2,
               "-d (batch mode) tensor with possibly 0 batch size and other non-zero dimensions, got shape ",
               x.shape());
  }
  Tensor y = x;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = n - 1 - i, l = p[std::size_t(2 * i)], r = p[std::size_t(2 * i + 1)];
    const int64_t size = x.shape()[d], out = size + l + r;
    const char* letter = i == 0 ? "W" : i == 1 ? "H" : "D";
    if (mode == PadMode::reflect)
      AG_CHECK(l < size && r < size, ValueError, "pad: Argument #", 4 + 2 * i,
               ": Padding size should be less than the corresponding input dimension, but got: padding (", l, ", ", r,
               ") at dimension ", d, " of input ", x.shape());
    if (mode == PadMode::circular) {
      AG_CHECK(l <= size && r <= size, ValueError,
               "pad: Padding value causes wrapping around more than once: padding (", l, ", ", r, ") at dimension ", d,
               " of input ", x.shape());
      AG_CHECK(out >= 0, ShapeError, "pad: Negative padding value is resulting in an empty dimension: padding (", l,
               ", ", r, ") at dimension ", d, " of input ", x.shape());
      const int64_t m = size - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0);
      AG_CHECK(out == 0 || (l <= m && r <= m), ValueError, "pad: circular padding (", l, ", ", r, ") at dimension ", d,
               " wraps the ", m, " elements left after cropping more than once (input ", x.shape(), ")");
    } else {
      AG_CHECK(out >= 1, ShapeError, "pad: input (", letter, ": ", size, ") is too small. Calculated output ", letter,
               ": ", out, " (", name, " padding ", list_str(p), " of input ", x.shape(), ")");
    }
    y = pad_dim(y, d, l, r, mode);
  }
  // PyTorch always returns new memory (all-zero pads and pure crops included).
  return y.shares_storage(x) ? clone(y) : y;
}

Tensor pad(const Tensor& x, const PadFuncOptions& options) {
  return pad(x, options.pad(), options.mode(), options.value());
}

}  // namespace ag
