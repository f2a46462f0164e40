// Views: tensors over x's storage with a shape, strides and offset of their own (view,
// reshape, flatten, unflatten, unsqueeze, squeeze, expand, transpose, permute, movedim,
// slice, select, narrow, diagonal, split, chunk); reshape copies only when the strides
// do not allow a view. Each backward maps g back onto the input's shape.
#include "attograd/ops/view.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "op_util.h"

namespace ag {
namespace {

// Resolves one -1 in `shape` against numel n.
Shape infer_shape(const Shape& shape, int64_t n, const Shape& from, const char* op) {
  Shape s = shape;
  int64_t known = 1, infer = -1;
  for (int64_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      AG_CHECK(infer < 0, ShapeError, op, ": only one dim can be -1 in ", shape);
      infer = i;
    } else {
      AG_CHECK(s[i] >= 0, ShapeError, op, ": invalid size ", s[i], " in shape ", shape);
      AG_CHECK(!__builtin_mul_overflow(known, s[i], &known), ShapeError, op, ": shape ", shape,
               " has too many elements (the count overflows int64)");
    }
  }
  if (infer >= 0) {
    AG_CHECK(known != 0 && n % known == 0, ShapeError, op, ": shape ", shape, " is invalid for input of shape ", from,
             " (", n, " elements)");
    s[infer] = n / known;
  }
  AG_CHECK(numel(s, op) == n, ShapeError, op, ": shape ", shape, " is invalid for input of shape ", from, " (", n,
           " elements)");
  return s;
}

// Strides that let x's memory be read as `shape`, if any (PyTorch's computeStride):
// each run of old dims that is contiguous in memory may be split into new dims.
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_st, const Shape& shape) {
  if (numel(old_shape) == 0 || old_shape.empty()) return contiguous_strides(shape);
  Strides st = Dims::filled(shape.size(), 1);
  int64_t view_d = shape.size() - 1;
  int64_t chunk_stride = old_st[old_st.size() - 1];  // stride of the chunk's last dim
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = old_shape.size() - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    bool chunk_ends = d == 0 || (old_shape[d - 1] != 1 && old_st[d - 1] != tensor_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      st[view_d] = view_numel * chunk_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = old_st[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return st;
}

Tensor record_reshape_like(const char* name, Tensor out, const Tensor& x) {
  return record(name, out, {x}, [xs = x.shape()](const Tensor& g, NeedsGrad) { return Grads{reshape(g, xs)}; });
}

template <class MakeView>
Tensor embed_part(const char* name, const Tensor& g, const Shape& xs, MakeView make_view);

// A view that picks part of x (slice, select). Its backward scatters g into zeros
// shaped like x through the same view (embed_part), whose own backward takes the view
// again: so gradients of any order flow.
template <class MakeView>
Tensor record_part_view(const char* name, const Tensor& x, MakeView make_view) {
  return record(name, make_view(x), {x}, [name, xs = x.shape(), make_view](const Tensor& g, NeedsGrad) {
    return Grads{embed_part(name, g, xs, make_view)};
  });
}

template <class MakeView>
Tensor embed_part(const char* name, const Tensor& g, const Shape& xs, MakeView make_view) {
  Tensor gx = zeros(xs, g.dtype());
  K::copy(g, make_view(gx));
  return record("embed_part", gx, {g}, [name, make_view](const Tensor& gg, NeedsGrad) {
    return Grads{record_part_view(name, gg, make_view)};
  });
}

// The diagonal `offset` of dims (d1, d2) of t as a strided view (no graph): d1 and d2
// removed, the diagonal appended; its stride is st[d1] + st[d2].
Tensor diagonal_alias(const Tensor& t, int64_t offset, int64_t d1, int64_t d2) {
  const Shape& s = t.shape();
  const Strides& st = t.strides();
  int64_t len = offset >= 0 ? std::min(s[d1], s[d2] - offset) : std::min(s[d1] + offset, s[d2]);
  len = std::max<int64_t>(len, 0);
  // Checked: strides of size-1 dims, and of any dim of an empty tensor, are unbounded
  // (the layout check only bounds strides that reach an element). An overflow means the
  // diagonal reads nothing past its first element, so its offset or stride is unused.
  int64_t start = t.offset(), step = 0, diag_stride = 0;
  if (len > 0 && (__builtin_mul_overflow(offset >= 0 ? offset : -offset, offset >= 0 ? st[d2] : st[d1], &step) ||
                  __builtin_add_overflow(start, step, &start)))
    start = t.offset();
  if (__builtin_add_overflow(st[d1], st[d2], &diag_stride)) diag_stride = 1;
  Shape out;
  Strides out_st;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) out.push_back(s[d]), out_st.push_back(st[d]);
  out.push_back(len);
  out_st.push_back(diag_stride);
  return alias(t, out, out_st, start);
}

}  // namespace

