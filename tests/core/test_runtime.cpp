// The runtime around the tensors. Here: the OpenBLAS kernel check (core/runtime.cpp,
// internal), which OPENBLAS_CORETYPE it advises for which kernel set and CPU (Debian's
// OpenBLAS 0.3.21 picks "Prescott" on an Emerald Rapids, family 6 model 207, a CPU with
// AVX-512 and AVX512-BF16). test_runtime/memory_stats.cpp: the memory statistics.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <string>

#include "attograd/detail/blas_check.h"

using ag::detail::blas_coretype_advice;
using ag::detail::CpuSimd;

TEST_CASE("pre-AVX2 kernels on a CPU with AVX-512 or AVX2 get the matching core type") {
  const CpuSimd emerald{true, true, true}, skylake{true, true, false}, haswell{true, false, false};
  CHECK(blas_coretype_advice("Prescott", emerald) == "Cooperlake");
  CHECK(blas_coretype_advice("Prescott", skylake) == "SkylakeX");
  CHECK(blas_coretype_advice("Prescott", haswell) == "Haswell");
  CHECK(blas_coretype_advice("Nehalem", haswell) == "Haswell");
  CHECK(blas_coretype_advice("Sandybridge", skylake) == "SkylakeX");
  CHECK(blas_coretype_advice("Core2", emerald) == "Cooperlake");
}

TEST_CASE("kernels that already use the wide registers, or a CPU without AVX2, get no advice") {
  const CpuSimd emerald{true, true, true}, sse_only{};
  for (const char* core : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "NeoverseN1", "", "Future"})
    CHECK(blas_coretype_advice(core, emerald).empty());
  CHECK(blas_coretype_advice("Prescott", sse_only).empty());
  CHECK(blas_coretype_advice("prescott", emerald).empty());  // the names are OpenBLAS's, case and all
}
