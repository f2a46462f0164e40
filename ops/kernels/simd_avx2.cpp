// The fused attention kernel's row operations and the elementwise ones built for AVX2 (this file alone is
// compiled with -mavx2 -mfma; see CMakeLists.txt). Called only when
// the CPU reports it (simd.cpp).
#if ATTOGRAD_SIMD_X86
#include "simd_elt_impl.h"
#include "simd_rows_impl.h"

namespace ag::kernels {

const RowOps<float>& row_ops_avx2_f32() {
  static const RowOps<float> ops = Rows<float, xsimd::fma3<xsimd::avx2>>::ops();
  return ops;
}

const RowOps<double>& row_ops_avx2_f64() {
  static const RowOps<double> ops = Rows<double, xsimd::fma3<xsimd::avx2>>::ops();
  return ops;
}

const EltOps<float>& elt_ops_avx2_f32() {
  static const EltOps<float> ops = Elt<float, xsimd::fma3<xsimd::avx2>>::ops();
  return ops;
}

const EltOps<double>& elt_ops_avx2_f64() {
  static const EltOps<double> ops = Elt<double, xsimd::fma3<xsimd::avx2>>::ops();
  return ops;
}

}  // namespace ag::kernels
#endif
