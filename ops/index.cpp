// Indexing ops: gathers forward, scatter-adds backward (repeated indices accumulate).
#include "op_util.h"

namespace ag {

// out = x.index_select(dim, index).   dx = index_add(zeros, dim, index, g)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, x.dim(), "index_select");
  Tensor out = K::index_select(x, dim, index);
  return record("index_select", out, {x},
                [xs = x.shape(), dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
                  return Grads{K::index_add(xs, dim, si.get(), g)};
                });
}

// out[i][j] = x[i][index[i][j]] (dim 1).   dx = scatter_add(zeros, dim, index, g)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, x.dim(), "gather");
  Tensor out = K::gather(x, dim, index);
  return record("gather", out, {x}, [xs = x.shape(), dim, si = Saved(index)](const Tensor& g, NeedsGrad) {
    return Grads{K::scatter_add(xs, dim, si.get(), g)};
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
                  Tensor g2 = K::contiguous(g).view(Shape{g.numel() / E, E});
                  return Grads{K::index_add(ws, 0, sf.get(), g2, padding_idx)};
                });
}

}  // namespace ag
