// Reductions. sum is the primitive (its backward expands g back); mean, var, std,
// max/min along a dim and logsumexp are composites; max/min over all elements and
// amax/amin split g evenly among ties; prod's gradient is safe with zeros; any/all give
// bool (no gradient).
#include "attograd/ops/reduction.h"

#include <algorithm>
#include <cmath>

#include "kernels/scan_sort.h"
#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    AG_CHECK(std::find(out.begin(), out.end(), w) == out.end(), IndexError, op, ": dim ", d, " appears more than once");
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
Tensor sum(const Tensor& x_in, const std::vector<int64_t>& dims_in, bool keepdim) {
  const Tensor x = detail::autocast_f32(x_in);
  auto dims = normalize_dims(dims_in, x.dim(), "sum");
  Tensor out = K::reduce(K::Reduce::sum, x, dims, keepdim);
  if (!x.is_floating_point()) return out;
  return record("sum", out, {x}, [xs = x.shape(), dims](const Tensor& g, NeedsGrad) {
    return Grads{expand(reshape(g, keepdim_shape(xs, dims)), xs)};
  });
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor mean(const Tensor& x_in, const std::vector<int64_t>& dims_in, bool keepdim) {
  const Tensor x = detail::autocast_f32(x_in);
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
  // f32 is computed in f64, as PyTorch accumulates float variance in double: a column of
  // equal values near 2e30 has an f32 mean off by ~1e23, whose square overflows f32 to inf
  // where PyTorch gives 0 (found by the op fuzzer).
  const Tensor xs = x.dtype() == DType::f32 ? x.to(DType::f64) : x;
  Tensor d = xs - mean(xs, dims, true);
  Tensor v = sum(square(d), dims, keepdim) / static_cast<double>(std::max<int64_t>(n - correction, 0));
  return v.dtype() == x.dtype() ? v : v.to(x.dtype());
}
Tensor var(const Tensor& x) { return var(x, {}, 1, false); }

// ---- max / min: the index comes from the kernel, the value from gather -------
// (so the gradient flows to the arg element through gather's scatter-add backward).
// `name`: the op the caller called (argmax's errors say argmax).
static std::pair<Tensor, Tensor> extreme(const Tensor& x, int64_t dim, bool keepdim, bool is_max, const char* name) {
  Tensor xv = x.dim() == 0 ? reshape(x, {1}) : x;
  dim = wrap_dim(dim, xv.dim(), name);
  AG_CHECK(xv.shape()[dim] > 0, IndexError, name, ": cannot reduce over dim ", dim, " of size 0 (shape ", x.shape(),
           ")");
  Tensor idx = K::reduce(is_max ? K::Reduce::argmax : K::Reduce::argmin, xv, {dim}, true);
  Tensor values = gather(xv, dim, idx);
  if (!keepdim || x.dim() == 0) {
    values = x.dim() == 0 ? reshape(values, {}) : squeeze(values, dim);
    idx = x.dim() == 0 ? reshape(idx, {}) : squeeze(idx, dim);
  }
  return {values, idx};
}
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme(x, dim, keepdim, true, "max");
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme(x, dim, keepdim, false, "min");
}

// Over all elements: out = the max (NaN if any).   dx = g / count where x == out (where x
// is NaN when out is), else 0: PyTorch's evenly_distribute_backward, so tied maxima share g.
static Tensor extreme_all(const Tensor& x, bool is_max) {
  const char* name = is_max ? "max" : "min";
  AG_CHECK(x.numel() > 0, ValueError, name, ": cannot reduce an empty tensor (shape ", x.shape(), "); give a dim");
  Tensor out = K::reduce(is_max ? K::Reduce::max : K::Reduce::min, x, normalize_dims({}, x.dim(), name), false);
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record(name, out, {x}, [sx = save_if(need, x), sy = save_output_if(need, out)](const Tensor& g, NeedsGrad) {
    const Tensor &x = sx.get(), &y = sy.get();
    Tensor mask = std::isnan(y.item<double>()) ? K::compare(K::Compare::ne, x, x, "max")
                                               : K::compare(K::Compare::eq, x, y, "max");
    double count =
        static_cast<double>(K::reduce(K::Reduce::sum, mask, normalize_dims({}, x.dim(), "max"), false).item<int64_t>());
    return Grads{where(mask, g / count, 0.0)};
  });
}
Tensor max(const Tensor& x) { return extreme_all(x, true); }
Tensor min(const Tensor& x) { return extreme_all(x, false); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, true, "argmax").second; }
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, false, "argmin").second; }

