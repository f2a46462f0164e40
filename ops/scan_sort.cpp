// Scans along a dim: cumsum, cumprod, logcumsumexp, cummax, cummin. Each op runs in either direction
// (forward for the public op, reverse for the backwards), so every backward is built
// from differentiable scans:
//   cumsum:        dx = reverse_cumsum(g)
//   cumprod:       dx = reverse_cumsum(g * y) / x without zeros; with zeros, the exact
//                  derivative (PyTorch's cumprod_backward), see cumprod_grad
//   logcumsumexp:  PyTorch's formula, signs of g handled in log space
// Sorting: the kernels pick indices; the values are gather(x, dim, indices), so their
// gradient routes back to the picked elements (gather's backward is a scatter-add).
#include "attograd/ops/scan_sort.h"

#include <limits>

#include "kernels/scan_sort.h"
#include "op_util.h"

namespace ag {

// ---- cumsum --------------------------------------------------------------------------
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse) {
  Tensor out = K::scan(K::Scan::sum, x, dim, reverse);
  if (!x.is_floating_point()) return out;
  return record("cumsum", out, {x},
                [dim, reverse](const Tensor& g, NeedsGrad) { return Grads{cumsum_dir(g, dim, !reverse)}; });
}

Tensor cumsum(const Tensor& x, int64_t dim) { return cumsum_dir(x, wrap_dim(dim, x.dim(), "cumsum"), false); }

// ---- cumprod -------------------------------------------------------------------------
// x, y = cumprod(x) and g along dim, in scan order. With z1 the first zero of x and z2
// the second (or the end):
//   k < z1:   dx_k = sum_{j >= k} g_j y_j / x_k           (y_j = 0 from z1 on)
//   k = z1:   dx_k = sum_{z1 <= j < z2} g_j y'_j          y' = cumprod of x with x_z1 := 1
//   k > z1:   dx_k = 0                                    (every y_j with j >= k has x_z1)
static Tensor cumprod_grad(const Tensor& g, const Tensor& x, const Tensor& y, int64_t dim, bool reverse) {
  Tensor is_zero = eq(x, 0.0);
  Tensor zeros_so_far = K::scan(K::Scan::sum, is_zero, dim, reverse);  // i64
  if (K::reduce(K::Reduce::sum, is_zero, normalize_dims({}, x.dim(), "cumprod"), false).item<int64_t>() == 0)
    return cumsum_dir(g * y, dim, !reverse) / x;
  Tensor before = eq(zeros_so_far, 0.0);                                   // k < z1
  Tensor between = eq(zeros_so_far, 1.0);                                  // z1 <= k < z2
  Tensor first = K::logical(K::Logic::and_, is_zero, between, "cumprod");  // k = z1
  Tensor x_before = where(before, x, 1.0);
  Tensor a = where(before, cumsum_dir(where(before, g * y, 0.0), dim, !reverse) / x_before, 0.0);
  Tensor y1 = cumprod_dir(where(first, 1.0, x), dim, reverse);
  Tensor b = where(first, cumsum_dir(where(between, g * y1, 0.0), dim, !reverse), 0.0);
  return a + b;
}

Tensor cumprod_dir(const Tensor& x, int64_t dim, bool reverse) {
  Tensor out = K::scan(K::Scan::prod, x, dim, reverse);
  if (!x.is_floating_point()) return out;
  bool need = wants_grad(x);
  return record("cumprod", out, {x},
                [sx = save_if(need, x), sy = save_output_if(need, out), dim, reverse](const Tensor& g, NeedsGrad) {
                  const Tensor& x = sx.get();
                  if (x.dim() == 0 || x.shape()[dim] <= 1) return Grads{g};
                  return Grads{cumprod_grad(g, x, sy.get(), dim, reverse)};
                });
}

Tensor cumprod(const Tensor& x, int64_t dim) { return cumprod_dir(x, wrap_dim(dim, x.dim(), "cumprod"), false); }

// ---- logcumsumexp --------------------------------------------------------------------
// PyTorch 1.13's logcumsumexp_backward (after TensorFlow's): with y the output,
//   dx = exp(rev_lcse(log g+ - y) + x) - exp(rev_lcse(log g- - y) + x)
// where log g+ = log|g| where g > 0, else the lowest finite value (not -inf, so that
// -inf - y stays ordered); likewise g-. A -inf entry of x at the start of a row gets NaN,
// as in PyTorch.
static Tensor lcse_dir(const Tensor& x, int64_t dim, bool reverse) {
  Tensor out = K::scan(K::Scan::logsumexp, x, dim, reverse);
  bool need = wants_grad(x);
  return record("logcumsumexp", out, {x},
                [sx = save_if(need, x), sy = save_output_if(need, out), dim, reverse](const Tensor& g, NeedsGrad) {
                  if (g.dim() == 0 || g.numel() == 0) return Grads{g};
                  const Tensor &x = sx.get(), &y = sy.get();
                  const double lowest = x.dtype() == DType::f32 ? double(std::numeric_limits<float>::lowest())
                                                                : std::numeric_limits<double>::lowest();
                  Tensor log_abs = log(abs(g));
                  Tensor pos = where(gt(g, 0.0), log_abs, lowest);
                  Tensor neg = where(lt(g, 0.0), log_abs, lowest);
                  return Grads{exp(lcse_dir(pos - y, dim, !reverse) + x) - exp(lcse_dir(neg - y, dim, !reverse) + x)};
                });
}

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  check_float(x, "logcumsumexp");
  return lcse_dir(x, wrap_dim(dim, x.dim(), "logcumsumexp"), false);
}

// ---- cummax / cummin --------------------------------------------------------------------
// The kernel picks the running index (PyTorch's tie and NaN rule); the values are
// gather(x, dim, indices), so the gradient is scattered-added to the indices, as torch's
// cummaxmin_backward, and is itself differentiable.
static std::pair<Tensor, Tensor> cum_extreme(const Tensor& x, int64_t dim, bool max) {
  dim = wrap_dim(dim, x.dim(), max ? "cummax" : "cummin");
  Tensor idx = K::cum_extreme_indices(x, dim, max);
  if (x.dim() == 0) return {clone(x), idx};
  return {gather(x, dim, idx), idx};
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) { return cum_extreme(x, dim, true); }
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) { return cum_extreme(x, dim, false); }

// ---- sort / argsort / topk ---------------------------------------------------------
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
