#pragma once
/// \file
/// Logging and threads. The logger is spdlog's; include <attograd/log.h> to call it
/// (kept out of this header and the umbrella because spdlog's headers are slow to compile).
namespace spdlog {
class logger;
}

namespace ag {

/// The library's logger ("attograd"); its level comes from ATTOGRAD_LOG
/// (trace, debug, info [default], warn, error, critical, off).
spdlog::logger& log();

/// The most threads set_num_threads accepts.
inline constexpr int kMaxThreads = 1024;
/// Threads used by OpenBLAS and by attograd's own kernels (large elementwise work);
/// ValueError outside [1, kMaxThreads].
void set_num_threads(int n);
/// Threads the BLAS and kernels use.
int get_num_threads();

}  // namespace ag