// log(sum(exp(x - m))) + m with m the (detached) max, 0 where it is not finite.
Tensor logsumexp(const Tensor& x_in, const std::vector<int64_t>& dims_in, bool keepdim) try {
  const Tensor x = detail::autocast_f32(x_in);
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
} catch (const Error& e) { detail::rethrow_in_op("logsumexp", e); }

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

// ---- amax / amin -----------------------------------------------------------------
// out = max over dims.   dx = g / count * (x == out), count = ties per reduced slice
// (PyTorch's scale_grad_by_count; a NaN result matches nothing, so 0/0 makes its slice NaN).
static Tensor amax_op(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim, bool is_max) {
  const char* name = is_max ? "amax" : "amin";
  auto dims = normalize_dims(dims_in, x.dim(), name);
  AG_CHECK(!dims_in.empty() || x.numel() > 0, ValueError, name,
           ": cannot reduce an empty tensor over all dims; give the dims (shape ", x.shape(), ")");
  for (int64_t d : dims)
    AG_CHECK(x.shape()[d] > 0, IndexError, name, ": expected reduction dim ", d, " to have non-zero size (shape ",
             x.shape(), ")");
  Tensor out = K::reduce(is_max ? K::Reduce::max : K::Reduce::min, x, dims, keepdim);
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record(
      name, out, {x},
      [sx = save_if(need, x), sy = save_output_if(need, out), dims, xs = x.shape()](const Tensor& g, NeedsGrad) {
        const Tensor& x = sx.get();
        Shape ks = keepdim_shape(xs, dims);
        Tensor mask = K::convert(K::compare(K::Compare::eq, x, sy.get().reshape(ks), "amax"), x.dtype());
        Tensor count = K::reduce(K::Reduce::sum, mask, dims, true);
        return Grads{reshape(g, ks) / count * mask};
      });
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return amax_op(x, dims, keepdim, true); }
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return amax_op(x, dims, keepdim, false);
}

// ---- std ---------------------------------------------------------------------------
// y = sqrt(v) whose gradient is 0 where y == 0 (PyTorch's std_backward masks it) rather
// than g / 0.   dv = g / (2 y), 0 where y == 0
static Tensor sqrt_of_var(const Tensor& v) {
  Tensor y = sqrt(v.detach());  // sqrt's values; the backward is this op's own
  return record("std", y, {v}, [sy = save_output_if(wants_grad(v), y)](const Tensor& g, NeedsGrad) {
    const Tensor& y = sy.get();
    return Grads{where(eq(y, 0.0), 0.0, g / (y * 2.0))};
  });
}

Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) try {
  check_float(x, "std");
  return sqrt_of_var(var(x, dims, correction, keepdim));
} catch (const Error& e) { detail::rethrow_in_op("std", e); }
Tensor std(const Tensor& x) { return std(x, {}, 1, false); }

std::pair<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction,
                                   bool keepdim) try {
  check_float(x, "var_mean");
  return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
} catch (const Error& e) { detail::rethrow_in_op("var_mean", e); }
std::pair<Tensor, Tensor> std_mean(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction,
                                   bool keepdim) try {
  check_float(x, "std_mean");
  return {std(x, dims, correction, keepdim), mean(x, dims, keepdim)};
} catch (const Error& e) { detail::rethrow_in_op("std_mean", e); }

// ---- prod ----------------------------------------------------------------------------
static int64_t count_zeros(const Tensor& x) {
  return K::reduce(K::Reduce::sum, eq(x, 0.0), normalize_dims({}, x.dim(), "prod"), false).item<int64_t>();
}

