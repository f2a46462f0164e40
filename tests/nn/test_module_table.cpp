// The module table runner (the lines live in tests/nn/test_module_table/, one file per
// family; module_table.h says what a line checks) and the coverage check that every
// public module of the nn headers has a line.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_module_table/module_table.h"
#include "test_util.h"

using module_table::Diff;
using module_table::Grad;
using module_table::Json;
using module_table::Line;
using module_table::Made;
using module_table::Tensors;
using namespace ag;

namespace {

std::string first_word(const char* name) {
  std::istringstream in(name);
  std::string w;
  in >> w;
  return w;
}

// The X of every AG_MODULE(X) in the public nn headers, skipping comments and the macro's
// own #define.
std::set<std::string> public_modules() {
  std::set<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(AG_NN_INCLUDE_DIR)) {
    if (f.path().extension() != ".h") continue;
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);) {
      const auto start = line.find_first_not_of(" \t");
      if (start == std::string::npos || line.compare(start, 2, "//") == 0 || line[start] == '#') continue;
      const auto at = line.find("AG_MODULE(");
      if (at == std::string::npos) continue;
      const auto open = at + 10, close = line.find(')', open);
      if (close != std::string::npos) names.insert(line.substr(open, close - open));
    }
  }
  return names;
}

// tests/fixtures/module_table/expected.json (tools/fixtures/module_table.py).
const Json& expected() {
  static const Json j = [] {
    const std::string path = std::string(AG_FIXTURES_DIR) + "/module_table/expected.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + " is missing: run tools/fixtures/module_table.py (needs python3-torch)");
    return Json::parse(in);
  }();
  return j;
}

// The line's entry of expected.json, or null for a module PyTorch lacks.
const Json* torch_entry(const Line& l) {
  if (l.torch == nullptr) return nullptr;
  const std::string key = *l.torch ? l.torch : l.name;
  const Json& entries = expected().at("entries");
  if (!entries.contains(key)) return nullptr;
  return &entries.at(key);
}

// Every occurrence of each difference's torch text replaced by attograd's, in order; the
// torch texts not found are listed in `stale`.
std::string apply(std::string s, const std::vector<Diff>& diffs, std::vector<std::string>& stale) {
  for (const Diff& d : diffs) {
    const std::string from = d.torch, to = d.ours;
    std::size_t at = s.find(from);
    if (at == std::string::npos) stale.push_back(from);
    for (; at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }
  return s;
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

// "key [4, 3]" per state-dict entry, in order.
std::vector<std::string> state_of(const nn::Module& m) {
  std::vector<std::string> v;
  for (const auto& kv : m.state_dict()) {
    std::ostringstream os;
    os << kv.first << ' ' << kv.second.shape();
    v.push_back(os.str());
  }
  return v;
}
std::vector<std::string> state_of(const Json& state) {
  std::vector<std::string> v;
  for (const Json& e : state) {
    std::ostringstream os;
    os << e[0].get<std::string>() << " [";
    for (std::size_t i = 0; i < e[1].size(); ++i) os << (i ? ", " : "") << e[1][i].get<int64_t>();
    v.push_back(os.str() + "]");
  }
  return v;
}
std::vector<std::string> state_of(const std::vector<std::pair<std::string, Shape>>& state) {
  std::vector<std::string> v;
  for (const auto& kv : state) {
    std::ostringstream os;
    os << kv.first << ' ' << kv.second;
    v.push_back(os.str());
  }
  return v;
}

// The entries as one string, readable in a failed CHECK ("weight [4, 3]; bias [4]"),
// optionally sorted.
std::string joined(std::vector<std::string> v, bool sort = false) {
  if (sort) std::sort(v.begin(), v.end());
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : "; ") + e;
  return s;
}

// A line's module in float64.
Made made_f64(const Line& l) {
  Made m = l.make();
  m.module->to(DType::f64);
  return m;
}

// The line's inputs, seeded by its name (FNV-1a) so that lines do not depend on each
// other; with `grad`, the f64 ones among [0, grad_inputs) require grad.
Tensors inputs_of(const Line& l, bool grad) {
  uint64_t h = 1469598103934665603ull;
  for (const char* p = l.name; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  Generator rng(h);
  Tensors x;
  for (std::size_t i = 0; i < l.inputs.size(); ++i) {
    module_table::Init init = i < l.init.size() && l.init[i] ? l.init[i] : module_table::normal;
    Tensor t = init(i, l.inputs[i], rng);
    if (grad && i < l.grad_inputs && t.dtype() == DType::f64) t.requires_grad_();
    x.push_back(t);
  }
  return x;
}

std::string same_outputs(const Tensors& a, const Tensors& b, double tol = 0.0) {
  if (a.size() != b.size()) return "the outputs' counts differ";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::string d = tc::diff(a[i], b[i], tol); !d.empty()) return "output " + std::to_string(i) + ": " + d;
  return "";
}

}  // namespace

