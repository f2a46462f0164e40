#pragma once
// Logging and threads.
#include <spdlog/logger.h>

namespace ag {

// The library's logger ("attograd"); its level comes from ATTOGRAD_LOG
// (trace, debug, info [default], warn, error, critical, off).
spdlog::logger& log();

// Threads used by OpenBLAS and by attograd's own kernels (large elementwise work).
void set_num_threads(int n);
int get_num_threads();

}  // namespace ag
