#pragma once
// parallel_for over [0, n): a small persistent pool of get_num_threads() - 1 workers
// plus the calling thread. fn(begin, end) gets one contiguous chunk per thread. Work
// that is too small to pay for the hand-off (grain) runs inline. Internal (ag::detail): not part of the API.
#include <cstdint>
#include <functional>

namespace ag::detail {

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Whether the calling thread runs a chunk of a parallel_for (where a nested parallel_for
// runs inline, on this thread alone).
bool in_parallel_region();

}  // namespace ag::detail
