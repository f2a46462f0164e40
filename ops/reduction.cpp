// Reductions. sum is the primitive (its backward expands g back); mean, var, max/min
// along a dim and logsumexp are composites; max/min over all elements split g among ties.
#include <algorithm>
#include <cmath>

#include "op_util.h"

namespace ag {

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    AG_CHECK(std::find(out.begin(), out.end(), w) == out.end(), IndexError, op, ": dim ", d,
             " appears more than once");
    if (ndim > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape keepdim_shape(const Shape& x, const std::vector<int64_t>& dims) {
  Shape s = x;
  for (int64_t d : dims) s[d] = 1;
  return s;
}

// ---- sum ------------------------------------------------------------------
// out = sum over dims.   dx = g (with the reduced dims restored) expanded to x.shape
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  auto dims = normalize_dims(dims_in, x.dim(), "sum");
  Tensor out = K::reduce(K::Reduce::sum, x, dims, keepdim);
  if (!x.is_floating_point()) return out;
  return record("sum", out, {x}, [xs = x.shape(), dims](const Tensor& g, NeedsGrad) {
    return Grads{expand(reshape(g, keepdim_shape(xs, dims)), xs)};
  });
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  check_float(x, "mean");
  auto dims = normalize_dims(dims_in, x.dim(), "mean");
  int64_t n = 1;
  for (int64_t d : dims) n *= x.shape()[d];
  return sum(x, dims, keepdim) / static_cast<double>(n);
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }

// var = sum((x - mean)^2) / (n - correction)
Tensor var(const Tensor& x, const std::vector<int64_t>& dims_in, int64_t correction, bool keepdim) {
  check_float(x, "var");
  auto dims = normalize_dims(dims_in, x.dim(), "var");
  int64_t n = 1;
  for (int64_t d : dims) n *= x.shape()[d];
  Tensor d = x - mean(x, dims, true);
  return sum(square(d), dims, keepdim) / static_cast<double>(std::max<int64_t>(n - correction, 0));
}
Tensor var(const Tensor& x) { return var(x, {}, 1, false); }

// ---- max / min: the index comes from the kernel, the value from gather -------
// (so the gradient flows to the arg element through gather's scatter-add backward).
static std::pair<Tensor, Tensor> extreme(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  Tensor xv = x.dim() == 0 ? reshape(x, {1}) : x;
  dim = wrap_dim(dim, xv.dim(), name);
  AG_CHECK(xv.shape()[dim] > 0, IndexError, name, ": cannot reduce over dim ", dim,
           " of size 0 (shape ", x.shape(), ")");
  Tensor idx = K::reduce(is_max ? K::Reduce::argmax : K::Reduce::argmin, xv, {dim}, true);
  Tensor values = gather(xv, dim, idx);
  if (!keepdim || x.dim() == 0) {
    values = x.dim() == 0 ? reshape(values, {}) : squeeze(values, dim);
    idx = x.dim() == 0 ? reshape(idx, {}) : squeeze(idx, dim);
  }
  return {values, idx};
}
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, true); }
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, false); }

// Over all elements: out = the max (NaN if any).   dx = g / count where x == out (where x
// is NaN when out is), else 0: PyTorch's evenly_distribute_backward, so tied maxima share g.
static Tensor extreme_all(const Tensor& x, bool is_max) {
  const char* name = is_max ? "max" : "min";
  AG_CHECK(x.numel() > 0, ValueError, name, ": cannot reduce an empty tensor (shape ", x.shape(),
           "); give a dim");
  Tensor out = K::reduce(is_max ? K::Reduce::max : K::Reduce::min, x, normalize_dims({}, x.dim(), name), false);
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record(name, out, {x}, [sx = save_if(need, x), sy = save_output_if(need, out)](const Tensor& g, NeedsGrad) {
    const Tensor &x = sx.get(), &y = sy.get();
    Tensor mask = std::isnan(y.item<double>()) ? K::compare(K::Compare::ne, x, x, "max")
                                               : K::compare(K::Compare::eq, x, y, "max");
    double count = static_cast<double>(K::reduce(K::Reduce::sum, mask, normalize_dims({}, x.dim(), "max"),
                                                 false).item<int64_t>());
    return Grads{where(mask, g / count, 0.0)};
  });
}
Tensor max(const Tensor& x) { return extreme_all(x, true); }
Tensor min(const Tensor& x) { return extreme_all(x, false); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return max(x, dim, keepdim).second; }
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) { return min(x, dim, keepdim).second; }

// log(sum(exp(x - m))) + m with m the (detached) max, 0 where it is not finite.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  check_float(x, "logsumexp");
  auto dims = normalize_dims(dims_in, x.dim(), "logsumexp");
  Tensor m = K::reduce(K::Reduce::max, x, dims, true);
  m = K::where(K::isfinite(m), m, zeros(Shape{}, x.dtype()));
  Tensor r = log(sum(exp(x - m), dims, true)) + m;
  if (keepdim) return r;
  Shape s;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) s.push_back(x.shape()[d]);
  return reshape(r, s);
}

// ---- sum_to: undoes broadcasting ------------------------------------------------
Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  int64_t lead = g.dim() - shape.size();
  AG_ASSERT(lead >= 0, "sum_to: ", g.shape(), " cannot be summed to ", shape);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < g.dim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) dims.push_back(i);
  Tensor r = dims.empty() ? g : sum(g, dims, true);
  return reshape(r, shape);
}

}  // namespace ag