// Product along dim with the dim kept: the last element of a running product.
static Tensor prod_keep_kernel(const Tensor& x, int64_t dim) {
  const int64_t n = x.shape()[dim];
  if (n == 0) {
    Shape s = x.shape();
    s[dim] = 1;
    Tensor out = K::empty(s, x.is_floating_point() ? x.dtype() : DType::i64);
    K::fill(out, 1.0);
    return out;
  }
  return K::contiguous(K::scan(K::Scan::prod, x, dim, false).narrow(dim, n - 1, 1));
}

// The product of the other elements along dim, safe with zeros (PyTorch's
// prod_safe_zeros_backward):  x = [a, b, c] -> [1, a, ab] * [bc, c, 1] = [bc, ac, ab].
static Tensor exclusive_prod(const Tensor& x, int64_t dim) {
  const int64_t n = x.shape()[dim];
  Shape s = x.shape();
  s[dim] = 1;
  Tensor one = ones(s, x.dtype());
  Tensor before = cumprod_dir(cat({one, narrow(x, dim, 0, n - 1)}, dim), dim, false);
  Tensor after = cumprod_dir(cat({narrow(x, dim, 1, n - 1), one}, dim), dim, true);
  return before * after;
}

// out (x's shape, dim kept) = prod along dim.   dx = g * out / x without zeros in x,
// else g * exclusive_prod(x) (PyTorch's prod_backward with a dim).
static Tensor prod_along(const Tensor& x, int64_t dim) {
  Tensor out = prod_keep_kernel(x, dim);
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record("prod", out, {x},
                [sx = save_if(need, x), sy = save_output_if(need, out), dim](const Tensor& g, NeedsGrad) {
                  const Tensor& x = sx.get();
                  if (x.numel() == 0) return Grads{zeros_like(x)};
                  if (x.shape()[dim] == 1) return Grads{g};
                  if (count_zeros(x) == 0) return Grads{g * (sy.get() / x)};
                  return Grads{g * exclusive_prod(x, dim)};
                });
}

Tensor prod(const Tensor& x_in, int64_t dim, bool keepdim) {
  const Tensor x = detail::autocast_f32(x_in);
  if (x.dim() == 0) {
    wrap_dim(dim, 0, "prod");
    return prod_along(reshape(x, {1}), 0).reshape({});
  }
  dim = wrap_dim(dim, x.dim(), "prod");
  Tensor out = prod_along(x, dim);
  return keepdim ? out : squeeze(out, dim);
}

// Over all elements (PyTorch's prod_backward without a dim): dx = g * out / x without
// zeros, the exclusive product with one zero, and 0 outright with two or more.
Tensor prod(const Tensor& x_in) {
  const Tensor x = detail::autocast_f32(x_in);
  Tensor out = prod_keep_kernel(K::contiguous(x).view(Shape{x.numel()}), 0).view(Shape{});
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record("prod", out, {x}, [sx = save_if(need, x), sy = save_output_if(need, out)](const Tensor& g, NeedsGrad) {
    const Tensor& x = sx.get();
    if (x.dim() == 0) return Grads{g};
    const int64_t zeros_in_x = count_zeros(x);
    if (zeros_in_x == 0) return Grads{g * (sy.get() / x)};
    if (zeros_in_x > 1) return Grads{zeros_like(x)};
    return Grads{reshape(g * exclusive_prod(reshape(x, {-1}), 0), x.shape())};
  });
}

// ---- any / all: bool results, no gradient -------------------------------------------
// Count the nonzero elements (NaN is nonzero) along the dims, then compare.
static Tensor count_nonzero(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return K::reduce(K::Reduce::sum, K::convert(x, DType::b8), dims, keepdim);
}
static int64_t length_of(const Tensor& x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.shape()[d];
  return n;
}

Tensor any(const Tensor& x) { return gt(count_nonzero(x, normalize_dims({}, x.dim(), "any"), false), 0.0); }
Tensor all(const Tensor& x) {
  return eq(count_nonzero(x, normalize_dims({}, x.dim(), "all"), false), static_cast<double>(x.numel()));
}
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  auto dims = normalize_dims({dim}, x.dim(), "any");
  return gt(count_nonzero(x, dims, keepdim), 0.0);
}
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  auto dims = normalize_dims({dim}, x.dim(), "all");
  return eq(count_nonzero(x, dims, keepdim), static_cast<double>(length_of(x, dims)));
}

}  // namespace ag
