// Scans along one dim. x is made contiguous and viewed as (outer, len, inner); each step
// along len updates a row of `inner` accumulators, so memory is read in order.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/scan_sort.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

// PyTorch's _log_add_exp_helper (cpu logcumsumexp): the equal-infinite case returns x
// so that -inf + -inf stays -inf instead of NaN; std::min/max return x when x is NaN.
double log_add_exp(double x, double acc) {
  double lo = std::isnan(acc) ? acc : std::min(x, acc);
  double hi = std::isnan(acc) ? acc : std::max(x, acc);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;
}

// Acc is double for floats and uint64 for integers: integer cumsum / cumprod (int64 out)
// wrap modulo 2^64 as PyTorch's, where signed overflow would be undefined. (logcumsumexp
// takes floats only; its -inf start is never made for an integer Acc.)
template <class T, class Acc, class O>
void scan_rows(Scan op, const T* x, O* out, int64_t outer, int64_t len, int64_t inner, bool reverse) {
  Acc init = op == Scan::prod ? Acc(1) : Acc(0);
  if constexpr (std::is_floating_point_v<Acc>)
    if (op == Scan::logsumexp) init = -std::numeric_limits<Acc>::infinity();
  std::vector<Acc> acc(static_cast<std::size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), init);
    for (int64_t s = 0; s < len; ++s) {
      const int64_t i = reverse ? len - 1 - s : s;
      const T* xr = x + (o * len + i) * inner;
      O* outr = out + (o * len + i) * inner;
      for (int64_t j = 0; j < inner; ++j) {
        // int32 -> int64 -> uint64 keeps the sign (modulo 2^64)
        Acc v = std::is_integral_v<Acc> ? static_cast<Acc>(static_cast<int64_t>(xr[j])) : static_cast<Acc>(xr[j]);
        Acc& a = acc[static_cast<std::size_t>(j)];
        if (op == Scan::sum)
          a += v;
        else if (op == Scan::prod)
          a *= v;
        else if constexpr (std::is_floating_point_v<Acc>)
          a = log_add_exp(v, a);
        outr[j] = static_cast<O>(a);
      }
    }
  }
}

}  // namespace

Tensor scan(Scan op, const Tensor& x, int64_t dim, bool reverse) {
  if (is_half(x)) return to_half(scan(op, as_f32(x), dim, reverse), x.dtype());
  const bool floating = x.is_floating_point();
  Tensor out = empty(x.shape(), floating ? x.dtype() : DType::i64);
  if (x.numel() == 0) return out;
  Tensor xc = contiguous(x);
  int64_t outer = 1, inner = 1, len = x.dim() == 0 ? 1 : x.shape()[dim];
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.shape()[d];
    if (d > dim) inner *= x.shape()[d];
  }
  dispatch_all(x.dtype(), "scan", [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>)
      scan_rows<T, double, T>(op, xc.data<T>(), out.data<T>(), outer, len, inner, reverse);
    else
      scan_rows<T, uint64_t, int64_t>(op, xc.data<T>(), out.data<int64_t>(), outer, len, inner, reverse);
  });
  return out;
}

}  // namespace ag::kernels