TEST_CASE("module table: every public module has a line, and every line names one") {
  const std::set<std::string> modules = public_modules();
  REQUIRE(modules.size() > 80);  // the headers were found and read
  REQUIRE(modules.count("Linear"));
  std::set<std::string> covered;
  for (const Line& l : module_table::all()) {
    const std::string w = first_word(l.name);
    CHECK_MESSAGE(modules.count(w), "module table line '", std::string(l.name), "' does not name a public module");
    covered.insert(w);
  }
  std::vector<std::string> missing;
  for (const auto& m : modules)
    if (!covered.count(m)) missing.push_back(m);
  std::string list;
  for (const auto& m : missing) list += " " + m;
  CHECK_MESSAGE(missing.empty(), "public modules without a module table line:", list);
  // Every entry of expected.json is some line's (a stale one means a renamed line).
  std::set<std::string> used;
  for (const Line& l : module_table::all())
    if (l.torch) used.insert(*l.torch ? l.torch : l.name);
  for (auto it = expected().at("entries").begin(); it != expected().at("entries").end(); ++it)
    CHECK_MESSAGE(used.count(it.key()), "expected.json entry '", it.key(), "' belongs to no module table line");
  MESSAGE(modules.size(), " public modules, ", module_table::all().size(), " module table lines");
}

TEST_CASE("module table: defaults, printing and state-dict keys are PyTorch's") {
  std::vector<std::string> differing;
  for (const Line& l : module_table::all()) {
    INFO("module table line: ", std::string(l.name));
    Made m = l.make();
    CHECK(m.module->type_name() == first_word(l.name));
    const Json* t = torch_entry(l);
    REQUIRE_MESSAGE((t != nullptr || l.repr != nullptr), "no entry in expected.json and no attograd-only repr");

    // Printing: PyTorch's repr with the line's marked differences applied.
    std::vector<std::string> stale;
    const std::string want = t ? apply((*t)["repr"].get<std::string>(), l.diffs, stale) : std::string(l.repr);
    CHECK(printed(*m.module) == want);
    for (const auto& s : stale) CHECK_MESSAGE(false, "marked difference not in PyTorch's repr: ", s);

    // State-dict keys and shapes (a marked order difference: same entries, another order).
    const auto ours = state_of(*m.module);
    const auto theirs = t ? state_of((*t)["state"]) : state_of(l.state);
    if (l.order_differs) {
      CHECK(joined(ours, true) == joined(theirs, true));
      CHECK_MESSAGE(joined(ours) != joined(theirs), "marked state-dict order difference is gone");
    } else {
      CHECK(joined(ours) == joined(theirs));
    }

    // The options' defaults under torch's argument names.
    if (l.defaults) {
      const Json have = l.defaults();
      const Json torch = t ? (*t)["defaults"] : l.torch_defaults ? l.torch_defaults() : Json::object();
      for (auto it = have.begin(); it != have.end(); ++it) {
        const std::string key = it.key();
        INFO("default: ", key, " = ", it.value().dump());
        REQUIRE_MESSAGE(torch.contains(key), "PyTorch's constructor has no default ", key);
        const bool marked = std::find_if(l.default_diffs.begin(), l.default_diffs.end(),
                                         [&key](const char* k) { return key == k; }) != l.default_diffs.end();
        if (marked)
          CHECK_MESSAGE(it.value() != torch[key], "marked default difference is gone");
        else
          CHECK_MESSAGE(it.value() == torch[key], "PyTorch's default: ", torch[key].dump());
      }
    }
    // (A line compared with a related torch module, such as a tensor-parallel stack with
    // the full one, is not a difference from PyTorch.)
    const bool own = t && (*l.torch == '\0' || first_word(l.name) == l.torch);
    if (own && (!l.diffs.empty() || l.order_differs || !l.default_diffs.empty())) differing.push_back(l.name);
  }
  std::string list;
  for (const auto& d : differing) list += " " + d;
  MESSAGE(differing.size(), " lines mark differences from PyTorch:", list);
}

