// Parity with PyTorch 1.13 for the convolutional family's functional ops (issue 40):
// every case of tests/fixtures/cnn_ops.safetensors (tools/fixtures/cnn.py) is replayed
// with attograd in float64 and its output, indices, running statistics and the gradient
// of sum(out * upstream) with respect to every input and parameter are compared to
// kRtol / kAtol (tests/cnn_parity.h). The fixture lists its cases (op and torch's keyword
// arguments) as JSON in its metadata; run_op below dispatches on the op name, so a case
// added to the Python script is replayed here, and an op this file does not know fails.
// AG_PARITY_REPORT=1 prints every case's worst error.
//
// The bf16 line: conv2d, max_pool2d and avg_pool2d on bf16 inputs and weights, compared
// with PyTorch's own bf16 result (see "bf16" below for the bound and why).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "cnn_parity.h"
#include "half_ulps.h"
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using ag::DType;
using ag::Tensor;
using cnn_parity::json;

namespace {

const test_util::Fixture& fixture() {
  static const test_util::Fixture f = test_util::load_fixture("cnn_ops");
  return f;
}

struct Result {
  Tensor out;      // the op's (first) output
  Tensor indices;  // max pools: the i64 indices; else undefined
};

Tensor role_or_none(const std::map<std::string, Tensor>& t, const std::string& role) {
  auto it = t.find(role);
  return it == t.end() ? Tensor{} : it->second;
}

ag::ConvPadding conv_padding(const json& p) {
  if (p.is_string()) return ag::ConvPadding(p.get<std::string>());
  return ag::ConvPadding(cnn_parity::ints(p));
}

ag::InterpolateMode interpolate_mode(const std::string& m) {
  if (m == "nearest") return ag::InterpolateMode::nearest;
  if (m == "nearest-exact") return ag::InterpolateMode::nearest_exact;
  if (m == "linear") return ag::InterpolateMode::linear;
  if (m == "bilinear") return ag::InterpolateMode::bilinear;
  if (m == "area") return ag::InterpolateMode::area;
  throw std::invalid_argument("unknown interpolate mode '" + m + "'");
}

ag::PadMode pad_mode(const std::string& m) {
  if (m == "reflect") return ag::PadMode::reflect;
  if (m == "replicate") return ag::PadMode::replicate;
  if (m == "circular") return ag::PadMode::circular;
  throw std::invalid_argument("unknown pad mode '" + m + "'");
}

// The ops of each test case below, so that the last test can tell an unknown op.
const std::map<std::string, std::string>& op_groups() {
  static const std::map<std::string, std::string> g = {
      {"conv1d", "conv"},
      {"conv2d", "conv"},
      {"conv_transpose1d", "conv_transpose"},
      {"conv_transpose2d", "conv_transpose"},
      {"unfold", "fold"},
      {"fold", "fold"},
      {"max_pool1d", "max_pool"},
      {"max_pool2d", "max_pool"},
      {"adaptive_max_pool1d", "max_pool"},
      {"adaptive_max_pool2d", "max_pool"},
      {"avg_pool1d", "avg_pool"},
      {"avg_pool2d", "avg_pool"},
      {"adaptive_avg_pool1d", "avg_pool"},
      {"adaptive_avg_pool2d", "avg_pool"},
      {"batch_norm", "norm"},
      {"group_norm", "norm"},
      {"instance_norm", "norm"},
      {"interpolate", "interpolate"},
      {"pad", "pad"},
  };
  return g;
}

// Runs `op` with torch's keyword arguments `a` on the tensors `t` (by torch's argument
// names), as attograd spells it.
Result run_op(const std::string& op, const json& a, const std::map<std::string, Tensor>& t) {
  using cnn_parity::ints;
  const Tensor& x = t.at("input");
  if (op == "conv1d" || op == "conv2d") {
    auto fn = op == "conv1d" ? &ag::conv1d : &ag::conv2d;
    return {fn(x, t.at("weight"), role_or_none(t, "bias"), ints(a.at("stride")), conv_padding(a.at("padding")),
               ints(a.at("dilation")), a.at("groups").get<int64_t>()),
            {}};
  }
  if (op == "conv_transpose1d" || op == "conv_transpose2d") {
    auto fn = op == "conv_transpose1d" ? &ag::conv_transpose1d : &ag::conv_transpose2d;
    return {fn(x, t.at("weight"), role_or_none(t, "bias"), ints(a.at("stride")), ints(a.at("padding")),
               ints(a.at("output_padding")), a.at("groups").get<int64_t>(), ints(a.at("dilation"))),
            {}};
  }
  if (op == "unfold")
    return {
        ag::im2col(x, ints(a.at("kernel_size")), ints(a.at("dilation")), ints(a.at("padding")), ints(a.at("stride"))),
        {}};
  if (op == "fold")
    return {ag::col2im(x, ints(a.at("output_size")), ints(a.at("kernel_size")), ints(a.at("dilation")),
                       ints(a.at("padding")), ints(a.at("stride"))),
            {}};
  if (op == "max_pool1d" || op == "max_pool2d") {
    auto fn = op == "max_pool1d" ? &ag::max_pool1d_with_indices : &ag::max_pool2d_with_indices;
    auto [v, i] = fn(x, ints(a.at("kernel_size")), ints(a.at("stride")), ints(a.at("padding")), ints(a.at("dilation")),
                     a.at("ceil_mode").get<bool>());
    return {v, i};
  }
  if (op == "adaptive_max_pool1d" || op == "adaptive_max_pool2d") {
    auto fn =
        op == "adaptive_max_pool1d" ? &ag::adaptive_max_pool1d_with_indices : &ag::adaptive_max_pool2d_with_indices;
    auto [v, i] = fn(x, ints(a.at("output_size")));
    return {v, i};
  }
  if (op == "avg_pool1d")
    return {ag::avg_pool1d(x, ints(a.at("kernel_size")), ints(a.at("stride")), ints(a.at("padding")),
                           a.at("ceil_mode").get<bool>(), a.at("count_include_pad").get<bool>()),
            {}};
  if (op == "avg_pool2d") {
    std::optional<int64_t> divisor;
    if (!a.at("divisor_override").is_null()) divisor = a.at("divisor_override").get<int64_t>();
    return {ag::avg_pool2d(x, ints(a.at("kernel_size")), ints(a.at("stride")), ints(a.at("padding")),
                           a.at("ceil_mode").get<bool>(), a.at("count_include_pad").get<bool>(), divisor),
            {}};
  }
  if (op == "adaptive_avg_pool1d") return {ag::adaptive_avg_pool1d(x, ints(a.at("output_size"))), {}};
  if (op == "adaptive_avg_pool2d") return {ag::adaptive_avg_pool2d(x, ints(a.at("output_size"))), {}};
  if (op == "interpolate") {
    ag::InterpolateFuncOptions o;
    if (!a.at("size").is_null()) o.size(ints(a.at("size")));
    if (!a.at("scale_factor").is_null()) o.scale_factor(cnn_parity::doubles(a.at("scale_factor")));
    o.mode(interpolate_mode(a.at("mode").get<std::string>()));
    if (!a.at("align_corners").is_null()) o.align_corners(a.at("align_corners").get<bool>());
    return {ag::interpolate(x, o), {}};
  }
  if (op == "pad") return {ag::pad(x, ints(a.at("pad")), pad_mode(a.at("mode").get<std::string>())), {}};
  if (op == "batch_norm")
    return {ag::batch_norm(x, role_or_none(t, "running_mean"), role_or_none(t, "running_var"),
                           role_or_none(t, "weight"), role_or_none(t, "bias"), a.at("training").get<bool>(),
                           a.at("momentum").get<double>(), a.at("eps").get<double>()),
            {}};
  if (op == "group_norm")
    return {ag::group_norm(x, a.at("num_groups").get<int64_t>(), role_or_none(t, "weight"), role_or_none(t, "bias"),
                           a.at("eps").get<double>()),
            {}};
  if (op == "instance_norm")
    return {ag::instance_norm(x, role_or_none(t, "running_mean"), role_or_none(t, "running_var"),
                              role_or_none(t, "weight"), role_or_none(t, "bias"), a.at("use_input_stats").get<bool>(),
                              a.at("momentum").get<double>(), a.at("eps").get<double>()),
            {}};
  throw std::invalid_argument("test_cnn_parity has no dispatch for op '" + op + "'");
}

// ---- float64 cases --------------------------------------------------------------------

// Replays one float64 case: output (NaN where PyTorch's is NaN), indices exactly, running
// statistics after the call, and the gradients of sum(out * upstream).
void run_case(const json& c) {
  const test_util::Fixture& f = fixture();
  const std::string name = c.at("name"), op = c.at("op");
  CAPTURE(name);
  cnn_parity::reports()[name];  // listed even if it throws before any comparison
  const auto grads = c.at("grads").get<std::vector<std::string>>();
  std::map<std::string, Tensor> t;
  std::vector<Tensor> leaves;
  for (const std::string& role : c.at("tensors").get<std::vector<std::string>>()) {
    const bool differentiable = std::find(grads.begin(), grads.end(), role) != grads.end();
    t[role] = differentiable ? cnn_parity::leaf(f.at(name + "/" + role)) : f.at(name + "/" + role).clone();
  }
  for (const std::string& role : grads) leaves.push_back(t.at(role));
  try {
    Result r = run_op(op, c.at("args"), t);
    cnn_parity::check_close(name, "out", r.out, f.at(name + "/out"));
    if (f.contains(name + "/indices")) {
      if (!r.indices.defined()) {
        cnn_parity::note_failure(name, "no indices");
        FAIL_CHECK(name, ": PyTorch returns indices, attograd's call gave none");
      } else {
        CHECK_MESSAGE(r.indices.dtype() == DType::i64, name, ": indices are ", r.indices.dtype(), ", not i64");
        cnn_parity::check_close(name, "indices", r.indices, f.at(name + "/indices"));
      }
    }
    for (const char* stat : {"running_mean", "running_var"})
      if (t.count(stat))
        cnn_parity::check_close(name, std::string(stat) + " after", t.at(stat), f.at(name + "/" + stat + ".after"));
    if (!leaves.empty()) {
      const std::vector<Tensor> g = ag::grad({r.out}, leaves, {f.at(name + "/upstream")});
      for (std::size_t i = 0; i < grads.size(); ++i)
        cnn_parity::check_close(name, "grad." + grads[i], g[i], f.at(name + "/grad." + grads[i]));
    }
  } catch (const std::exception& e) {
    cnn_parity::note_failure(name, std::string("threw: ") + e.what());
    FAIL_CHECK(name, " (", op, ") threw: ", std::string(e.what()));
  }
}

// Runs every float64 case whose op belongs to `group`; returns their names.
std::vector<std::string> run_group(const std::string& group) {
  std::vector<std::string> names;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    if (c.contains("dtype")) continue;  // the bf16 line
    auto it = op_groups().find(c.at("op").get<std::string>());
    if (it == op_groups().end() || it->second != group) continue;
    names.push_back(c.at("name"));
    run_case(c);
  }
  REQUIRE_MESSAGE(!names.empty(), "cnn_ops has no case of group ", group, " (stale fixture?)");
  cnn_parity::print_reports(group, names);
  return names;
}

}  // namespace