// zeros(shape) with g written on its diagonal (offset, d1, d2): diagonal's backward and
// diag's 1-D forward. Recorded with backward diagonal(gg), so it differentiates again.
Tensor diagonal_embed(const char* name, const Tensor& g, const Shape& shape, int64_t offset, int64_t d1, int64_t d2) {
  Tensor out = zeros(shape, g.dtype());
  K::copy(g, diagonal_alias(out, offset, d1, d2));
  return record(name, out, {g},
                [offset, d1, d2](const Tensor& gg, NeedsGrad) { return Grads{diagonal(gg, offset, d1, d2)}; });
}

// ---- reshaping ----------------------------------------------------------------------
Tensor view(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "view");
  auto st = view_strides(x.shape(), x.strides(), shape);
  AG_CHECK(st.has_value(), ShapeError, "view: shape ", shape, " is not compatible with input shape ", x.shape(),
           " and strides ", x.strides(), "; use reshape (it copies)");
  return record_reshape_like("view", alias(x, shape, *st, x.offset()), x);
}

Tensor reshape(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "reshape");
  if (auto st = view_strides(x.shape(), x.strides(), shape))
    return record_reshape_like("reshape", alias(x, shape, *st, x.offset()), x);
  return view(contiguous(x), shape);
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) {  // PyTorch: [1], with dims checked against the range [-1, 0]
    wrap_dim(start_dim, 0, "flatten"), wrap_dim(end_dim, 0, "flatten");
    return reshape(x, {1});
  }
  start_dim = wrap_dim(start_dim, x.dim(), "flatten");
  end_dim = wrap_dim(end_dim, x.dim(), "flatten");
  AG_CHECK(start_dim <= end_dim, ValueError, "flatten: start_dim ", start_dim, " is after end_dim ", end_dim);
  Shape s;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d <= start_dim || d > end_dim)
      s.push_back(x.shape()[d]);
    else
      AG_CHECK(!__builtin_mul_overflow(s[s.size() - 1], x.shape()[d], &s[s.size() - 1]), ShapeError, "flatten: shape ",
               x.shape(), " has too many elements (the count overflows int64)");
  }
  return reshape(x, s);
}

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
      AG_CHECK(s[i] >= 0, ShapeError, "unflatten: invalid shape dimension ", s[i], " in sizes ", list_str(sizes));
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

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  AG_CHECK(x.dim() < kMaxDims, ShapeError, "unsqueeze: a tensor of shape ", x.shape(), " has ", x.dim(),
           " dims; more than ", kMaxDims, " dims are not supported");
  dim = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape s = x.shape();
  Strides st = x.strides();
  // The new dim has size 1: its stride is never used; overflow (a size-1 or empty dim's
  // stride may be huge) falls back to 1.
  int64_t stride = 1;
  if (dim < x.dim() && __builtin_mul_overflow(s[dim], st[dim], &stride)) stride = 1;
  s.insert(dim, 1);
  st.insert(dim, stride);
  return record_reshape_like("unsqueeze", alias(x, s, st, x.offset()), x);
}

Tensor squeeze(const Tensor& x) {
  Shape s;
  Strides st;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.shape()[d] != 1) s.push_back(x.shape()[d]), st.push_back(x.strides()[d]);
  return record_reshape_like("squeeze", alias(x, s, st, x.offset()), x);
}

