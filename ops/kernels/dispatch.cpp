// Run-time choice of instruction set (dispatch.h): which levels the CPU has, and the
// one in use. The stubs that follow it are in dispatch_table.cpp.
#include "kernels/dispatch.h"

#include <xsimd/xsimd.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "attograd/error.h"

namespace ag::kernels {
namespace {

constexpr SimdLevel kLevels[] = {
#define AG_SIMD_LEVEL_ITEM(level, ...) SimdLevel::level,
    AG_SIMD_LEVELS(AG_SIMD_LEVEL_ITEM, )
#undef AG_SIMD_LEVEL_ITEM
};

bool cpu_has(SimdLevel level) {
#if ATTOGRAD_SIMD_X86
  const auto a = xsimd::available_architectures();
  switch (level) {
    case SimdLevel::sse2: return true;
    case SimdLevel::avx2: return a.fma3_avx2;
    case SimdLevel::avx512: return a.avx512bw;  // the avx512 objects target F+CD+DQ+BW+VL
  }
  return false;
#else
  return level == SimdLevel::sse2;
#endif
}

SimdLevel widest() {
  SimdLevel best = SimdLevel::sse2;
  for (SimdLevel l : kLevels)
    if (cpu_has(l)) best = l;
  return best;
}

// ATTOGRAD_SIMD narrows the choice (a wider level than the CPU has is ignored, with a
// warning on stderr, so a job script written for one machine still runs on another).
SimdLevel initial_level() {
  const char* env = std::getenv("ATTOGRAD_SIMD");
  if (!env || !*env) return widest();
  for (SimdLevel l : kLevels)
    if (to_string(l) == env) {
      if (cpu_has(l)) return l;
      std::fprintf(stderr, "attograd: ATTOGRAD_SIMD=%s is not available on this CPU; using %s\n", env,
                   to_string(widest()).c_str());
      return widest();
    }
  std::string names;
  for (SimdLevel l : kLevels) names += (names.empty() ? "" : ", ") + to_string(l);
  std::fprintf(stderr, "attograd: ATTOGRAD_SIMD=%s is not one of %s; using %s\n", env, names.c_str(),
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
#define AG_SIMD_LEVEL_NAME(level, ...) \
  case SimdLevel::level: return #level;
    AG_SIMD_LEVELS(AG_SIMD_LEVEL_NAME, )
#undef AG_SIMD_LEVEL_NAME
  }
  return "?";
}

std::vector<SimdLevel> available_simd_levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : kLevels)
    if (cpu_has(l)) out.push_back(l);
  return out;
}

SimdLevel simd_level() { return current().load(std::memory_order_relaxed); }

void set_simd_level(SimdLevel level) {
  AG_CHECK(cpu_has(level), ValueError, "set_simd_level: ", to_string(level),
           " is not available on this CPU or in this build");
  current().store(level, std::memory_order_relaxed);
}

}  // namespace ag::kernels