TEST_CASE("module table: forward shapes and the state-dict round trip") {
  for (const Line& l : module_table::all()) {
    INFO("module table line: ", std::string(l.name));
    const Tensors x = inputs_of(l, false);
    Made a = made_f64(l);
    if (a.forward) {
      const Tensors y = a.forward(x);
      REQUIRE(y.size() == l.outputs.size());
      for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i].shape() == l.outputs[i]);
    } else {
      CHECK(l.outputs.empty());
    }
    // Round trip: move a's floating state away from its initialization (U[0.5, 1.5):
    // positive, for running variances), then state_dict -> a fresh module -> load.
    for (const auto& kv : a.module->state_dict()) {
      Tensor p = kv.second;
      if (p.dtype() == DType::f64) nn::init::uniform_(p, 0.5, 1.5);
    }
    Made b = made_f64(l);
    b.module->load_state_dict(a.module->state_dict());
    CHECK(test_util::map_diff(a.module->state_dict(), b.module->state_dict()) == "");
    if (a.forward) {
      a.module->eval();
      b.module->eval();
      CHECK(same_outputs(a.forward(x), b.forward(x)) == "");
    }
  }
}

TEST_CASE("module table: gradcheck through each module in float64") {
  int checked = 0;
  for (const Line& l : module_table::all()) {
    if (l.grad == Grad::none || !l.make().forward) continue;
    INFO("module table line: ", std::string(l.name));
    Made m = made_f64(l);
    m.module->train(l.grad == Grad::train);
    const Tensors x = inputs_of(l, true);
    auto fn = [&m](const std::vector<Tensor>& in) {
      Tensors flat;
      for (const Tensor& y : m.forward(in)) flat.push_back(y.reshape({-1}));
      return cat(flat);
    };
    GradcheckResult r = gradcheck(fn, x, {.name = l.name});
    CHECK_MESSAGE(r.ok, r.message);
    ++checked;
  }
  CHECK(checked > 70);
}

TEST_CASE("module table: train and eval") {
  // Training mode first (dropout draws, running statistics move), then eval twice: the
  // same outputs, equal to the line's reference, and not the training ones.
  int checked = 0;
  for (const Line& l : module_table::all()) {
    if (!l.eval_ref) continue;
    INFO("module table line: ", std::string(l.name));
    Made m = made_f64(l);
    const Tensors x = inputs_of(l, false);
    m.module->train();
    const Tensors trained = m.forward(x);
    m.module->eval();
    const Tensors y = m.forward(x);
    CHECK(same_outputs(m.forward(x), y) == "");
    CHECK(same_outputs(y, l.eval_ref(m, x), 1e-12) == "");
    CHECK_MESSAGE(same_outputs(trained, y, 1e-9) != "", "training mode gave the eval outputs");
    ++checked;
  }
  CHECK(checked >= 20);
}
