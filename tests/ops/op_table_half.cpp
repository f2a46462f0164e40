// The op table in bf16 and f16 (issue 25): PyTorch's CPU rule for the 16-bit floats is
// "compute in f32, round once". Each line runs on its seeded inputs rounded to the half
// dtype and is compared with the same line in f32 on those same (exactly widened)
// inputs, its result rounded to the half dtype. A one-kernel op matches exactly; a
// composite rounds each step, so the bound is a few units in the last place of the half
// dtype. A line whose op does not compute on the half dtypes yet throws DTypeError, and
// that op must be in kNotYet (which is checked to be exact, so it shrinks as ops learn).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "op_table/op_table.h"

using namespace ag;
using op_table::OpCase;

namespace {

std::string op_of(const OpCase& c) {
  std::istringstream in(c.name);
  std::string w;
  in >> w;
  return w;
}

// Ops that throw DTypeError on bf16 / f16 inputs today: the collectives (MPI has no bf16
// type; ag::dist maps f32 / f64 / i32 / i64 only).
const std::set<std::string> kNotYet = {};
// A line that passes a float64 constant beside its half input (a class weight, an
// additive mask, rotary tables) is refused for the mixed dtypes, as PyTorch refuses it
// ("expected scalar type BFloat16 but found Double"): the message names the f64 operand.
bool refuses_f64_constant(const std::string& what) { return what.find("f64") != std::string::npos; }

// Ops with jumps (remainder, fmod, rounding): a line that scales its input first (x * 3)
// rounds the scaled value to the half dtype, which can move it across a jump, so only the
// dtype and shape are compared.
const std::set<std::string> kJumps = {"remainder", "fmod",  "floor_divide", "div", "floor",
                                      "ceil",      "round", "trunc",        "frac"};

// Largest |got - want| / (ulp(dtype) * (1 + |want|)) allowed: composites round every step.
constexpr double kUlps = 16;

}  // namespace

TEST_CASE("op table in bf16 and f16: f32 compute rounded once, or a DTypeError for kNotYet ops") {
  for (DType half : {DType::bf16, DType::f16}) {
    const std::string name = half == DType::bf16 ? "bf16" : "f16";
    const double ulp = half == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    std::map<std::string, int> passed;
    std::set<std::string> refused;
    for (const OpCase& c : op_table::all()) {
      INFO(name, ", op table line: ", std::string(c.name));
      NoGradGuard no_grad;
      std::vector<Tensor> xh, x32;
      for (const Tensor& t : op_table::inputs_of(c)) {
        xh.push_back(t.detach().to(half));
        x32.push_back(xh.back().to(DType::f32));
      }
      Tensor got;
      try {
        got = c.fn(xh);
      } catch (const DTypeError& e) {
        const std::string what = e.what();
        INFO(what);
        const bool constant = !kNotYet.count(op_of(c)) && refuses_f64_constant(what);
        CHECK_MESSAGE((kNotYet.count(op_of(c)) || constant), "an op outside kNotYet refuses it");
        if (!constant) refused.insert(op_of(c));
        continue;
      }
      Tensor want = c.fn(x32);
      if (want.dtype() == DType::f32) want = want.to(half);
      CHECK(got.dtype() == want.dtype());
      REQUIRE(got.shape() == want.shape());
      ++passed[op_of(c)];
      if (kJumps.count(op_of(c))) continue;
      const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
      double worst = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (std::isnan(w[i]) && std::isnan(g[i])) continue;
        if (std::isinf(w[i]) || std::isinf(g[i])) {
          CHECK(g[i] == w[i]);
          continue;
        }
        worst = std::max(worst, std::abs(g[i] - w[i]) / (ulp * (1 + std::abs(w[i]))));
      }
      CHECK_MESSAGE(worst <= kUlps, "off by ", worst, " half ulps");
    }
    for (const std::string& op : kNotYet)
      CHECK_MESSAGE(refused.count(op), op, " works in ", name, ": drop it from kNotYet");
    MESSAGE(name, ": ", passed.size(), " ops compute (of ", op_table::all().size(), " lines), ", refused.size(),
            " not yet");
  }
}