// Valid dims: [-ndim, ndim - 1], and -1 or 0 for a 0-d tensor (PyTorch).
Tensor squeeze(const Tensor& x, int64_t dim) {
  const int64_t lo = x.dim() > 0 ? -x.dim() : -1, hi = x.dim() > 0 ? x.dim() - 1 : 0;
  AG_CHECK(dim >= lo && dim <= hi, IndexError, "squeeze: dim ", dim, " is out of range for shape ", x.shape(),
           " (expected ", lo, " to ", hi, ")");
  if (x.dim() == 0) return record_reshape_like("squeeze", alias(x, x.shape(), x.strides(), x.offset()), x);
  dim = wrap_dim(dim, x.dim(), "squeeze");
  Shape s = x.shape();
  Strides st = x.strides();
  if (s[dim] == 1) s.erase(dim), st.erase(dim);
  return record_reshape_like("squeeze", alias(x, s, st, x.offset()), x);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  AG_CHECK(shape.size() >= x.dim(), ShapeError, "expand: shape ", shape, " has fewer dims than the input shape ",
           x.shape());
  int64_t lead = shape.size() - x.dim();
  Shape s = shape;
  Strides st = Dims::filled(shape.size(), 0);
  for (int64_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      AG_CHECK(shape[i] >= 0, ShapeError, "expand: new leading dim ", i, " cannot be ", shape[i], " (input shape ",
               x.shape(), ")");
      continue;
    }
    int64_t have = x.shape()[i - lead];
    if (shape[i] == -1) s[i] = have;
    AG_CHECK(s[i] >= 0, ShapeError, "expand: invalid size ", shape[i], " at dim ", i, " of ", shape, " (input shape ",
             x.shape(), ")");
    AG_CHECK(have == s[i] || have == 1, ShapeError, "expand: input shape ", x.shape(), " cannot be expanded to ", shape,
             " (dim ", i, ": ", have, " vs ", s[i], ")");
    st[i] = have == s[i] ? x.strides()[i - lead] : 0;
  }
  numel(s, "expand");  // a view allocates nothing, but its element count must fit in int64
  return record("expand", alias(x, s, st, x.offset()), {x},
                [xs = x.shape()](const Tensor& g, NeedsGrad) { return Grads{sum_to(g, xs)}; });
}

// ---- reordering dims -----------------------------------------------------------------
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  int64_t n = x.dim();
  d0 = wrap_dim(d0, n, "transpose"), d1 = wrap_dim(d1, n, "transpose");
  // A 0-d tensor (dims 0 or -1) is its own transpose, but still a recorded view.
  if (n == 0) return record_reshape_like("transpose", alias(x, x.shape(), x.strides(), x.offset()), x);
  Shape s = x.shape();
  Strides st = x.strides();
  std::swap(s[d0], s[d1]);
  std::swap(st[d0], st[d1]);
  return record("transpose", alias(x, s, st, x.offset()), {x},
                [d0, d1](const Tensor& g, NeedsGrad) { return Grads{transpose(g, d0, d1)}; });
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  int64_t n = x.dim();
  AG_CHECK(static_cast<int64_t>(dims.size()) == n, ShapeError, "permute: ", dims.size(),
           " dims given for a tensor of shape ", x.shape());
  std::vector<int64_t> p(dims.size()), inv(dims.size());
  std::vector<bool> used(dims.size(), false);
  Shape s;
  Strides st;
  for (int64_t i = 0; i < n; ++i) {
    p[i] = wrap_dim(dims[i], n, "permute");
    AG_CHECK(!used[p[i]], IndexError, "permute: dim ", dims[i], " repeats in the permutation (shape ", x.shape(), ")");
    used[p[i]] = true;
    inv[p[i]] = i;
    s.push_back(x.shape()[p[i]]);
    st.push_back(x.strides()[p[i]]);
  }
  return record("permute", alias(x, s, st, x.offset()), {x},
                [inv](const Tensor& g, NeedsGrad) { return Grads{permute(g, inv)}; });
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

