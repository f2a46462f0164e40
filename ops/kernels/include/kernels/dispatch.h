#pragma once
// Run-time choice of instruction set for the vector kernels, and the per-kernel dispatch
// stub (PyTorch's DispatchStub, smaller). How it fits together: ops/kernels/DISPATCH.md.
//
// The library is built for baseline x86-64 (SSE2), never with -march=native. Each
// vector kernel's source in ops/kernels/isa/ is compiled once per level below
// (cmake/attogradIsa.cmake) and fills that level's slot of its stub; a call goes to the
// slot of simd_level(), so one binary runs everywhere and still uses the wide registers
// where the CPU has them.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ag::kernels {

// The levels, narrowest first. A new level is one entry here, one flag set in
// cmake/attogradIsa.cmake, its xsimd arch in ops/kernels/isa/isa.h and one CPU check in
// dispatch.cpp.
#define AG_SIMD_LEVELS(X, ...) X(sse2, __VA_ARGS__) X(avx2, __VA_ARGS__) X(avx512, __VA_ARGS__)

#define AG_SIMD_LEVEL_ENUM(level, ...) level,
enum class SimdLevel { AG_SIMD_LEVELS(AG_SIMD_LEVEL_ENUM, ) };
#undef AG_SIMD_LEVEL_ENUM

#define AG_SIMD_LEVEL_COUNT(level, ...) +1
inline constexpr int kSimdLevelCount = 0 AG_SIMD_LEVELS(AG_SIMD_LEVEL_COUNT, );
#undef AG_SIMD_LEVEL_COUNT

std::string to_string(SimdLevel level);

// Levels this CPU (and this build) can run, narrowest first; sse2 is always there.
std::vector<SimdLevel> available_simd_levels();

// The level in use: the widest available, unless ATTOGRAD_SIMD=sse2|avx2|avx512 in the
// environment or set_simd_level asked for a narrower one.
SimdLevel simd_level();

// For tests and benchmarks: run every dispatched kernel at `level`. Throws ValueError
// when the CPU or the build lacks it.
void set_simd_level(SimdLevel level);

// One vector kernel's entry: a function pointer of type Fn per level. Slot `l` points
// at the constant that the kernel's isa/ source, compiled for level l, defines
// (isa::<name>_<level>, declared by AG_DECLARE_DISPATCH); the stubs themselves are
// defined in dispatch_table.cpp. Everything is constant-initialized (constinit), so a
// stub works from any static constructor, and the table's references to every level's
// constant keep each per-ISA object in the link, static library included.
//   gelu_row(out, x, n, tanh)           at simd_level()
//   auto f = gelu_row.get();            hoisted out of a loop
//   gelu_row.get(SimdLevel::avx2)       one level (tests)
template <class Fn>
struct DispatchStub {
  static_assert(std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>);
  const char* name;
  const Fn* slot[kSimdLevelCount];

  Fn get(SimdLevel level) const { return *slot[static_cast<int>(level)]; }
  Fn get() const { return get(simd_level()); }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()(std::forward<Args>(args)...);
  }
};

// A kernel written once for float and double: one stub per dtype (named <name>_f32 and
// <name>_f64), picked by T in code templated on it:  row_max.of<T>()(x, n).
template <template <class> class Fn>
struct FloatDispatchStub {
  DispatchStub<Fn<float>> f32;
  DispatchStub<Fn<double>> f64;

  template <class T>
  const DispatchStub<Fn<T>>& of() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    if constexpr (std::is_same_v<T, float>)
      return f32;
    else
      return f64;
  }
};

// In a kernel header, inside namespace ag::kernels: declares stub `name` of type Fn and
// the per-level slots isa::<name>_sse2, isa::<name>_avx2, ... its isa/ source defines
// (AG_ISA_KERNEL, ops/kernels/isa/isa.h).
#define AG_DECLARE_ISA_SLOT(level, Fn, name) extern const Fn name##_##level;
#define AG_DECLARE_DISPATCH(Fn, name) \
  namespace isa { \
  AG_SIMD_LEVELS(AG_DECLARE_ISA_SLOT, Fn, name) \
  } \
  extern const ::ag::kernels::DispatchStub<Fn> name
// The same for a FloatDispatchStub: Fn is a template alias, Fn<T> the function type.
#define AG_DECLARE_FLOAT_DISPATCH(Fn, name) \
  namespace isa { \
  AG_SIMD_LEVELS(AG_DECLARE_ISA_SLOT, Fn<float>, name##_f32) \
  AG_SIMD_LEVELS(AG_DECLARE_ISA_SLOT, Fn<double>, name##_f64) \
  } \
  extern const ::ag::kernels::FloatDispatchStub<Fn> name

// Every stub, with the kernel header that declares it (e.g. {"row_max_f32",
// "attention_rows"}): the tests check that each one has an equivalence check.
struct DispatchEntry {
  const char* name;
  const char* header;
};
const std::vector<DispatchEntry>& dispatch_registry();

}  // namespace ag::kernels
