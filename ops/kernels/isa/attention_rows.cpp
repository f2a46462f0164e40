// The row operations of attention_rows.h for one level (isa.h: compiled once per
// level, Arch its xsimd arch).
#include "isa.h"

#include <cstdint>
#include <limits>

#include "kernels/attention_rows.h"

namespace ag::kernels {
namespace {

template <class T, class A>
struct Rows {
  using V = xsimd::batch<T, A>;
  static constexpr int64_t W = static_cast<int64_t>(V::size);

  static T max(const T* x, int64_t n) {
    T out = -std::numeric_limits<T>::infinity();
    int64_t i = 0;
    if (n >= W) {
      V acc = V::load_unaligned(x);
      for (i = W; i + W <= n; i += W) acc = xsimd::max(acc, V::load_unaligned(x + i));
      alignas(64) T lanes[W];
      acc.store_aligned(lanes);
      for (int64_t k = 0; k < W; ++k) out = lanes[k] > out ? lanes[k] : out;
    }
    for (; i < n; ++i) out = x[i] > out ? x[i] : out;
    return out;
  }

  static T exp_sub_sum(T* x, int64_t n, T m) {
    const V vm(m);
    V acc(T(0));
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      V e = exp_guarded(V(V::load_unaligned(x + i) - vm));
      e.store_unaligned(x + i);
      acc += e;
    }
    T sum = xsimd::hadd(acc);
    if (i < n) {  // the tail through the same vector exp, so every element rounds alike
      alignas(64) T buf[W];
      for (int64_t k = 0; k < W; ++k) buf[k] = i + k < n ? x[i + k] : -std::numeric_limits<T>::infinity();
      V e = exp_guarded(V(V::load_aligned(buf) - vm));
      e.store_aligned(buf);
      for (int64_t k = 0; i + k < n; ++k) sum += x[i + k] = buf[k];
    }
    return sum;
  }

  static void exp_sub(T* x, int64_t n, T m) { exp_sub_sum(x, n, m); }

  static void scale(T* x, int64_t n, T a) {
    const V va(a);
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::load_unaligned(x + i) * va).store_unaligned(x + i);
    for (; i < n; ++i) x[i] *= a;
  }

  static void mul(T* x, const T* z, int64_t n) { mul_into(x, x, z, n); }

  static void mul_into(T* out, const T* x, const T* z, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::load_unaligned(x + i) * V::load_unaligned(z + i)).store_unaligned(out + i);
    for (; i < n; ++i) out[i] = x[i] * z[i];
  }

  static void ds(T* dp, const T* p, int64_t n, T D) {
    const V vd(D);
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::load_unaligned(p + i) * (V::load_unaligned(dp + i) - vd)).store_unaligned(dp + i);
    for (; i < n; ++i) dp[i] = p[i] * (dp[i] - D);
  }

  static T dot(const T* a, const T* b, int64_t n) {
    V acc(T(0));
    int64_t i = 0;
    for (; i + W <= n; i += W) acc = xsimd::fma(V::load_unaligned(a + i), V::load_unaligned(b + i), acc);
    T sum = xsimd::hadd(acc);
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }
};

}  // namespace

AG_ISA_KERNEL(row_max_f32, &Rows<float, Arch>::max);
AG_ISA_KERNEL(row_max_f64, &Rows<double, Arch>::max);
AG_ISA_KERNEL(row_exp_sub_sum_f32, &Rows<float, Arch>::exp_sub_sum);
AG_ISA_KERNEL(row_exp_sub_sum_f64, &Rows<double, Arch>::exp_sub_sum);
AG_ISA_KERNEL(row_exp_sub_f32, &Rows<float, Arch>::exp_sub);
AG_ISA_KERNEL(row_exp_sub_f64, &Rows<double, Arch>::exp_sub);
AG_ISA_KERNEL(row_scale_f32, &Rows<float, Arch>::scale);
AG_ISA_KERNEL(row_scale_f64, &Rows<double, Arch>::scale);
AG_ISA_KERNEL(row_mul_f32, &Rows<float, Arch>::mul);
AG_ISA_KERNEL(row_mul_f64, &Rows<double, Arch>::mul);
AG_ISA_KERNEL(row_mul_into_f32, &Rows<float, Arch>::mul_into);
AG_ISA_KERNEL(row_mul_into_f64, &Rows<double, Arch>::mul_into);
AG_ISA_KERNEL(row_ds_f32, &Rows<float, Arch>::ds);
AG_ISA_KERNEL(row_ds_f64, &Rows<double, Arch>::ds);
AG_ISA_KERNEL(row_dot_f32, &Rows<float, Arch>::dot);
AG_ISA_KERNEL(row_dot_f64, &Rows<double, Arch>::dot);

}  // namespace ag::kernels
