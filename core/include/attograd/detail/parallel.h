#pragma once
// parallel_for over [0, n): a small persistent pool of get_num_threads() - 1 workers
// plus the calling thread. fn(begin, end) gets one contiguous chunk per thread. Work
// that is too small to pay for the hand-off (grain) runs inline. Internal (ag::detail): not part of the API.
#include <cstdint>
#include <functional>

namespace ag::detail {

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// The part a pool thread claims first in a job of `parts` parts: its home part (0 for the
// caller, i for worker i) when the job has one; a worker without one starts at one of
// parts 1 .. parts - 1 (spread by its home), not at part 0, which its home thread, the
// caller, claims as soon as it publishes the job.
int first_part(int home, int parts);

// Whether the calling thread runs a chunk of a parallel_for (where a nested parallel_for
// runs inline, on this thread alone).
bool in_parallel_region();

}  // namespace ag::detail
