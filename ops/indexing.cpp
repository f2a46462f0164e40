// Indexing ops: gathers (index_select, gather, embedding) whose backward scatter-adds
// (repeated indices accumulate), the scatter family, masked ops and one_hot. Forwards
// call raw kernels; every backward is written with differentiable ops (scatter, gather,
// index_select, masked_fill, masked_select, masked_scatter), so its own gradient exists
// for double backward.
#include "attograd/ops/indexing.h"

#include <algorithm>
#include <string>

#include "attograd/detail/error_context.h"
#include "kernels/scatter.h"
#include "op_util.h"

namespace ag {
namespace {

// The backward of index_select: index_add(zeros(shape), dim, index, src), rows equal to
// `skip` left out. Its own backward selects the same rows again (skipped ones zero).
Tensor index_add_zeros(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src,
                       std::optional<int64_t> skip = {}) {
  Tensor out = K::index_add(shape, dim, index, src, skip);
  return record("index_add", out, {src}, [dim, si = Saved(index), skip](const Tensor& g, NeedsGrad) {
    const Tensor index = si.get();
    Tensor rows = index_select(g, dim, index);
    if (!skip) return Grads{rows};
    Shape keep = Dims::filled(rows.dim(), 1);
    keep[dim] = index.numel();
    return Grads{masked_fill(rows, eq(index, double(*skip)).reshape(keep), 0.0)};
  });
}

// The backward of gather: scatter_add(zeros(shape), dim, index, src); its own backward
// gathers again.
Tensor scatter_add_zeros(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = K::scatter_add(shape, dim, index, src);
  return record("scatter_add", out, {src},
                [dim, si = Saved(index)](const Tensor& g, NeedsGrad) { return Grads{gather(g, dim, si.get())}; });
}

Tensor bool_mask(const Tensor& mask, const Shape& shape, const char* op) {
  AG_CHECK(mask.dtype() == DType::b8, DTypeError, op, ": mask must be b8 (bool), got ", mask.dtype(), " with shape ",
           mask.shape());
  Tensor m = K::empty(shape, DType::b8);  // (shape) broadcast copy
  K::copy(mask, m);
  return m;
}

Tensor broadcast_copy(const Tensor& x, const Shape& shape) {
  Tensor out = K::empty(shape, x.dtype());
  K::copy(x, out);
  return out;
}

// PyTorch's checks for scatter / scatter_add (index and src as many dims as x,
// index.size(d) <= src.size(d), and <= x.size(d) apart from dim; index values in
// [0, x.size(dim))). Returns src cut to index's shape: only that corner is used.
Tensor check_scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const char* op) {
  AG_CHECK(index.dtype() == DType::i64, DTypeError, op, ": index must be i64, got ", index.dtype(), " with shape ",
           index.shape());
  AG_CHECK(index.dim() == x.dim(), ShapeError, op, ": index shape ", index.shape(),
           " must have as many dims as the input shape ", x.shape());
  Tensor used = src;
  if (src.defined()) {
    AG_CHECK(src.dtype() == x.dtype(), DTypeError, op, ": src dtype ", src.dtype(), " differs from the input dtype ",
             x.dtype(), " (shapes ", src.shape(), " and ", x.shape(), ")");
    AG_CHECK(src.dim() == x.dim(), ShapeError, op, ": src shape ", src.shape(),
             " must have as many dims as the input shape ", x.shape());
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    AG_CHECK(d == dim || index.shape()[d] <= x.shape()[d], ShapeError, op, ": expected index ", index.shape(),
             " to be no larger than the input ", x.shape(), " apart from dim ", dim);
    if (!src.defined()) continue;
    AG_CHECK(index.shape()[d] <= src.shape()[d], ShapeError, op, ": expected index ", index.shape(),
             " to be no larger than src ", src.shape());
    if (src.shape()[d] != index.shape()[d]) used = narrow(used, d, 0, index.shape()[d]);
  }
  K::check_index_range(index, x.dim() == 0 ? 1 : x.shape()[dim], dim, op);
  return used;
}

}  // namespace

