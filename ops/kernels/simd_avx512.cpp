// The fused attention kernel's row operations and the elementwise ones built for AVX512 (this file alone is
// compiled with -mavx512f/cd/dq/bw/vl -mavx2 -mfma; see CMakeLists.txt). Called only when
// the CPU reports it (simd.cpp).
#if ATTOGRAD_SIMD_X86
#include "simd_elt_impl.h"
#include "simd_rows_impl.h"

namespace ag::kernels {

const RowOps<float>& row_ops_avx512_f32() {
  static const RowOps<float> ops = Rows<float, xsimd::avx512bw>::ops();
  return ops;
}

const RowOps<double>& row_ops_avx512_f64() {
  static const RowOps<double> ops = Rows<double, xsimd::avx512bw>::ops();
  return ops;
}

const EltOps<float>& elt_ops_avx512_f32() {
  static const EltOps<float> ops = Elt<float, xsimd::avx512bw>::ops();
  return ops;
}

const EltOps<double>& elt_ops_avx512_f64() {
  static const EltOps<double> ops = Elt<double, xsimd::avx512bw>::ops();
  return ops;
}

}  // namespace ag::kernels
#endif
