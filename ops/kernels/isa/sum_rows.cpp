// The float sums of sum_rows.h for one level (isa.h: compiled once per level, Arch its
// xsimd arch).
#include "isa.h"

#include <cstdint>

#include "kernels/sum_rows.h"

namespace ag::kernels {
namespace {

template <class A>
struct Sums {
  using D = xsimd::batch<double, A>;
  static constexpr int64_t WD = static_cast<int64_t>(D::size);

  static double sum(const float* x, int64_t n) {
    return widened_sum<A>(x, n, [](auto a) { return a; });
  }

  static void accumulate(double* acc, const float* x, int64_t n) {
    int64_t j = 0;
    for (; j + WD <= n; j += WD) (D::load_unaligned(acc + j) + widen<A>(x + j)).store_unaligned(acc + j);
    for (; j < n; ++j) acc[j] += static_cast<double>(x[j]);
  }
};

}  // namespace

AG_ISA_KERNEL(sum_row, &Sums<Arch>::sum);
AG_ISA_KERNEL(accumulate_row, &Sums<Arch>::accumulate);

}  // namespace ag::kernels