// ---- index_select / gather / embedding ------------------------------------------------
// out = x.index_select(dim, index).   dx = index_add(zeros, dim, index, g)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, x.dim(), "index_select");
  if (x.dim() == 0) {
    // A 0-d input is one element along dim 0 (PyTorch): exactly one index, 0, and a
    // 0-d result. (The kernel reads x's size along dim, which a 0-d tensor does not have.)
    AG_CHECK(index.numel() == 1, IndexError, "index_select: a 0-d input takes exactly one index, got ", index.numel(),
             " (index shape ", index.shape(), ")");
    return index_select(x.reshape({1}), 0, index.reshape({1})).reshape({});
  }
  Tensor out = K::index_select(x, dim, index);
  return record("index_select", out, {x}, [xs = x.shape(), dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
    return Grads{index_add_zeros(xs, dim, si.get(), g)};
  });
}

// out[i][j] = x[i][index[i][j]] (dim 1).   dx = scatter_add(zeros, dim, index, g)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, x.dim(), "gather");
  if (x.dim() == 0) {
    // As index_select: a 0-d input is one element along dim 0, and its index is 0-d.
    AG_CHECK(index.dim() == 0, ShapeError, "gather: index shape ", index.shape(),
             " must have as many dims as the input shape []");
    return gather(x.reshape({1}), 0, index.reshape({1})).reshape({});
  }
  Tensor out = K::gather(x, dim, index);
  return record("gather", out, {x}, [xs = x.shape(), dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
    return Grads{scatter_add_zeros(xs, dim, si.get(), g)};
  });
}

// ids (...) -> weight rows (..., E).   dweight = index_add of g rows, padding_idx left out
Tensor embedding(const Tensor& ids, const Tensor& weight, std::optional<int64_t> padding_idx) {
  AG_CHECK(weight.dim() == 2, ShapeError, "embedding: weight must be 2-D (V, E), got shape ", weight.shape());
  AG_CHECK(ids.dtype() == DType::i64 || ids.dtype() == DType::i32, DTypeError,
           "embedding: ids must be integer (i64), got ", ids.dtype(), " with shape ", ids.shape());
  const int64_t V = weight.shape()[0], E = weight.shape()[1];
  if (padding_idx) {  // PyTorch: a negative padding_idx in [-V, -1] counts from the end
    AG_CHECK(*padding_idx >= -V && *padding_idx < V, IndexError, "embedding: padding_idx ", *padding_idx,
             " must be within num_embeddings ", V, " (in [", -V, ", ", V, "); weight shape ", weight.shape(), ")");
    if (*padding_idx < 0) padding_idx = *padding_idx + V;
  }
  Tensor flat = K::convert(ids, DType::i64).view(Shape{ids.numel()});
  for (int64_t id : flat.to_vector<int64_t>())
    AG_CHECK(id >= 0 && id < V, IndexError, "embedding: id ", id, " is out of range for a vocabulary of ", V,
             " rows (weight shape ", weight.shape(), ")");
  Tensor rows = K::index_select(weight, 0, flat);  // (N, E)
  Shape out_shape = ids.shape();
  out_shape.push_back(E);
  Tensor out = Tensor(rows.storage(), out_shape, contiguous_strides(out_shape), 0, rows.dtype());
  return record("embedding", out, {weight},
                [ws = weight.shape(), sf = Saved(flat), padding_idx, E](const Tensor& g, NeedsGrad) {
                  Tensor g2 = reshape(g, Shape{g.numel() / E, E});
                  return Grads{index_add_zeros(ws, 0, sf.get(), g2, padding_idx)};
                });
}

// ---- scatter -----------------------------------------------------------------------
// out = x; out[i][index[i][j]] = src[i][j] (dim 1).
//   dx = scatter(g, dim, index, 0)   dsrc = gather(g, dim, index)
// With repeated indices the result (and the src gradient) is as PyTorch leaves it:
// undefined; here the last write in row-major order of index wins, and every src
// element sharing that target gets its gradient.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = wrap_dim(dim, x.dim(), "scatter");
  Tensor used = check_scatter(x, dim, index, src, "scatter");  // (index shape)
  Tensor out = K::scatter(x, dim, index, used, 0.0);
  return record("scatter", out, {x, used}, [dim, si = Saved(index)](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? scatter(g, dim, si.get(), 0.0) : Tensor{}, need[1] ? gather(g, dim, si.get()) : Tensor{}};
  });
}

// out = x; out[i][index[i][j]] = value.   dx = scatter(g, dim, index, 0)
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  dim = wrap_dim(dim, x.dim(), "scatter");
  check_scatter(x, dim, index, Tensor{}, "scatter");
  Tensor out = K::scatter(x, dim, index, Tensor{}, value);
  return record("scatter", out, {x},
                [dim, si = Saved(index)](const Tensor& g, NeedsGrad) { return Grads{scatter(g, dim, si.get(), 0.0)}; });
}

