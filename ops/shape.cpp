// Ops that build a new tensor from x's elements: copies (contiguous, clone, to), joins
// (cat, stack), flip, roll, pad, repetition, triangles and diag. Most are composites of
// views, cat, expand and index_select; flip, tril/triu, diag and the constant pad record
// a backward that is itself one of these ops, so every gradient is differentiable again.
#include "attograd/ops/shape.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "kernels/shaping.h"
#include "op_util.h"

namespace ag {
namespace {

// Inserts dim d+1 of size r and merges it into d: each slice along d repeated r times
// in place (r = 1 still copies, as PyTorch's repeat ops always return new memory).
Tensor interleave(const Tensor& y, int64_t d, int64_t r) {
  Shape e = y.shape();
  e.insert(d + 1, r);
  Shape out = y.shape();
  out[d] *= r;
  Tensor z = reshape(expand(unsqueeze(y, d + 1), e), out);
  return r == 1 ? clone(z) : z;
}

// tril / triu: out = the triangle of x.   dx = the same triangle of g
Tensor triangle(const char* name, const Tensor& x, int64_t k, bool lower) {
  AG_CHECK(x.dim() >= 2, IndexError, name, ": expected a tensor with at least 2 dims (..., R, C), got shape ",
           x.shape());
  Tensor out = K::triangle(x, k, lower);
  return record(name, out, {x},
                [k, lower](const Tensor& g, NeedsGrad) { return Grads{lower ? tril(g, k) : triu(g, k)}; });
}

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::constant: return "constant";
    case PadMode::reflect: return "reflect";
    case PadMode::replicate: return "replicate";
    case PadMode::circular: return "circular";
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
  Tensor y = K::empty(out, x.dtype(), "pad");  // size errors name pad
  K::fill(y, value, "pad");                    // so does a value an integer dtype cannot hold
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
  if (mode == PadMode::replicate) {
    // Output i reads input clamp(i - l, 0, size - 1) (PyTorch's index map): a run of the
    // first element, a window of the input, a run of the last. Built from the output's
    // three runs, never the padded-then-cropped dim: pads (2^31, -2^31) of a 3-long dim
    // give 3 elements without a 2^31-long intermediate.
    const int64_t out = size + l + r;
    const int64_t first = std::clamp<int64_t>(l, 0, out);
    const int64_t window = std::max<int64_t>(0, std::min(l + size, out) - pl);
    const int64_t last = out - first - window;
    if (first > 0) parts.push_back(expand_dim(narrow(y, d, 0, 1), d, first));
    if (window > 0) parts.push_back(narrow(y, d, cl, window));
    if (last > 0) parts.push_back(expand_dim(narrow(y, d, size - 1, 1), d, last));
    return parts.size() == 1 ? parts[0] : cat(parts, d);
  }
  // reflect (|l|, |r| < size, checked): pad from the whole dim, then crop.
  if (pl > 0) parts.push_back(flip(narrow(y, d, 1, pl), {d}));
  parts.push_back(y);
  if (pr > 0) parts.push_back(flip(narrow(y, d, size - 1 - pr, pr), {d}));
  Tensor z = parts.size() == 1 ? y : cat(parts, d);
  return cl > 0 || cr > 0 ? narrow(z, d, cl, size + l + r) : z;
}

}  // namespace

// ---- copies ---------------------------------------------------------------------------
Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous() && !wants_grad(x)) return x;
  Tensor out = x.is_contiguous() ? alias(x, x.shape(), x.strides(), x.offset()) : K::contiguous(x);
  return record("contiguous", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

Tensor clone(const Tensor& x) {
  Tensor out = K::empty(x.shape(), x.dtype(), "clone");
  K::copy(x, out);
  return record("clone", out, {x}, [](const Tensor& g, NeedsGrad) { return Grads{g}; });
}

Tensor to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = K::convert(x, dtype);
  if (!is_floating(dtype)) return out;  // integer and bool results carry no gradient
  return record_to(x, std::move(out));
}

