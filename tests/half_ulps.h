#pragma once
// Distances between bf16 / f16 tensors in units in the last place of the dtype, for the
// PyTorch fixtures of issue 25 (tests/fixtures/README.md, "bf16 and f16 references").
#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>

namespace test_util {

// The spacing of dt's values at magnitude |v|: 2^(e - p) for a normal |v| in [2^e, 2^(e+1))
// with p explicit mantissa bits (bf16 7, f16 10), and the subnormal spacing below the
// smallest normal (2^-133 for bf16, 2^-24 for f16).
inline double half_spacing(double v, ag::DType dt) {
  const int mant = dt == ag::DType::bf16 ? 7 : 10;
  const int emin = dt == ag::DType::bf16 ? -126 : -14;
  const int e = v == 0 ? emin : std::max(emin, static_cast<int>(std::ilogb(v)));
  return std::ldexp(1.0, e - mant);
}

struct UlpStats {
  double ulps = 0;    ///< max |got - want| / spacing(want): ulps of each value itself
  double scaled = 0;  ///< max |got - want| / spacing(max(|want|, scale)): ulps at the op's scale
  std::size_t differ = 0, n = 0;
  std::string str() const {
    std::ostringstream os;
    os << ulps << " ulps (" << scaled << " at scale), " << differ << " of " << n << " differ";
    return os.str();
  }
};

// got against want, both of dtype dt and the same shape (a mismatch gives infinite ulps).
// scale: the magnitude the op's error is relative to (1 for layer_norm's normalized values;
// see the tests), so that a value near 0 after cancellation is not counted in its own ulps.
inline UlpStats ulp_stats(const ag::Tensor& got, const ag::Tensor& want, ag::DType dt, double scale = 1) {
  UlpStats s;
  if (!(got.shape() == want.shape()) || got.dtype() != dt || want.dtype() != dt) {
    s.ulps = s.scaled = std::numeric_limits<double>::infinity();
    return s;
  }
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  s.n = g.size();
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
    ++s.differ;
    const double d = std::abs(g[i] - w[i]);  // inf or NaN when one side is: infinite ulps
    const double u = std::isfinite(d) ? d : std::numeric_limits<double>::infinity();
    s.ulps = std::max(s.ulps, u / half_spacing(std::abs(w[i]), dt));
    s.scaled = std::max(s.scaled, u / half_spacing(std::max(std::abs(w[i]), scale), dt));
  }
  return s;
}

// max |t|: the scale of a tensor whose error is relative to its largest values.
inline double max_abs(const ag::Tensor& t) {
  double m = 0;
  for (double v : t.to_vector<double>()) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace test_util
