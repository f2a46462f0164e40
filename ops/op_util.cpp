// Helpers shared by the op files (internal).
#include "op_util.h"

#include <sstream>

namespace ag {

std::string list_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + "]";
}

int64_t wrap_dim_nonscalar(int64_t dim, int64_t ndim, const char* op) {
  AG_CHECK(ndim > 0, IndexError, op, ": dimension specified as ", dim, " but the tensor has no dimensions");
  return wrap_dim(dim, ndim, op);
}

}  // namespace ag
