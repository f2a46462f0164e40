#include "attograd/runtime.h"

#include <cblas.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "attograd/detail/blas_check.h"
#include "attograd/error.h"

namespace ag {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_color_mt("attograd");
    const char* env = std::getenv("ATTOGRAD_LOG");
    l->set_level(env ? spdlog::level::from_str(env) : spdlog::level::info);
    return l;
  }();
  return *logger;
}

namespace {
std::atomic<int> g_threads{0};  // 0 = not set yet: the machine's cores

// OpenBLAS runs on one thread from the library's load on; attograd's pool splits large
// products instead (ops/kernels/gemm.h says why).
const bool g_blas_on_one_thread = [] {
  openblas_set_num_threads(1);
  return true;
}();
}  // namespace

namespace detail {

std::string blas_coretype_advice(const std::string& core, const CpuSimd& cpu) {
  // OpenBLAS's x86 kernel sets without AVX2 (its gotoblas_<NAME> tables, as
  // openblas_get_corename() spells them).
  static const char* const kOld[] = {"Katmai",      "Coppermine", "Northwood", "Prescott",      "Banias",
                                     "Atom",        "Core2",      "Penryn",    "Dunnington",    "Nehalem",
                                     "Sandybridge", "Athlon",     "Opteron",   "Opteron(SSE3)", "Barcelona",
                                     "Nano",        "Bobcat",     "Bulldozer", "Piledriver",    "Steamroller"};
  bool old = false;
  for (const char* name : kOld) old = old || core == name;
  if (!old) return "";
  if (cpu.avx512) return cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  return cpu.avx2 ? "Haswell" : "";
}

}  // namespace detail

void set_num_threads(int n) {
  // The pool starts n - 1 threads at once: a typo (20000) would start them all.
  AG_CHECK(n >= 1 && n <= kMaxThreads, ValueError, "set_num_threads: need 1 <= n <= ", kMaxThreads, ", got ", n);
  g_threads = n;
}

int get_num_threads() {
  int n = g_threads.load();
  return n > 0 ? n : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ag