Tensor record_to(const Tensor& x, Tensor out) {
  return record("to", out, {x}, [from = x.dtype()](const Tensor& g, NeedsGrad) { return Grads{to(g, from)}; });
}

// ---- cat / stack ----------------------------------------------------------------------
// out = [x0; x1; ...] along dim.   dx_i = the slice of g that x_i filled
Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  AG_CHECK(!xs.empty(), ValueError, "cat: needs at least one tensor");
  const Tensor& first = xs[0];
  AG_CHECK(first.dim() > 0, ShapeError, "cat: zero-dimensional tensors cannot be concatenated");
  dim = wrap_dim(dim, first.dim(), "cat");
  Shape s = first.shape();
  s[dim] = 0;
  std::vector<int64_t> sizes;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    AG_CHECK(x.dtype() == first.dtype(), DTypeError, "cat: tensor ", i, " has dtype ", x.dtype(), ", tensor 0 has ",
             first.dtype());
    bool ok = x.dim() == first.dim();
    for (int64_t d = 0; ok && d < x.dim(); ++d) ok = d == dim || x.shape()[d] == first.shape()[d];
    AG_CHECK(ok, ShapeError, "cat: shapes ", first.shape(), " and ", x.shape(), " (tensor ", i, ") differ outside dim ",
             dim);
    sizes.push_back(x.shape()[dim]);
    AG_CHECK(!__builtin_add_overflow(s[dim], x.shape()[dim], &s[dim]), ShapeError, "cat: size of dim ", dim,
             " overflows int64 at tensor ", i, " (shape ", x.shape(), ")");
  }
  Tensor out = K::empty(s, first.dtype(), "cat");
  int64_t at = 0;
  for (const Tensor& x : xs) {
    Shape part = out.shape();
    part[dim] = x.shape()[dim];
    K::copy(x, alias(out, part, out.strides(), at * out.strides()[dim]));
    at += x.shape()[dim];
  }
  return record("cat", out, xs, [dim, sizes](const Tensor& g, NeedsGrad need) {
    Grads grads(sizes.size());
    int64_t at = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (need[i]) grads[i] = narrow(g, dim, at, sizes[i]);
      at += sizes[i];
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  AG_CHECK(!xs.empty(), ValueError, "stack: needs at least one tensor");
  dim = wrap_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> u;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    AG_CHECK(xs[i].shape() == xs[0].shape(), ShapeError, "stack: tensor ", i, " has shape ", xs[i].shape(),
             ", tensor 0 has ", xs[0].shape());
    u.push_back(unsqueeze(xs[i], dim));
  }
  return cat(u, dim);
}

// ---- flip / roll ----------------------------------------------------------------------
// out = x reversed along dims (copied through a negative-stride alias).   dx = flip(g, dims)
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  const int64_t n = x.dim();
  std::vector<bool> seen(static_cast<std::size_t>(std::max<int64_t>(n, 1)), false);
  Strides st = x.strides();
  int64_t offset = x.offset();
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, n, "flip");
    AG_CHECK(!seen[std::size_t(w)], ValueError, "flip: dim ", w, " appears multiple times in the list of dims ",
             list_str(dims));
    seen[std::size_t(w)] = true;
    if (n == 0 || x.shape()[w] == 0) continue;
    offset += (x.shape()[w] - 1) * st[w];
    st[w] = -st[w];
  }
  // The reversed read has negative strides, which the Tensor constructor refuses (no
  // public tensor has them, as in PyTorch): build it as a bare impl that never escapes.
  // Its elements are x's, so it stays inside the storage.
  auto reversed = std::make_shared<TensorImpl>();
  reversed->storage = x.storage();
  reversed->shape = x.shape();
  reversed->strides = st;
  reversed->offset = offset;
  reversed->dtype = x.dtype();
  Tensor out = K::empty(x.shape(), x.dtype());
  K::copy(Tensor(std::move(reversed)), out);
  return record("flip", out, {x}, [dims](const Tensor& g, NeedsGrad) { return Grads{flip(g, dims)}; });
}

