// Tensor::index and index_put with LibTorch's torch::indexing rules (the index types and
// the rules: attograd/tensor_indexing.h), nonzero, and the index put ops.
//
// index is a composite: the basic part (integers, slices, None, Ellipsis) is a chain of
// view ops (select, slice, unsqueeze); the advanced part (index tensors) moves the indexed
// dims to the front, merges them and reads one linear index per broadcast position with
// index_select. So it needs no backward of its own and differentiates twice.
// index_put writes through the same rules: the positions x.index(...) reads are found by
// indexing a tensor of element numbers, and scatter (or index_add, accumulate) writes
// there, also composites.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "op_util.h"

namespace ag {
namespace {
using indexing::TensorIndex;

// One advanced index: an i64 tensor of indices into dim `dim` of the basic result.
struct Advanced {
  int64_t dim;
  Tensor index;
};

bool is_bool_index(const Tensor& t) { return t.dtype() == DType::b8; }

// The number of dims of x an entry consumes (None, Ellipsis and bools consume none).
int64_t consumed_dims(const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Kind::integer:
    case TensorIndex::Kind::slice: return 1;
    case TensorIndex::Kind::tensor: {
      const Tensor& t = i.tensor();
      if (t.dim() == 0) return is_bool_index(t) ? 0 : 1;
      return is_bool_index(t) ? t.dim() : 1;
    }
    default: return 0;
  }
}

Tensor select_checked(const Tensor& x, int64_t dim, int64_t i, const char* op) {
  const int64_t n = x.shape()[dim];
  AG_CHECK(i >= -n && i < n, IndexError, op, ": index ", i, " is out of bounds for dimension ", dim, " with size ", n,
           " (shape ", x.shape(), ")");
  return select(x, dim, i);
}

// An i64 index of one element (true) or none (false) for a new size-1 dim: how PyTorch
// indexes with a bool.
Tensor bool_index(bool b) {
  return b ? Tensor::from_vector(std::vector<int64_t>{0}) : Tensor::from_vector(std::vector<int64_t>{});
}

// Applies integers, slices, None and Ellipsis as views; collects the tensor indices (bool
// masks as their nonzero coordinates) with the dims of the result they index.
Tensor apply_basic(const Tensor& x, const std::vector<TensorIndex>& indices, std::vector<Advanced>& adv,
                   const char* op) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    AG_CHECK(!i.is_tensor() || i.tensor().defined(), ValueError, op,
             ": an index tensor is undefined (use Slice() for a whole dim)");
    consumed += consumed_dims(i);
    ellipses += i.is_ellipsis();
  }
  AG_CHECK(ellipses <= 1, IndexError, op, ": an index can only have a single ellipsis ('...')");
  AG_CHECK(consumed <= x.dim(), IndexError, op, ": too many indices for tensor of dimension ", x.dim(), " (shape ",
           x.shape(), ", ", consumed, " dims indexed)");
  Tensor r = x;
  int64_t dim = 0;  // the result's dim the next entry applies to
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::none: r = unsqueeze(r, dim++); break;
      case TensorIndex::Kind::ellipsis: dim += x.dim() - consumed; break;
      case TensorIndex::Kind::integer: r = select_checked(r, dim, i.integer(), op); break;
      case TensorIndex::Kind::slice: {
        AG_CHECK(i.slice().step() > 0, ValueError, op, ": step must be greater than zero, got ", i.slice().step());
        r = slice(r, dim++, i.slice().start(), i.slice().stop(), i.slice().step());
        break;
      }
      case TensorIndex::Kind::boolean:
        r = unsqueeze(r, dim);
        adv.push_back({dim++, bool_index(i.boolean())});
        break;
      case TensorIndex::Kind::tensor: {
        const Tensor& t = i.tensor();
        if (is_bool_index(t)) {
          if (t.dim() == 0) {
            r = unsqueeze(r, dim);
            adv.push_back({dim++, bool_index(t.item<bool>())});
            break;
          }
          for (int64_t k = 0; k < t.dim(); ++k)
            AG_CHECK(t.shape()[k] == r.shape()[dim + k], IndexError, op, ": the shape of the mask ", t.shape(),
                     " at index ", k, " does not match the shape of the indexed tensor ", r.shape(), " at index ",
                     dim + k);
          Tensor nz = nonzero(t);  // (n, k)
          for (int64_t k = 0; k < t.dim(); ++k) adv.push_back({dim++, select(nz, 1, k)});
          break;
        }
        AG_CHECK(t.dtype() == DType::i64 || t.dtype() == DType::i32, IndexError, op,
                 ": tensors used as indices must be long, int or bool tensors, got ", t.dtype(), " with shape ",
                 t.shape());
        if (t.dim() == 0) {  // a 0-d integer tensor selects, as LibTorch's applySlicing
          r = select_checked(r, dim, t.item<int64_t>(), op);
          break;
        }
        adv.push_back({dim++, t.dtype() == DType::i64 ? t : ag::to(t, DType::i64)});
        break;
      }
    }
  }
  return r;
}

