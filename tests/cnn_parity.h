#pragma once
// Shared by the module parity tests of issues 40 and 41: tests/ops/test_cnn_parity.cpp
// (tests/fixtures/cnn_ops.safetensors), tests/nn/test_cnn_module_parity.cpp
// (cnn_modules.safetensors; both made by tools/fixtures/cnn.py) and
// tests/nn/test_rnn_parity.cpp (rnn_modules.safetensors, tools/fixtures/rnn.py). Each fixture holds its
// tensors under "<case>/<role>" and a JSON list of its cases in the metadata entry
// "cases"; these helpers read that list and compare attograd's tensors with PyTorch's.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace cnn_parity {

using json = nlohmann::json;

// float64 parity: |got - want| <= kRtol |want| + kAtol elementwise. The values are O(1)
// and exact float64 arithmetic leaves ~1e-15; kAtol only keeps an element that cancels
// to ~0 (a gradient summed from terms of both signs) from failing a purely relative test.
inline constexpr double kRtol = 1e-8;
inline constexpr double kAtol = 1e-10;

// The worst errors of one case, for the summary (AG_PARITY_REPORT=1 prints them).
struct CaseReport {
  double max_abs = 0, max_rel = 0;
  bool failed = false;
  std::string first_failure;
};

inline std::map<std::string, CaseReport>& reports() {
  static std::map<std::string, CaseReport> r;
  return r;
}

inline bool report_enabled() { return std::getenv("AG_PARITY_REPORT") != nullptr; }

// Marks `name` failed with `why` (the first reason is kept for the summary).
inline void note_failure(const std::string& name, const std::string& why) {
  CaseReport& r = reports()[name];
  if (!r.failed) r.first_failure = why;
  r.failed = true;
}

// Compares got with PyTorch's want under case `name` (what = "out", "grad.weight", ...):
// shapes equal, NaN exactly where want has NaN, infinities equal, finite elements within
// kRtol / kAtol; I64 and BOOL tensors must be equal. Returns true when it matches.
inline bool check_close(const std::string& name, const std::string& what, const ag::Tensor& got, const ag::Tensor& want,
                        double rtol = kRtol, double atol = kAtol) {
  const std::string tag = name + " " + what;
  if (!got.defined()) {
    note_failure(name, what + ": undefined");
    FAIL_CHECK(tag, ": attograd's result is undefined");
    return false;
  }
  if (!(got.shape() == want.shape())) {
    std::ostringstream os;
    os << what << ": shape " << got.shape() << " != PyTorch's " << want.shape();
    note_failure(name, os.str());
    FAIL_CHECK(tag, ": shape ", got.shape(), " != PyTorch's ", want.shape());
    return false;
  }
  const bool exact = want.dtype() == ag::DType::i64 || want.dtype() == ag::DType::b8;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  CaseReport& rep = reports()[name];
  int64_t bad = -1, nbad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    bool ok;
    if (std::isnan(w[i]) || std::isnan(g[i])) {
      ok = std::isnan(w[i]) && std::isnan(g[i]);
    } else if (std::isinf(w[i]) || std::isinf(g[i]) || exact) {
      ok = g[i] == w[i];
    } else {
      const double d = std::abs(g[i] - w[i]);
      rep.max_abs = std::max(rep.max_abs, d);
      if (std::abs(w[i]) > atol) rep.max_rel = std::max(rep.max_rel, d / std::abs(w[i]));
      ok = d <= atol + rtol * std::abs(w[i]);
    }
    if (!ok) {
      ++nbad;
      if (bad < 0) bad = int64_t(i);
    }
  }
  if (bad >= 0) {
    std::ostringstream os;
    os.precision(17);
    os << what << ": " << nbad << " of " << g.size() << " elements differ; first at flat index " << bad << " of "
       << want.shape() << ": attograd " << g[std::size_t(bad)] << ", PyTorch " << w[std::size_t(bad)];
    note_failure(name, os.str());
    FAIL_CHECK(name, " ", os.str(), " (rtol ", rtol, ", atol ", atol, ")");
    return false;
  }
  return true;
}

// The fixture's case list (metadata "cases").
inline std::vector<json> cases_of(const test_util::Fixture& f) {
  std::vector<json> out;
  for (const json& c : json::parse(f.meta("cases"))) out.push_back(c);
  return out;
}

inline std::vector<int64_t> ints(const json& j) {
  std::vector<int64_t> v;
  for (const json& e : j) v.push_back(e.get<int64_t>());
  return v;
}

inline std::vector<double> doubles(const json& j) {
  std::vector<double> v;
  for (const json& e : j) v.push_back(e.get<double>());
  return v;
}

// A fresh float64 leaf that requires grad (never the fixture's own tensor).
inline ag::Tensor leaf(const ag::Tensor& t) { return t.to(ag::DType::f64).clone().requires_grad_(); }

// Prints the summary of `names` when AG_PARITY_REPORT is set (at the end of a test case).
inline void print_reports(const std::string& title, const std::vector<std::string>& names) {
  if (!report_enabled()) return;
  std::printf("---- %s: %zu cases ----\n", title.c_str(), names.size());
  for (const std::string& name : names) {
    const CaseReport& r = reports()[name];
    std::printf("  %-44s %-4s max abs %.2e  max rel %.2e%s%s\n", name.c_str(), r.failed ? "FAIL" : "ok", r.max_abs,
                r.max_rel, r.failed ? "  " : "", r.failed ? r.first_failure.c_str() : "");
  }
  std::fflush(stdout);
}

// The state dict's keys are `want` (PyTorch's) in that order, each with the shape of the
// fixture's "<prefix>/state.<key>"; failures are reported under `name`.
inline bool check_state_dict(const std::string& name, const ag::TensorMap& sd, const std::vector<std::string>& want,
                             const test_util::Fixture& f, const std::string& prefix) {
  std::vector<std::string> got;
  for (const auto& entry : sd) got.push_back(entry.first);
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& k : v) s += (s.empty() ? "" : " ") + k;
    return s;
  };
  if (got != want) {
    note_failure(name, "state-dict keys [" + joined(got) + "] != PyTorch's [" + joined(want) + "]");
    FAIL_CHECK(name, ": state-dict keys [", joined(got), "] != PyTorch's [", joined(want), "] (in order)");
    return false;
  }
  bool ok = true;
  for (const auto& entry : sd) {
    const ag::Tensor& ref = f.at(prefix + "/state." + entry.first);
    if (!(entry.second.shape() == ref.shape())) {
      ok = false;
      note_failure(name, "shape of " + entry.first);
      FAIL_CHECK(name, ": state-dict entry ", entry.first, " has shape ", entry.second.shape(), ", PyTorch's ",
                 ref.shape());
    }
  }
  return ok;
}

}  // namespace cnn_parity
