// Sorting: the kernels pick indices; the values are gather(x, dim, indices), so their
// gradient routes back to the picked elements (gather's backward is a scatter-add).
#include "attograd/ops/reduction.h"
#include "kernels/scan_sort.h"
#include "reduction_util.h"

namespace ag {

// Always stable: equal values keep their order whichever `stable` says (PyTorch allows
// that for stable=false).
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  dim = wrap_dim(dim, x.dim(), "sort");
  Tensor idx = K::sort_indices(x, dim, descending);
  if (x.dim() == 0) return {clone(x), idx.view(Shape{})};
  return {gather(x, dim, idx), idx};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  return K::sort_indices(x, wrap_dim(dim, x.dim(), "argsort"), descending);
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  dim = wrap_dim(dim, x.dim(), "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[dim];
  AG_CHECK(k >= 0 && k <= n, IndexError, "topk: k = ", k, " is out of range for dim ", dim, " of size ", n, " (shape ",
           x.shape(), ")");
  Tensor idx = K::topk_indices(x, k, dim, largest, sorted);
  if (x.dim() == 0) return {clone(x), idx.view(Shape{})};
  return {gather(x, dim, idx), idx};
}

}  // namespace ag
