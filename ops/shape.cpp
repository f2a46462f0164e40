// Shaping ops: flip, roll, repeat, tile, repeat_interleave, tril/triu, diag, diagonal,
// unflatten, movedim (pad is in ops/pad.cpp). Most are composites of views, cat,
// expand and index_select; flip, tril/triu, diagonal and diag record a backward that is
// itself one of these ops, so every gradient is differentiable again.
#include "attograd/ops/shaping.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "kernels/shaping.h"
#include "op_util.h"
#include "shaping_util.h"

namespace ag {

std::string list_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + "]";
}

int64_t wrap_dim_nonscalar(int64_t dim, int64_t ndim, const char* op) {
  AG_CHECK(ndim > 0, IndexError, op, ": dimension specified as ", dim, " but the tensor has no dimensions");
  return wrap_dim(dim, ndim, op);
}

namespace {

// The diagonal `offset` of dims (d1, d2) of t as a strided view (no graph): d1 and d2
// removed, the diagonal appended; its stride is st[d1] + st[d2].
Tensor diagonal_alias(const Tensor& t, int64_t offset, int64_t d1, int64_t d2) {
  const Shape& s = t.shape();
  const Strides& st = t.strides();
  int64_t len = offset >= 0 ? std::min(s[d1], s[d2] - offset) : std::min(s[d1] + offset, s[d2]);
  len = std::max<int64_t>(len, 0);
  int64_t start = t.offset();
  if (len > 0) start += offset >= 0 ? offset * st[d2] : -offset * st[d1];
  Shape out;
  Strides out_st;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) out.push_back(s[d]), out_st.push_back(st[d]);
  out.push_back(len);
  out_st.push_back(st[d1] + st[d2]);
  return alias(t, out, out_st, start);
}

// zeros(shape) with g written on its diagonal (offset, d1, d2): diagonal's backward and
// diag's 1-D forward. Recorded with backward diagonal(gg), so it differentiates again.
Tensor diagonal_embed(const char* name, const Tensor& g, const Shape& shape, int64_t offset, int64_t d1, int64_t d2) {
  Tensor out = zeros(shape, g.dtype());
  K::copy(g, diagonal_alias(out, offset, d1, d2));
  return record(name, out, {g},
                [offset, d1, d2](const Tensor& gg, NeedsGrad) { return Grads{diagonal(gg, offset, d1, d2)}; });
}

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

}  // namespace

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
  Tensor out = K::empty(x.shape(), x.dtype());
  K::copy(alias(x, x.shape(), st, offset), out);
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
    out.push_back(padded.back() * repeats[std::size_t(i)]);
  }
  for (int64_t s : out)
    AG_CHECK(s >= 0, ValueError, "repeat: trying to create tensor with negative dimension ", s, ": ", list_str(out),
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

// ---- triangles and diagonals ----------------------------------------------------------
Tensor tril(const Tensor& x, int64_t k) { return triangle("tril", x, k, true); }
Tensor triu(const Tensor& x, int64_t k) { return triangle("triu", x, k, false); }

// out = a strided view of x's diagonal.   dx = zeros(x.shape) with g on that diagonal
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1 = wrap_dim(dim1, x.dim(), "diagonal"), d2 = wrap_dim(dim2, x.dim(), "diagonal");
  AG_CHECK(d1 != d2, ValueError, "diagonal: diagonal dimensions cannot be identical ", dim1, ", ", dim2, " (shape ",
           x.shape(), ")");
  return record("diagonal", diagonal_alias(x, offset, d1, d2), {x},
                [xs = x.shape(), offset, d1, d2](const Tensor& g, NeedsGrad) {
                  return Grads{diagonal_embed("diagonal_backward", g, xs, offset, d1, d2)};
                });
}

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

// ---- dims ---------------------------------------------------------------------------
Tensor unflatten(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes) {
  const int64_t d = wrap_dim_nonscalar(dim, x.dim(), "unflatten");
  AG_CHECK(!sizes.empty(), ValueError, "unflatten: sizes must be non-empty");
  const int64_t n = x.shape()[d];
  auto mismatch = [&] {
    return detail::cat("unflatten: Provided sizes ", list_str(sizes), " don't multiply up to the size of dim ", d, " (",
                       n, ") in the input tensor of shape ", x.shape());
  };
  std::vector<int64_t> s = sizes;
  int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      AG_CHECK(infer < 0, ValueError, "unflatten: only one dimension can be inferred (-1), got sizes ",
               list_str(sizes));
      infer = int64_t(i);
    } else {
      AG_CHECK(s[i] >= 0, ValueError, "unflatten: invalid shape dimension ", s[i], " in sizes ", list_str(sizes));
      known *= s[i];
    }
  }
  if (infer >= 0) {
    AG_CHECK(known != 0 || n != 0, ValueError, "unflatten: cannot reshape tensor of 0 elements into shape ",
             list_str(sizes), " because the unspecified dimension size -1 can be any value and is ambiguous");
    AG_CHECK(known != 0 && n % known == 0, ShapeError, mismatch());
    s[std::size_t(infer)] = n / known;
  } else {
    AG_CHECK(known == n, ShapeError, mismatch());
  }
  Shape out;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d)
      out.push_back(x.shape()[i]);
    else
      for (int64_t v : s) out.push_back(v);
  }
  return reshape(x, out);
}

// Composite: a permute that sends source[i] to destination[i] and keeps the other dims
// in order in the free slots.
Tensor movedim(const Tensor& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  const int64_t n = x.dim();
  AG_CHECK(source.size() == destination.size(), ValueError, "movedim: Invalid source or destination dims: source (",
           list_str(source), " dims) should contain the same number of dims as destination (", list_str(destination),
           " dims)");
  const std::size_t slots = std::size_t(std::max<int64_t>(n, 1));
  std::vector<int64_t> perm(slots, -1);
  std::vector<bool> src_used(slots, false), dst_used(slots, false);
  for (std::size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    AG_CHECK(!src_used[std::size_t(s)], ValueError, "movedim: repeated dim in `source` (", list_str(source), ")");
    AG_CHECK(!dst_used[std::size_t(d)], ValueError, "movedim: repeated dim in `destination` (", list_str(destination),
             ")");
    src_used[std::size_t(s)] = dst_used[std::size_t(d)] = true;
    perm[std::size_t(d)] = s;
  }
  if (n == 0) return permute(x, {});
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (src_used[std::size_t(next)]) ++next;
    p = next++;
  }
  return permute(x, perm);
}

Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

}  // namespace ag