TEST_CASE("cnn parity: conv1d / conv2d (stride, padding incl. same / valid, dilation, groups, depthwise)") {
  run_group("conv");
}

TEST_CASE("cnn parity: conv_transpose1d / conv_transpose2d (stride, padding, output_padding, groups, dilation)") {
  run_group("conv_transpose");
}

TEST_CASE("cnn parity: unfold / fold (im2col / col2im)") { run_group("fold"); }

TEST_CASE("cnn parity: max pooling with indices (ceil_mode, padding, dilation, ties, -inf, NaN) and adaptive") {
  run_group("max_pool");
  // The values-only forms give the same values as the *_with_indices forms.
  for (const json& c : cnn_parity::cases_of(fixture())) {
    const std::string op = c.at("op"), name = c.at("name");
    if (c.contains("dtype") || (op != "max_pool1d" && op != "max_pool2d")) continue;
    CAPTURE(name);
    const json& a = c.at("args");
    using cnn_parity::ints;
    try {
      auto fn = op == "max_pool1d" ? &ag::max_pool1d : &ag::max_pool2d;
      Tensor v = fn(fixture().at(name + "/input"), ints(a.at("kernel_size")), ints(a.at("stride")),
                    ints(a.at("padding")), ints(a.at("dilation")), a.at("ceil_mode").get<bool>());
      cnn_parity::check_close(name, "out (values-only form)", v, fixture().at(name + "/out"), 0, 0);
    } catch (const std::exception& e) { FAIL_CHECK(name, " (", op, ", values only) threw: ", std::string(e.what())); }
  }
}