// out = x; out[i][index[i][j]] += src[i][j] (dim 1).   dx = g   dsrc = gather(g, dim, index)
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = wrap_dim(dim, x.dim(), "scatter_add");
  Tensor used = check_scatter(x, dim, index, src, "scatter_add");
  Tensor out = K::binary(K::Binary::add, x, K::scatter_add(x.shape(), dim, index, used), "scatter_add");
  return record("scatter_add", out, {x, used}, [dim, si = Saved(index)](const Tensor& g, NeedsGrad need) {
    return Grads{need[0] ? g : Tensor{}, need[1] ? gather(g, dim, si.get()) : Tensor{}};
  });
}

// ---- index_add ---------------------------------------------------------------------
// out = x; out.select(dim, index[j]) += alpha * source.select(dim, j).
//   dx = g   dsource = alpha * index_select(g, dim, index)
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, double alpha) {
  dim = wrap_dim(dim, x.dim(), "index_add");
  AG_CHECK(index.dtype() == DType::i64 || index.dtype() == DType::i32, DTypeError,
           "index_add: index must be i64 or i32, got ", index.dtype(), " with shape ", index.shape());
  AG_CHECK(index.dim() <= 1, ShapeError, "index_add: index must be 1-D, got shape ", index.shape());
  AG_CHECK(source.dtype() == x.dtype(), DTypeError, "index_add: source dtype ", source.dtype(),
           " differs from the input dtype ", x.dtype(), " (shapes ", source.shape(), " and ", x.shape(), ")");
  check_float(x, "index_add");
  AG_CHECK(source.dim() == x.dim(), ShapeError, "index_add: source shape ", source.shape(),
           " must have as many dims as the input shape ", x.shape());
  const int64_t n = source.dim() == 0 ? 1 : source.shape()[dim];
  AG_CHECK(index.numel() == n, ShapeError, "index_add: ", index.numel(), " indices given for source.size(", dim,
           ") = ", n, " (source shape ", source.shape(), ", index shape ", index.shape(), ")");
  for (int64_t d = 0; d < x.dim(); ++d)
    AG_CHECK(d == dim || source.shape()[d] == x.shape()[d], ShapeError, "index_add: source shape ", source.shape(),
             " must match the input shape ", x.shape(), " apart from dim ", dim);
  Tensor idx = K::convert(index, DType::i64).view(Shape{index.numel()});  // (n)
  K::check_index_range(idx, x.dim() == 0 ? 1 : x.shape()[dim], dim, "index_add");
  // The kernel wants at least one dim: a 0-d x and source are read as shape [1].
  Shape ks = x.dim() == 0 ? Shape{1} : x.shape();
  Tensor src = K::contiguous(source);
  if (x.dim() == 0) src = alias(src, Shape{1}, Strides{1}, src.offset());
  Tensor added = K::index_add(ks, dim, idx, src);
  added = alias(added, x.shape(), contiguous_strides(x.shape()), 0);
  if (alpha != 1.0) added = K::binary_scalar(K::Binary::mul, added, alpha, false);
  Tensor out = K::binary(K::Binary::add, x, added, "index_add");
  return record("index_add", out, {x, source},
                [dim, alpha, si = Saved(idx), ss = source.shape()](const Tensor& g, NeedsGrad need) {
                  Tensor gs;
                  if (need[1]) {
                    gs = ss.empty() ? reshape(index_select(reshape(g, {1}), 0, si.get()), ss)
                                    : index_select(g, dim, si.get());
                    if (alpha != 1.0) gs = gs * alpha;
                  }
                  return Grads{need[0] ? g : Tensor{}, gs};
                });
}

// ---- masked_fill / masked_select / masked_scatter -------------------------------------
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  AG_CHECK(mask.dtype() == DType::b8, DTypeError, "masked_fill: mask must be bool, got ", mask.dtype(), " (shape ",
           mask.shape(), ")");
  AG_CHECK(broadcast_shapes(mask.shape(), x.shape(), "masked_fill") == x.shape(), ShapeError,
           "masked_fill: mask shape ", mask.shape(), " cannot be broadcast to input shape ", x.shape());
  // An integer x and a value it cannot hold: "masked_fill: full: value ... cannot be converted".
  return where(mask, detail::in_op("masked_fill", [&] { return full(Shape{}, value, x.dtype()); }), x);
}