// ---- parts ---------------------------------------------------------------------------
// slice with Python's clamping of start and end; step > 0.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  AG_CHECK(x.dim() > 0, ShapeError, "slice: cannot slice a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "slice");
  AG_CHECK(step > 0, ValueError, "slice: step must be positive, got ", step);
  const int64_t n = x.shape()[dim];
  auto clampi = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  start = clampi(start), end = std::max(clampi(end), start);
  auto make = [dim, start, end, step](const Tensor& t) {
    Shape s = t.shape();
    Strides st = t.strides();
    s[dim] = end == start ? 0 : (end - start - 1) / step + 1;  // (end - start + step - 1) could overflow
    // With one element or none the stride is never used (a huge step must not overflow it),
    // nor in an empty tensor, whose strides are unbounded (overflow: any stride will do).
    if (s[dim] > 1 && __builtin_mul_overflow(t.strides()[dim], step, &st[dim])) st[dim] = 1;
    // start * stride overflows only when the slice is empty (a huge stride is that of a
    // size-1 dim, or of an empty tensor): then no element is read and the offset is moot.
    int64_t offset = 0;
    if (__builtin_mul_overflow(start, t.strides()[dim], &offset) || __builtin_add_overflow(offset, t.offset(), &offset))
      offset = t.offset();
    return alias(t, s, st, offset);
  };
  return record_part_view("slice", x, make);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  AG_CHECK(x.dim() > 0, ShapeError, "select: cannot select from a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "select");
  const int64_t n = x.shape()[dim];
  AG_CHECK(index >= -n && index < n, IndexError, "select: index ", index, " is out of range for dim ", dim, " of size ",
           n, " (shape ", x.shape(), ")");
  if (index < 0) index += n;
  auto make = [dim, index](const Tensor& t) {
    Shape s = t.shape();
    Strides st = t.strides();
    s.erase(dim);
    st.erase(dim);
    // Overflows only for an empty tensor (unbounded strides): nothing is read.
    int64_t offset = 0;
    if (__builtin_mul_overflow(index, t.strides()[dim], &offset) || __builtin_add_overflow(offset, t.offset(), &offset))
      offset = t.offset();
    return alias(t, s, st, offset);
  };
  return record_part_view("select", x, make);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  AG_CHECK(x.dim() > 0, ShapeError, "narrow: cannot narrow a 0-d tensor");
  int64_t d = wrap_dim(dim, x.dim(), "narrow");
  const int64_t n = x.shape()[d];
  if (start < 0) start += n;
  // length <= n - start: start + length could overflow int64 (narrow(0, 2, INT64_MAX)).
  AG_CHECK(start >= 0 && length >= 0 && start <= n && length <= n - start, IndexError, "narrow: start ", start,
           " and length ", length, " do not fit in dim ", d, " of size ", n, " (shape ", x.shape(), ")");
  return slice(x, d, start, start + length, 1);
}

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

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = wrap_dim(dim, x.dim(), "split");
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  AG_CHECK(total == x.shape()[dim], ShapeError, "split: sizes add up to ", total, " but dim ", dim, " of shape ",
           x.shape(), " has ", x.shape()[dim]);
  std::vector<Tensor> parts;
  int64_t at = 0;
  for (int64_t n : sizes) parts.push_back(narrow(x, dim, at, n)), at += n;
  return parts;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  AG_CHECK(split_size > 0, ValueError, "split: split_size must be positive, got ", split_size);
  dim = wrap_dim(dim, x.dim(), "split");
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < x.shape()[dim]; at += split_size)
    sizes.push_back(std::min(split_size, x.shape()[dim] - at));
  return split(x, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  AG_CHECK(chunks > 0, ValueError, "chunk: chunks must be positive, got ", chunks);
  dim = wrap_dim(dim, x.dim(), "chunk");
  int64_t n = x.shape()[dim];
  return split(x, std::max<int64_t>((n + chunks - 1) / chunks, 1), dim);
}

}  // namespace ag