TEST_CASE("cnn parity: average pooling (count_include_pad, ceil_mode, divisor_override) and adaptive") {
  run_group("avg_pool");
}

TEST_CASE("cnn parity: interpolate (nearest, nearest-exact, linear, bilinear, area)") { run_group("interpolate"); }

TEST_CASE("cnn parity: pad reflect / replicate / circular") { run_group("pad"); }

TEST_CASE("cnn parity: batch_norm, group_norm, instance_norm (running statistics after the call)") {
  run_group("norm");
}

TEST_CASE("cnn parity: every case of the fixture has an op this test replays") {
  std::set<std::string> names;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    const std::string name = c.at("name"), op = c.at("op");
    CHECK_MESSAGE(names.insert(name).second, "case ", name, " appears twice");
    CHECK_MESSAGE(op_groups().count(op), "case ", name, ": op '", op, "' has no test case here");
    for (const std::string& role : c.at("tensors").get<std::vector<std::string>>())
      CHECK_MESSAGE(fixture().contains(name + "/" + role), "case ", name, " lists ", role, " but has no tensor");
  }
  CHECK(names.size() > 150);
}

// ---- bf16 ------------------------------------------------------------------------------
// PyTorch computes these on bf16 tensors with its CPU bf16 kernels; the fixture stores the
// bf16 inputs, PyTorch's bf16 result "out" and "out.f64", the float64 result on the same
// bf16 values (what a single rounding would round). Errors are measured in bf16 spacings
// (2^(e - 7) for |v| in [2^e, 2^(e+1))) at the scale of the op's terms, mag = the op on
// |inputs| (conv: sum |x w| + |b|; avg_pool: the mean of |x|): a result that cancels to
// near 0 is still judged at the size of what was summed.
//   conv2d      |attograd - PyTorch| <= 3 spacings(mag), |attograd - exact| <= 1 spacing(mag).
//               PyTorch's own bf16 conv is up to 2.34 spacings(mag) from the exact result
//               (measured on these cases: it rounds partial sums to bf16), and a result
//               accumulated in f32 and rounded once is within 0.5 of it: 2.84 < 3.
//   avg_pool2d  both <= 1 spacing(mag): PyTorch's is the exact mean rounded once here.
//   max_pool2d  bit-exact: the maximum of bf16 values is one of them.
namespace {

struct Bf16Bound {
  double vs_torch, vs_exact;  // in bf16 spacings at mag
};

Bf16Bound bf16_bound(const std::string& op) {
  if (op == "conv2d") return {3.0, 1.0};
  if (op == "avg_pool2d") return {1.0, 1.0};
  if (op == "max_pool2d") return {0.0, 0.0};
  throw std::invalid_argument("no bf16 bound for op '" + op + "'");
}

}  // namespace