// x and mask broadcast to one shape S; out (n) = x's elements where mask is true.
//   dx = sum_to(masked_scatter(zeros(S), mask, g), x.shape)
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  Shape s = broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  Tensor m = bool_mask(mask, s, "masked_select");  // (S)
  Tensor out = K::masked_select(broadcast_copy(x, s), m);
  return record("masked_select", out, {x}, [sm = Saved(m), xs = x.shape()](const Tensor& g, NeedsGrad) {
    const Tensor& m = sm.get();
    return Grads{sum_to(masked_scatter(zeros(m.shape(), g.dtype()), m, g), xs)};
  });
}

// x and mask broadcast to one shape S; out (S) = x, with its true positions taking
// source's elements in row-major order (source: any shape, at least n elements).
//   dx = sum_to(masked_fill(g, mask, 0), x.shape)
//   dsource = masked_select(g, mask) then zeros, as source's shape
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  Shape s = broadcast_shapes(x.shape(), mask.shape(), "masked_scatter");
  Tensor m = bool_mask(mask, s, "masked_scatter");  // (S)
  AG_CHECK(source.dtype() == x.dtype(), DTypeError, "masked_scatter: source dtype ", source.dtype(),
           " differs from the input dtype ", x.dtype(), " (shapes ", source.shape(), " and ", x.shape(), ")");
  const int64_t n = K::count_true(m);
  AG_CHECK(source.numel() >= n, ShapeError, "masked_scatter: source shape ", source.shape(), " has ", source.numel(),
           " elements, fewer than the ", n, " true elements of the mask (mask shape ", mask.shape(), ", input shape ",
           x.shape(), ")");
  Tensor out = K::masked_scatter(broadcast_copy(x, s), m, source);
  return record("masked_scatter", out, {x, source},
                [sm = Saved(m), xs = x.shape(), ss = source.shape(), n](const Tensor& g, NeedsGrad need) {
                  const Tensor& m = sm.get();
                  Tensor gs;
                  if (need[1]) {
                    gs = masked_select(g, m);  // (n)
                    const int64_t total = numel(ss);
                    if (total > n) gs = cat({gs, zeros(Shape{total - n}, g.dtype())}, 0);
                    gs = reshape(gs, ss);
                  }
                  return Grads{need[0] ? sum_to(masked_fill(g, m, 0.0), xs) : Tensor{}, gs};
                });
}

// ---- one_hot -----------------------------------------------------------------------
// indices (...) i64 -> (..., C) i64; C = max + 1 when num_classes is -1. No gradient.
Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  AG_CHECK(indices.dtype() == DType::i64, DTypeError, "one_hot: indices must be i64, got ", indices.dtype(),
           " with shape ", indices.shape());
  AG_CHECK(num_classes >= -1, ValueError, "one_hot: num_classes must be -1 (inferred) or >= 0, got ", num_classes);
  std::vector<int64_t> v = indices.to_vector<int64_t>();
  if (v.empty()) {
    AG_CHECK(num_classes > 0, ValueError,
             "one_hot: cannot infer the number of classes from an empty "
             "tensor (shape ",
             indices.shape(), ", num_classes ", num_classes, ")");
    return K::one_hot(indices, num_classes);
  }
  int64_t lo = v[0], hi = v[0];
  for (int64_t i : v) lo = std::min(lo, i), hi = std::max(hi, i);
  AG_CHECK(lo >= 0, IndexError, "one_hot: class value ", lo, " is negative; class values must be in [0, ",
           num_classes == -1 ? "num_classes" : std::to_string(num_classes), ") (indices shape ", indices.shape(), ")");
  if (num_classes == -1) num_classes = hi + 1;
  AG_CHECK(hi < num_classes, IndexError, "one_hot: class value ", hi, " is out of range for ", num_classes,
           " classes (indices shape ", indices.shape(), ")");
  int64_t total = 0;  // the output's element count, from the caller's num_classes
  AG_CHECK(!__builtin_mul_overflow(indices.numel(), num_classes, &total), ValueError, "one_hot: ", indices.numel(),
           " indices x ", num_classes, " classes overflows int64 (indices shape ", indices.shape(), ")");
  return K::one_hot(indices, num_classes);
}

}  // namespace ag