// Composite: per dim, the last `shift` slices moved to the front with narrow + cat.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  AG_CHECK(!shifts.empty(), ValueError, "roll: `shifts` required");
  AG_CHECK(shifts.size() == dims.size() || (dims.empty() && shifts.size() == 1), ValueError,
           "roll: shifts and dimensions must align. shifts: ", shifts.size(), ", dims: ", dims.size());
  if (dims.empty()) return reshape(roll(flatten(x), shifts, {0}), x.shape());
  Tensor y = x;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim_nonscalar(dims[i], x.dim(), "roll");
    int64_t n = x.shape()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0) y = cat({narrow(y, d, n - s, s), narrow(y, d, 0, n - s)}, d);
  }
  return y.impl() == x.impl() ? clone(x) : y;
}

Tensor roll(const Tensor& x, int64_t shift, std::optional<int64_t> dim) {
  return dim ? roll(x, std::vector<int64_t>{shift}, std::vector<int64_t>{*dim})
             : roll(x, std::vector<int64_t>{shift}, std::vector<int64_t>{});
}

// ---- pad (torch.nn.functional.pad) ------------------------------------------------------
// torch.nn.functional.pad. The constant mode is one op whose backward is the same pad
// with the pads negated (cropping g back to x's shape); reflect, replicate and circular
// are composites of narrow, flip, expand and cat, one padded dim at a time (the three
// paddings are separable, so doing W, then H, then D gives PyTorch's corners).
Tensor pad(const Tensor& x, const std::vector<int64_t>& p, PadMode mode, double value) {
  const int64_t n = x.dim(), np = static_cast<int64_t>(p.size());
  AG_CHECK(np % 2 == 0, ValueError, "pad: padding length must be divisible by 2, got ", np, " values ", list_str(p),
           " for input shape ", x.shape());
  AG_CHECK(np <= 2 * n, ValueError, "pad: padding length too large: ", np, " values ", list_str(p), " for input shape ",
           x.shape(), " (at most 2 per dim)");
  // Every later size (size + l + r, size - (-l) - (-r), the backward's -p) is computed
  // in int64: refuse pads whose sum with the size, or whose negation, overflows.
  for (int64_t i = 0; i < np / 2; ++i) {
    const int64_t d = n - 1 - i, l = p[std::size_t(2 * i)], r = p[std::size_t(2 * i + 1)];
    int64_t out = 0;
    AG_CHECK(l != INT64_MIN && r != INT64_MIN && !__builtin_add_overflow(x.shape()[d], l, &out) &&
                 !__builtin_add_overflow(out, r, &out),
             ShapeError, "pad: padding (", l, ", ", r, ") of dimension ", d, " (size ", x.shape()[d],
             ") overflows int64 (input shape ", x.shape(), ")");
  }
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

// ---- repetition -----------------------------------------------------------------------
// Composite: x reshaped to repeats.size() dims, then each repeated dim d becomes
// (r, s_d) by unsqueeze + expand and is merged back by reshape (which copies).
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  const int64_t m = static_cast<int64_t>(repeats.size()), n = x.dim();
  AG_CHECK(m >= n, ShapeError,
           "repeat: number of dimensions of repeat dims can not be smaller than number of dimensions of "
           "tensor (repeats ",
           list_str(repeats), ", input shape ", x.shape(), ")");
  std::vector<int64_t> padded, out;
  for (int64_t i = 0; i < m; ++i) {
    padded.push_back(i < m - n ? 1 : x.shape()[i - (m - n)]);
    int64_t size = 0;
    AG_CHECK(!__builtin_mul_overflow(padded.back(), repeats[std::size_t(i)], &size), ShapeError, "repeat: repeats ",
             list_str(repeats), " of input shape ", x.shape(), " overflow int64");
    out.push_back(size);
  }
  for (int64_t s : out)  // a negative dim is a ShapeError, as everywhere
    AG_CHECK(s >= 0, ShapeError, "repeat: trying to create tensor with negative dimension ", s, ": ", list_str(out),
             " (repeats ", list_str(repeats), ", input shape ", x.shape(), ")");
  Tensor y = reshape(x, Shape(padded));
  bool copied = false;
  for (int64_t d = 0; d < m; ++d) {
    int64_t r = repeats[std::size_t(d)];
    if (r == 1) continue;
    Shape e = y.shape();
    e.insert(d, r);
    Shape merged = y.shape();
    merged[d] *= r;
    y = reshape(expand(unsqueeze(y, d), e), merged);
    copied = true;
  }
  return copied ? y : clone(y);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> r = dims;
  if (static_cast<int64_t>(r.size()) < x.dim()) r.insert(r.begin(), std::size_t(x.dim()) - r.size(), 1);
  return repeat(x, r);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  AG_CHECK(repeats >= 0, ValueError, "repeat_interleave: repeats can not be negative, got ", repeats);
  if (!dim) return interleave(flatten(x), 0, repeats);
  return interleave(x, wrap_dim_nonscalar(*dim, x.dim(), "repeat_interleave"), repeats);
}

