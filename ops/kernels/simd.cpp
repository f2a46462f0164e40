// Run-time choice of vector width (simd.h). The SSE2 row and elementwise operations
// live here, built for the baseline; the wide ones in simd_avx2.cpp and simd_avx512.cpp.
#include "kernels/simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "attograd/error.h"
#include "simd_elt_impl.h"
#include "simd_rows_impl.h"

namespace ag::kernels {

#if ATTOGRAD_SIMD_X86
// Defined in simd_avx2.cpp / simd_avx512.cpp (compiled with -mavx2 -mfma / -mavx512*).
const RowOps<float>& row_ops_avx2_f32();
const RowOps<double>& row_ops_avx2_f64();
const RowOps<float>& row_ops_avx512_f32();
const RowOps<double>& row_ops_avx512_f64();
const EltOps<float>& elt_ops_avx2_f32();
const EltOps<double>& elt_ops_avx2_f64();
const EltOps<float>& elt_ops_avx512_f32();
const EltOps<double>& elt_ops_avx512_f64();
#endif

namespace {

bool cpu_has(SimdLevel level) {
#if ATTOGRAD_SIMD_X86
  const auto a = xsimd::available_architectures();
  switch (level) {
    case SimdLevel::sse2: return true;
    case SimdLevel::avx2: return a.fma3_avx2;
    case SimdLevel::avx512: return a.avx512bw;  // simd_avx512.cpp targets F+CD+DQ+BW+VL
  }
  return false;
#else
  return level == SimdLevel::sse2;
#endif
}

SimdLevel widest() {
  if (cpu_has(SimdLevel::avx512)) return SimdLevel::avx512;
  if (cpu_has(SimdLevel::avx2)) return SimdLevel::avx2;
  return SimdLevel::sse2;
}

// ATTOGRAD_SIMD narrows the choice (a wider level than the CPU has is ignored, with a
// warning on stderr, so a job script written for one machine still runs on another).
SimdLevel initial_level() {
  const char* env = std::getenv("ATTOGRAD_SIMD");
  if (!env || !*env) return widest();
  for (SimdLevel l : {SimdLevel::sse2, SimdLevel::avx2, SimdLevel::avx512})
    if (to_string(l) == env) {
      if (cpu_has(l)) return l;
      std::fprintf(stderr, "attograd: ATTOGRAD_SIMD=%s is not available on this CPU; using %s\n", env,
                   to_string(widest()).c_str());
      return widest();
    }
  std::fprintf(stderr, "attograd: ATTOGRAD_SIMD=%s is not one of sse2, avx2, avx512; using %s\n", env,
               to_string(widest()).c_str());
  return widest();
}

std::atomic<SimdLevel>& current() {
  static std::atomic<SimdLevel> level{initial_level()};
  return level;
}

}  // namespace

std::string to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::sse2: return "sse2";
    case SimdLevel::avx2: return "avx2";
    case SimdLevel::avx512: return "avx512";
  }
  return "?";
}

std::vector<SimdLevel> available_simd_levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::sse2, SimdLevel::avx2, SimdLevel::avx512})
    if (cpu_has(l)) out.push_back(l);
  return out;
}

SimdLevel simd_level() { return current().load(std::memory_order_relaxed); }

void set_simd_level(SimdLevel level) {
  AG_CHECK(cpu_has(level), ValueError, "set_simd_level: ", to_string(level),
           " is not available on this CPU or in this build");
  current().store(level, std::memory_order_relaxed);
}

template <class T>
const RowOps<T>& row_ops(SimdLevel level) {
  static const RowOps<T> base = Rows<T, xsimd::sse2>::ops();
#if ATTOGRAD_SIMD_X86
  if (level == SimdLevel::avx512) {
    if constexpr (std::is_same_v<T, float>) return row_ops_avx512_f32();
    else return row_ops_avx512_f64();
  }
  if (level == SimdLevel::avx2) {
    if constexpr (std::is_same_v<T, float>) return row_ops_avx2_f32();
    else return row_ops_avx2_f64();
  }
#endif
  return base;
}

template <class T>
const RowOps<T>& row_ops() {
  return row_ops<T>(simd_level());
}

template <class T>
const EltOps<T>& elt_ops(SimdLevel level) {
  static const EltOps<T> base = Elt<T, xsimd::sse2>::ops();
#if ATTOGRAD_SIMD_X86
  if (level == SimdLevel::avx512) {
    if constexpr (std::is_same_v<T, float>) return elt_ops_avx512_f32();
    else return elt_ops_avx512_f64();
  }
  if (level == SimdLevel::avx2) {
    if constexpr (std::is_same_v<T, float>) return elt_ops_avx2_f32();
    else return elt_ops_avx2_f64();
  }
#endif
  return base;
}

template <class T>
const EltOps<T>& elt_ops() {
  return elt_ops<T>(simd_level());
}

template const RowOps<float>& row_ops<float>(SimdLevel);
template const RowOps<double>& row_ops<double>(SimdLevel);
template const RowOps<float>& row_ops<float>();
template const RowOps<double>& row_ops<double>();
template const EltOps<float>& elt_ops<float>(SimdLevel);
template const EltOps<double>& elt_ops<double>(SimdLevel);
template const EltOps<float>& elt_ops<float>();
template const EltOps<double>& elt_ops<double>();

}  // namespace ag::kernels