TEST_CASE("cnn parity: bf16 conv2d, max_pool2d, avg_pool2d within bf16 rounding of PyTorch's bf16 result") {
  const test_util::Fixture& f = fixture();
  int n = 0;
  for (const json& c : cnn_parity::cases_of(f)) {
    if (!c.contains("dtype")) continue;
    const std::string name = c.at("name"), op = c.at("op");
    CAPTURE(name);
    ++n;
    std::map<std::string, Tensor> in16, mag_in;
    for (const std::string& role : c.at("tensors").get<std::vector<std::string>>()) {
      in16[role] = f.at(name + "/" + role).to(DType::bf16);  // exact: the values are bf16
      mag_in[role] = ag::abs(f.at(name + "/" + role));
    }
    try {
      const Tensor got = run_op(op, c.at("args"), in16).out;
      const Tensor torch16 = f.at(name + "/out"), exact = f.at(name + "/out.f64");
      const Tensor mag = run_op(op, c.at("args"), mag_in).out;
      if (got.dtype() != DType::bf16 || !(got.shape() == torch16.shape())) {
        FAIL_CHECK(name, ": attograd's result is ", got.dtype(), " ", got.shape(), ", PyTorch's bf16 ",
                   torch16.shape());
        continue;
      }
      const auto g = got.to_vector<double>(), w = torch16.to_vector<double>(), e = exact.to_vector<double>(),
                 m = mag.to_vector<double>();
      const Bf16Bound bound = bf16_bound(op);
      double worst_t = 0, worst_e = 0;
      std::size_t bad = g.size();
      for (std::size_t i = 0; i < g.size(); ++i) {
        const double s = test_util::half_spacing(m[i], DType::bf16);
        const double dt = std::abs(g[i] - w[i]) / s, de = std::abs(g[i] - e[i]) / s;
        worst_t = std::max(worst_t, dt);
        worst_e = std::max(worst_e, de);
        if ((!(dt <= bound.vs_torch) || !(de <= bound.vs_exact)) && bad == g.size()) bad = i;
      }
      CHECK_MESSAGE(bad == g.size(), name, ": element ", bad, " is ", bad < g.size() ? g[bad] : 0.0,
                    ", PyTorch's bf16 ", bad < g.size() ? w[bad] : 0.0, ", exact ", bad < g.size() ? e[bad] : 0.0,
                    "; worst ", worst_t, " spacings from PyTorch (bound ", bound.vs_torch, "), ", worst_e,
                    " from exact (bound ", bound.vs_exact, ")");
      if (cnn_parity::report_enabled())
        std::printf("  %-30s bf16: %.3f spacings from PyTorch's bf16, %.3f from exact\n", name.c_str(), worst_t,
                    worst_e);
    } catch (const std::exception& ex) { FAIL_CHECK(name, " (", op, ", bf16) threw: ", std::string(ex.what())); }
  }
  CHECK(n >= 6);
}
