// Indexing ops: gathers forward, scatter-adds backward (repeated indices accumulate).
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
  return record("scatter_add", out, {src}, [dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
    return Grads{gather(g, dim, si.get())};
  });
}

}  // namespace

// out = x.index_select(dim, index).   dx = index_add(zeros, dim, index, g)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, x.dim(), "index_select");
  if (x.dim() == 0) {
    // A 0-d input is one element along dim 0 (PyTorch): exactly one index, 0 or -1, and a
    // 0-d result. (The kernel reads x's size along dim, which a 0-d tensor does not have.)
    AG_CHECK(index.numel() == 1, IndexError, "index_select: a 0-d input takes exactly one index, got ",
             index.numel(), " (index shape ", index.shape(), ")");
    return index_select(x.reshape({1}), 0, index.reshape({1})).reshape({});
  }
  Tensor out = K::index_select(x, dim, index);
  return record("index_select", out, {x},
                [xs = x.shape(), dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
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
  AG_CHECK(weight.dim() == 2, ShapeError, "embedding: weight must be 2-D (V, E), got shape ",
           weight.shape());
  AG_CHECK(ids.dtype() == DType::i64 || ids.dtype() == DType::i32, DTypeError,
           "embedding: ids must be integer (i64), got ", ids.dtype(), " with shape ", ids.shape());
  const int64_t V = weight.shape()[0], E = weight.shape()[1];
  Tensor flat = K::convert(ids, DType::i64).view(Shape{ids.numel()});
  for (int64_t id : flat.to_vector<int64_t>())
    AG_CHECK(id >= 0 && id < V, IndexError, "embedding: id ", id,
             " is out of range for a vocabulary of ", V, " rows (weight shape ", weight.shape(), ")");
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

}  // namespace ag
