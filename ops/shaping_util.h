#pragma once
// Helpers shared by ops/shaping.cpp and ops/pad.cpp (internal).
#include <cstdint>
#include <string>
#include <vector>

namespace ag {

// "[1, 2, 3]" for error messages (a list of any length, unlike Shape).
std::string list_str(const std::vector<int64_t>& v);

// wrap_dim that rejects 0-d tensors, as PyTorch does for roll, repeat_interleave and
// unflatten ("Dimension specified as 0 but tensor has no dimensions").
int64_t wrap_dim_nonscalar(int64_t dim, int64_t ndim, const char* op);

}  // namespace ag
