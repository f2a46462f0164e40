#include "attograd/shape.h"

namespace ag {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int64_t n = std::max(a.size(), b.size());
  Shape out = Dims::filled(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    AG_CHECK(da == db || da == 1 || db == 1, ShapeError, op, ": shapes ", a, " and ", b, " cannot be broadcast (dim ",
             i - n, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace ag