// Per-slice counts: index_select with each index i written repeats[i] times.
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  AG_CHECK(repeats.dtype() == DType::i64 || repeats.dtype() == DType::i32, DTypeError,
           "repeat_interleave: repeats must be an integer tensor (i64), got ", repeats.dtype(), " with shape ",
           repeats.shape());
  AG_CHECK(repeats.dim() <= 1, ShapeError, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape ",
           repeats.shape());
  std::vector<int64_t> r = repeats.to_vector<int64_t>();
  for (int64_t v : r) AG_CHECK(v >= 0, ValueError, "repeat_interleave: repeats can not be negative, got ", list_str(r));
  if (r.size() == 1) return repeat_interleave(x, r[0], dim);
  Tensor y = dim ? x : flatten(x);
  int64_t d = dim ? wrap_dim_nonscalar(*dim, x.dim(), "repeat_interleave") : 0;
  AG_CHECK(static_cast<int64_t>(r.size()) == y.shape()[d], ShapeError,
           "repeat_interleave: repeats must have the same size as input along dim: ", r.size(), " repeats for dim ", d,
           " of shape ", y.shape());
  std::vector<int64_t> index;
  for (std::size_t i = 0; i < r.size(); ++i) index.insert(index.end(), std::size_t(r[i]), int64_t(i));
  return index_select(y, d, Tensor::from_vector(index));
}

// ---- triangles and diag ----------------------------------------------------------------
Tensor tril(const Tensor& x, int64_t k) { return triangle("tril", x, k, true); }
Tensor triu(const Tensor& x, int64_t k) { return triangle("triu", x, k, false); }

Tensor diag(const Tensor& x, int64_t diagonal_index) {
  AG_CHECK(x.dim() == 1 || x.dim() == 2, ShapeError, "diag: matrix or a vector expected, got shape ", x.shape());
  const int64_t k = diagonal_index;
  if (x.dim() == 2) {
    // PyTorch 1.13 accepts offsets up to the matrix edge (an empty diagonal) and fails beyond.
    AG_CHECK(k >= -x.shape()[0] && k <= x.shape()[1], ValueError, "diag: diagonal ", k,
             " is out of range for a matrix of shape ", x.shape());
    return clone(diagonal(x, k, 0, 1));
  }
  const int64_t m = x.numel() + std::abs(k);
  return diagonal_embed("diag", x, Shape{m, m}, k, 0, 1);
}

}  // namespace ag