// The broadcast shape of the advanced indices and, per broadcast position, the linear
// index into the indexed dims of v (row-major over them), negative indices wrapped.
std::pair<Shape, Tensor> linear_index(const Tensor& v, const std::vector<Advanced>& adv, const char* op) {
  Shape b = adv[0].index.shape();
  for (std::size_t k = 1; k < adv.size(); ++k) {
    try {
      b = broadcast_shapes(b, adv[k].index.shape(), op);
    } catch (const ShapeError&) {
      std::ostringstream shapes;
      for (std::size_t k = 0; k < adv.size(); ++k) shapes << (k ? ", " : "") << adv[k].index.shape();
      AG_CHECK(false, IndexError, op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
               shapes.str());
    }
  }
  const int64_t n = numel(b);
  std::vector<int64_t> lin(static_cast<std::size_t>(n), 0);
  for (const Advanced& a : adv) {
    const int64_t size = v.shape()[a.dim];
    const std::vector<int64_t> idx = expand(a.index, b).to_vector<int64_t>();
    for (int64_t p = 0; p < n; ++p) {
      int64_t i = idx[p];
      AG_CHECK(i >= -size && i < size, IndexError, op, ": index ", i, " is out of bounds for dimension ", a.dim,
               " with size ", size, " (indexed shape ", v.shape(), ")");
      lin[p] = lin[p] * size + (i < 0 ? i + size : i);  // < numel(v): no overflow
    }
  }
  return {b, Tensor::from_vector(lin)};
}

// v's elements at the advanced indices: (broadcast dims, v's other dims), the broadcast
// dims where the first advanced dim was when the advanced dims are adjacent.
Tensor gather_advanced(const Tensor& v, const std::vector<Advanced>& adv, const char* op) {
  auto [b, lin] = linear_index(v, adv, op);
  std::vector<int64_t> order, rest_sizes;
  int64_t merged = 1;
  for (const Advanced& a : adv) order.push_back(a.dim), merged *= v.shape()[a.dim];
  Shape out_shape = b;
  for (int64_t d = 0; d < v.dim(); ++d) {
    if (std::find(order.begin(), order.end(), d) != order.end()) continue;
    order.push_back(d);
    out_shape.push_back(v.shape()[d]);
  }
  Shape flat = {merged};
  for (int64_t d = b.size(); d < out_shape.size(); ++d) flat.push_back(out_shape[d]);
  Tensor r = reshape(index_select(reshape(permute(v, order), flat), 0, lin), out_shape);
  bool adjacent = true;
  for (std::size_t k = 1; k < adv.size(); ++k) adjacent = adjacent && adv[k].dim == adv[k - 1].dim + 1;
  const int64_t first = adv[0].dim, nb = b.size();
  if (!adjacent || first == 0) return r;
  // Dims now: [b..., the `first` dims before them, the rest]; put b after those.
  std::vector<int64_t> perm;
  for (int64_t d = nb; d < nb + first; ++d) perm.push_back(d);
  for (int64_t d = 0; d < nb; ++d) perm.push_back(d);
  for (int64_t d = nb + first; d < r.dim(); ++d) perm.push_back(d);
  return permute(r, perm);
}

Tensor index_impl(const Tensor& x, const std::vector<TensorIndex>& indices, const char* op) {
  std::vector<Advanced> adv;
  Tensor v = apply_basic(x, indices, adv, op);
  return adv.empty() ? v : gather_advanced(v, adv, op);
}

bool has_tensor_index(const std::vector<TensorIndex>& indices) {
  return std::any_of(indices.begin(), indices.end(), [](const TensorIndex& i) {
    return i.is_boolean() || (i.is_tensor() && !(i.tensor().dim() == 0 && !is_bool_index(i.tensor())));
  });
}

void check_values_fit(const Tensor& values, const Shape& indexed, const Tensor& x, const char* op) {
  bool fits = false;
  try {
    fits = broadcast_shapes(values.shape(), indexed, op) == indexed;
  } catch (const ShapeError&) {}
  AG_CHECK(fits, ShapeError, op, ": shape mismatch: value tensor of shape ", values.shape(),
           " cannot be broadcast to indexing result of shape ", indexed, " (indexed tensor's shape ", x.shape(), ")");
}

// x with x[indices] = values (or += values): scatter (index_add) at the positions that
// x.index(indices) reads, found by indexing a tensor of element numbers.
Tensor put_impl(const Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate,
                const char* op) {
  Tensor pos;
  {
    NoGradGuard no_grad;
    pos = index_impl(arange(x.numel(), DType::i64).reshape(x.shape()), indices, op);
  }
  AG_CHECK(values.dtype() == x.dtype() || !has_tensor_index(indices), DTypeError, op,
           ": index put requires the source and destination dtypes match, got ", x.dtype(), " for the destination and ",
           values.dtype(), " for the source (shapes ", x.shape(), " and ", values.shape(), ")");
  check_values_fit(values, pos.shape(), x, op);
  const Tensor vals = reshape(expand(ag::to(values, x.dtype()), pos.shape()), {-1});
  const Tensor where = reshape(pos, {-1});
  const Tensor flat = reshape(x, {-1});
  Tensor out = accumulate ? index_add(flat, 0, where, vals) : scatter(flat, 0, where, vals);
  return reshape(out, x.shape());
}

std::vector<TensorIndex> as_torch_indices(const std::vector<Tensor>& indices, const Tensor& x, const char* op) {
  AG_CHECK(static_cast<int64_t>(indices.size()) <= x.dim(), IndexError, op,
           ": too many indices for tensor of dimension ", x.dim(), " (", indices.size(), " given, shape ", x.shape(),
           ")");
  std::vector<TensorIndex> out;
  for (const Tensor& t : indices) out.push_back(t.defined() ? TensorIndex(t) : TensorIndex(indexing::Slice()));
  return out;
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  const std::vector<bool> nz = (x.dtype() == DType::b8 ? x : ne(x, 0.0)).to_vector<bool>();  // NaN counts
  std::vector<int64_t> coords;
  std::vector<int64_t> at(static_cast<std::size_t>(x.dim()), 0);
  int64_t count = 0;
  for (std::size_t p = 0; p < nz.size(); ++p) {
    if (nz[p]) {
      coords.insert(coords.end(), at.begin(), at.end());
      ++count;
    }
    for (int64_t d = x.dim() - 1; d >= 0; --d) {  // row-major odometer
      if (++at[d] < x.shape()[d]) break;
      at[d] = 0;
    }
  }
  return Tensor::from_vector(coords, Shape{count, x.dim()});
}

Tensor argwhere(const Tensor& x) { return nonzero(x); }

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return put_impl(x, as_torch_indices(indices, x, "index_put"), values, accumulate, "index_put");
}

Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices) { return index_impl(x, indices, "index"); }
Tensor Tensor::index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) const {
  return ag::index_put(*this, indices, values, accumulate);
}
Tensor Tensor::nonzero() const { return ag::nonzero(*this); }
Tensor Tensor::argwhere() const { return ag::argwhere(*this); }

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index_impl(*this, std::vector<TensorIndex>(indices), "index");
}
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return index_impl(*this, indices, "index"); }
Tensor Tensor::operator[](int64_t i) const { return index_impl(*this, {TensorIndex(i)}, "operator[]"); }
Tensor Tensor::operator[](const Tensor& idx) const { return index_impl(*this, {TensorIndex(idx)}, "operator[]"); }

std::ostream& indexing::operator<<(std::ostream& os, const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Kind::none: return os << "None";
    case TensorIndex::Kind::ellipsis: return os << "...";
    case TensorIndex::Kind::integer: return os << i.integer();
    case TensorIndex::Kind::boolean: return os << (i.boolean() ? "True" : "False");
    case TensorIndex::Kind::slice: return os << i.slice().start() << ":" << i.slice().stop() << ":" << i.slice().step();
    case TensorIndex::Kind::tensor: return os << "tensor(" << i.tensor().shape() << ", " << i.tensor().dtype() << ")";
  }
  return os;
}

namespace {
// In place: ops/inplace.cpp's rules (inplace_index_put). Outside the graph a basic index
// writes through its view of self; otherwise self takes put_impl's result.
Tensor& index_put_inplace(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate,
                          const char* op) {
  const bool basic = !has_tensor_index(indices) && !accumulate;
  const Tensor view = basic ? index_impl(self, indices, op) : Tensor();
  if (view.defined()) check_values_fit(values, view.shape(), self, op);
  return inplace_index_put(
      self, values, view, [&](const Tensor& x) { return put_impl(x, indices, values, accumulate, op); }, op);
}
}  // namespace

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values) {
  return index_put_inplace(*this, std::vector<TensorIndex>(indices), values, false, "index_put_");
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, Scalar value) {
  return index_put_(std::vector<TensorIndex>(indices), value);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) {
  return index_put_inplace(*this, indices, values, false, "index_put_");
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, Scalar value) {
  return index_put_inplace(*this, indices, full(Shape{}, value, dtype()), false, "index_put_");
}
Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return index_put_inplace(*this, as_torch_indices(indices, *this, "index_put_"), values, accumulate, "index_put_");
}

}  // namespace ag
