// Parity with PyTorch 1.13 for the recurrent networks (issue 41): every case of
// tests/fixtures/rnn_modules.safetensors (tools/fixtures/rnn.py) builds the attograd module
// from the case's options (nn::RNN tanh / relu, LSTM with proj_size, GRU, RNNCell,
// LSTMCell, GRUCell), checks that its state-dict keys are PyTorch's in PyTorch's order,
// loads PyTorch's state dict under PyTorch's names, and replays each of the case's passes:
// padded, packed (sorted with enforce_sorted, unsorted, all lengths below T with a tie) or
// unbatched input, with and without h0 / c0, in each batch_first layout the pass lists.
// Outputs, h_n, c_n and the gradients of sum_o sum(o * upstream.o) with respect to the
// input, the states and every parameter are compared in float64 to kRtol / kAtol
// (tests/cnn_parity.h); the packing functions' own results (pack_padded_sequence,
// pad_packed_sequence, pad_sequence, pack_sequence) exactly. An unknown kind, module,
// function or input fails. AG_PARITY_REPORT=1 prints every pass's worst error.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "cnn_parity.h"
#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace nn = ag::nn;
namespace R = ag::nn::utils::rnn;
using ag::Tensor;
using cnn_parity::json;
using Named = std::map<std::string, Tensor>;  // role -> tensor: "input", "h0", "output", "h_n", ...

namespace {

const test_util::Fixture& fixture() {
  static const test_util::Fixture f = test_util::load_fixture("rnn_modules");
  return f;
}

const std::set<std::string> kStacks = {"RNN", "LSTM", "GRU"};
const std::set<std::string> kCells = {"RNNCell", "LSTMCell", "GRUCell"};
const std::set<std::string> kFunctions = {"pack_padded_sequence", "pad_sequence", "pack_sequence"};

// The options the fixture may give: an option this test does not apply would be compared
// against PyTorch's module with that option while attograd's ran without it.
void check_option_keys(const json& o, const std::string& type) {
  std::set<std::string> known = {"input_size", "hidden_size", "bias"};
  if (kStacks.count(type)) known.insert({"num_layers", "dropout", "bidirectional"});
  if (type == "RNN" || type == "RNNCell") known.insert("nonlinearity");
  if (type == "LSTM") known.insert("proj_size");
  for (const auto& entry : o.items())
    if (!known.count(entry.key()))
      throw std::invalid_argument("option '" + entry.key() + "' of " + type + " is not applied by test_rnn_parity");
}

nn::NonlinearityType nonlinearity(const json& o) {
  const std::string s = o.at("nonlinearity");
  if (s == "tanh") return ag::kTanh;
  if (s == "relu") return ag::kReLU;
  throw std::invalid_argument("unknown nonlinearity '" + s + "'");
}

// The options RNN, LSTM and GRU share; batch_first is the pass's layout, not an option of
// the case (tools/fixtures/rnn.py stores one module for both layouts).
template <class Options>
Options stack_options(Options opt, const json& o, bool batch_first) {
  opt.num_layers(o.at("num_layers").get<int64_t>()).bias(o.at("bias").get<bool>()).batch_first(batch_first);
  opt.dropout(o.at("dropout").get<double>()).bidirectional(o.at("bidirectional").get<bool>());
  return opt;
}

// A module of any of the six types with its forward on one pass's inputs (roles "input",
// "h0", "c0" for the stacks, "input", "hx", "cx" for the cells) -> the pass's outputs in
// the module's layout ("output", "output_lengths" when packed, "h_n", "c_n"; "h", "c").
struct Built {
  std::shared_ptr<nn::Module> module;
  std::function<Named(const Named& in, const json& pass, bool batch_first)> forward;
};

template <class Holder>
Named stack_forward(Holder m, const Named& in, const json& pass, bool batch_first) {
  constexpr bool lstm = std::is_same_v<Holder, nn::LSTM>;
  Named r;
  auto keep = [&r](const auto& state) {
    if constexpr (lstm) {
      r["h_n"] = std::get<0>(state);
      r["c_n"] = std::get<1>(state);
    } else {
      r["h_n"] = state;
    }
  };
  auto hx = [&in] {
    if constexpr (lstm) {
      return in.count("h0") ? std::optional<std::tuple<Tensor, Tensor>>(std::make_tuple(in.at("h0"), in.at("c0")))
                            : std::nullopt;
    } else {
      return in.count("h0") ? in.at("h0") : Tensor{};
    }
  }();
  const std::string kind = pass.at("input");
  if (kind == "packed") {
    const R::PackedSequence packed = R::pack_padded_sequence(in.at("input"), cnn_parity::ints(pass.at("lengths")),
                                                             batch_first, pass.at("enforce_sorted").get<bool>());
    auto res = m->forward_with_packed_input(packed, hx);
    auto padded = R::pad_packed_sequence(std::get<0>(res), batch_first);
    r["output"] = std::get<0>(padded);
    r["output_lengths"] = std::get<1>(padded);
    keep(std::get<1>(res));
  } else if (kind == "padded" || kind == "unbatched") {
    auto res = m->forward(in.at("input"), hx);
    r["output"] = std::get<0>(res);
    keep(std::get<1>(res));
  } else {
    throw std::invalid_argument("unknown input kind '" + kind + "' for " + m->name());
  }
  return r;
}

template <class Holder>
Named cell_forward(Holder m, const Named& in, const json& pass) {
  const std::string kind = pass.at("input");
  if (kind != "batched" && kind != "unbatched")
    throw std::invalid_argument("unknown input kind '" + kind + "' for a cell");
  Named r;
  if constexpr (std::is_same_v<Holder, nn::LSTMCell>) {
    std::optional<std::tuple<Tensor, Tensor>> hx;
    if (in.count("hx")) hx = std::make_tuple(in.at("hx"), in.at("cx"));
    auto res = m->forward(in.at("input"), hx);
    r["h"] = std::get<0>(res);
    r["c"] = std::get<1>(res);
  } else {
    r["h"] = m->forward(in.at("input"), in.count("hx") ? in.at("hx") : Tensor{});
  }
  return r;
}

template <class Holder>
Built wrap_stack(Holder m) {
  return {m.ptr(), [m](const Named& in, const json& pass, bool bf) { return stack_forward(m, in, pass, bf); }};
}

template <class Holder>
Built wrap_cell(Holder m) {
  return {m.ptr(), [m](const Named& in, const json& pass, bool) { return cell_forward(m, in, pass); }};
}

// Builds the module of case c for one layout ("module" is PyTorch's class name).
Built build(const json& c, bool batch_first) {
  const std::string kind = c.at("kind"), type = c.at("module");
  const json& o = c.at("options");
  check_option_keys(o, type);
  const int64_t in = o.at("input_size").get<int64_t>(), hidden = o.at("hidden_size").get<int64_t>();
  const bool bias = o.at("bias").get<bool>();
  if (kind == "rnn" && type == "LSTM")
    return wrap_stack(nn::LSTM(
        stack_options(nn::LSTMOptions(in, hidden), o, batch_first).proj_size(o.at("proj_size").get<int64_t>())));
  if (kind == "rnn" && type == "GRU")
    return wrap_stack(nn::GRU(stack_options(nn::GRUOptions(in, hidden), o, batch_first)));
  if (kind == "rnn" && type == "RNN")
    return wrap_stack(nn::RNN(stack_options(nn::RNNOptions(in, hidden), o, batch_first).nonlinearity(nonlinearity(o))));
  if (kind == "cell" && type == "RNNCell")
    return wrap_cell(nn::RNNCell(nn::RNNCellOptions(in, hidden).bias(bias).nonlinearity(nonlinearity(o))));
  if (kind == "cell" && type == "LSTMCell") return wrap_cell(nn::LSTMCell(nn::LSTMCellOptions(in, hidden).bias(bias)));
  if (kind == "cell" && type == "GRUCell") return wrap_cell(nn::GRUCell(nn::GRUCellOptions(in, hidden).bias(bias)));
  throw std::invalid_argument("test_rnn_parity has no builder for kind '" + kind + "', module '" + type + "'");
}

// The module's state-dict keys are PyTorch's, in PyTorch's order, with PyTorch's shapes
// (failures reported under `name`).
bool check_state_keys(const std::string& name, const nn::Module& m, const json& c) {
  return cnn_parity::check_state_dict(name, m.state_dict(), c.at("state_keys").get<std::vector<std::string>>(),
                                      fixture(), c.at("name"));
}

std::vector<std::string> strings(const json& j) { return j.get<std::vector<std::string>>(); }

// The layouts a pass is replayed in (cells: time-first only, they have no time dim).
std::vector<bool> layouts(const json& pass) {
  if (!pass.contains("batch_first")) return {false};
  return pass.at("batch_first").get<std::vector<bool>>();
}

// One pass of a module case in one layout. The fixture's tensors are time-first; with
// batch_first the input (and its gradient, and the output) are transposed here.
void run_pass(const json& c, const json& pass, bool batch_first, std::vector<std::string>& tags) {
  const test_util::Fixture& f = fixture();
  const std::string name = c.at("name"), prefix = name + "/" + pass.at("name").get<std::string>();
  const std::string tag = prefix + (batch_first ? " [batch_first]" : "");
  tags.push_back(tag);
  CAPTURE(tag);
  cnn_parity::reports()[tag];
  try {
    Built b = build(c, batch_first);
    b.module->to(ag::DType::f64);  // PyTorch's modules were made under set_default_dtype(float64)
    if (!check_state_keys(tag, *b.module, c)) return;
    b.module->load_state_dict(f.with_prefix(name + "/state."));  // strict: PyTorch's names as they are
    b.module->eval();
    const bool flip = batch_first && pass.at("input") != "unbatched";
    auto layout = [flip](const Tensor& t) { return flip ? t.transpose(0, 1) : t; };

    // The leaves: the input and the states the pass gives (every role with a gradient but "params").
    Named in;
    std::vector<std::string> roles;
    for (const std::string& role : strings(pass.at("grads"))) {
      if (role == "params") continue;
      roles.push_back(role);
      in[role] = cnn_parity::leaf(role == "input" ? layout(f.at(prefix + "/input")) : f.at(prefix + "/" + role));
    }
    const bool states = in.count("h0") || in.count("hx");
    if (states != pass.at("hx").get<bool>())
      throw std::invalid_argument("the pass's hx flag disagrees with the states it stores");

    Named out = b.forward(in, pass, batch_first);
    if (out.count("output")) out["output"] = layout(out.at("output"));  // time-first, as stored
    std::vector<Tensor> outs, ups;
    for (const std::string& o : strings(pass.at("outputs"))) {
      if (!out.count(o)) throw std::invalid_argument("attograd's module returns no '" + o + "'");
      cnn_parity::check_close(tag, o, out.at(o), f.at(prefix + "/" + o));
      outs.push_back(out.at(o));
      ups.push_back(f.at(prefix + "/upstream." + o));
    }
    if (pass.at("input") == "packed")
      cnn_parity::check_close(tag, "output_lengths", out.at("output_lengths"), f.at(prefix + "/output_lengths"));

    std::vector<Tensor> inputs;
    for (const std::string& role : roles) inputs.push_back(in.at(role));
    const auto params = b.module->named_parameters();
    for (const auto& entry : params) inputs.push_back(entry.second);
    const std::vector<Tensor> g = ag::grad(outs, inputs, ups);
    for (std::size_t i = 0; i < roles.size(); ++i)
      cnn_parity::check_close(tag, "grad." + roles[i], roles[i] == "input" ? layout(g[i]) : g[i],
                              f.at(prefix + "/grad." + roles[i]));
    // grad.params: every parameter's gradient flattened, concatenated in PyTorch's
    // state-dict order; compared parameter by parameter.
    const Tensor& flat = f.at(prefix + "/grad.params");
    int64_t offset = 0;
    for (const std::string& key : strings(c.at("state_keys"))) {
      const Tensor& ref = f.at(name + "/state." + key);
      const Tensor want = flat.narrow(0, offset, ref.numel()).reshape(ref.shape());
      offset += ref.numel();
      Tensor got;
      for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].first == key) got = g[roles.size() + i];
      cnn_parity::check_close(tag, "grad." + key, got, want);
    }
    CHECK_MESSAGE(offset == flat.numel(), tag, ": grad.params holds ", flat.numel(), " values, the state ", offset);
  } catch (const std::exception& e) {
    cnn_parity::note_failure(tag, std::string("threw: ") + e.what());
    FAIL_CHECK(tag, " threw: ", std::string(e.what()));
  }
}

void run_module_case(const json& c, std::vector<std::string>& tags) {
  for (const json& pass : c.at("passes"))
    for (const bool bf : layouts(pass)) run_pass(c, pass, bf, tags);
}

// A case of torch.nn.utils.rnn itself: results compared exactly, then the gradients of
// sum(result * upstream) with respect to the float tensors.
void run_packing_case(const json& c) {
  const test_util::Fixture& f = fixture();
  const std::string name = c.at("name"), fn = c.at("function");
  const json& args = c.at("args");
  CAPTURE(name);
  cnn_parity::reports()[name];
  try {
    Named in;
    std::vector<Tensor> seqs;
    for (const std::string& role : strings(c.at("tensors"))) {
      const Tensor& t = f.at(name + "/" + role);
      in[role] = t.dtype() == ag::DType::f64 ? cnn_parity::leaf(t) : t;
      if (role.rfind("seq.", 0) == 0) seqs.push_back(in[role]);
    }
    Named res;
    auto keep = [&res](const R::PackedSequence& p) {
      res["data"] = p.data();
      res["batch_sizes"] = p.batch_sizes();
      res["sorted_indices"] = p.sorted_indices();
      res["unsorted_indices"] = p.unsorted_indices();
    };
    if (fn == "pack_padded_sequence") {
      const R::PackedSequence p = R::pack_padded_sequence(
          in.at("input"), in.at("lengths"), args.at("batch_first").get<bool>(), args.at("enforce_sorted").get<bool>());
      keep(p);
      const json& total = args.at("total_length");
      auto unpacked =
          R::pad_packed_sequence(p, args.at("unpack_batch_first").get<bool>(), args.at("padding_value").get<double>(),
                                 total.is_null() ? std::nullopt : std::optional<int64_t>(total.get<int64_t>()));
      res["padded"] = std::get<0>(unpacked);
      res["padded_lengths"] = std::get<1>(unpacked);
    } else if (fn == "pad_sequence") {
      res["out"] = R::pad_sequence(seqs, args.at("batch_first").get<bool>(), args.at("padding_value").get<double>());
    } else if (fn == "pack_sequence") {
      keep(R::pack_sequence(seqs, args.at("enforce_sorted").get<bool>()));
    } else {
      throw std::invalid_argument("test_rnn_parity has no runner for function '" + fn + "'");
    }
    const std::vector<std::string> results = strings(c.at("results"));
    for (const std::string& r : results) {
      if (!res.count(r)) throw std::invalid_argument("no attograd result '" + r + "' of " + fn);
      cnn_parity::check_close(name, r, res.at(r), f.at(name + "/" + r), 0.0, 0.0);  // exactly
    }
    // What torch leaves None (sorted_indices of a batch that came sorted) attograd leaves undefined.
    for (const auto& entry : res)
      if (std::find(results.begin(), results.end(), entry.first) == results.end())
        CHECK_MESSAGE(!entry.second.defined(), name, ": ", entry.first, " is defined, PyTorch's is None");

    std::vector<Tensor> outs, ups, inputs;
    std::vector<std::string> grads;
    for (const std::string& u : strings(c.at("upstream"))) {
      outs.push_back(res.at(u));
      ups.push_back(f.at(name + "/upstream." + u));
    }
    for (const auto& entry : in)
      if (f.contains(name + "/grad." + entry.first)) {
        grads.push_back(entry.first);
        inputs.push_back(entry.second);
      }
    if (outs.empty()) return;
    const std::vector<Tensor> g = ag::grad(outs, inputs, ups);
    for (std::size_t i = 0; i < grads.size(); ++i)
      cnn_parity::check_close(name, "grad." + grads[i], g[i], f.at(name + "/grad." + grads[i]));
  } catch (const std::exception& e) {
    cnn_parity::note_failure(name, std::string("threw: ") + e.what());
    FAIL_CHECK(name, " threw: ", std::string(e.what()));
  }
}

// Runs every case that `select` picks; returns the report tags.
std::vector<std::string> run_cases(const std::function<bool(const json&)>& select) {
  std::vector<std::string> tags;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    if (!select(c)) continue;
    if (c.at("kind") == "packing") {
      tags.push_back(c.at("name"));
      run_packing_case(c);
    } else {
      run_module_case(c, tags);
    }
  }
  return tags;
}

bool is_module(const json& c, const std::string& kind, const std::set<std::string>& types) {
  return c.at("kind") == kind && types.count(c.at("module").get<std::string>());
}

}  // namespace

TEST_CASE("rnn parity: LSTM over layers x directions x batch_first x packing x proj_size") {
  const auto tags = run_cases([](const json& c) { return is_module(c, "rnn", {"LSTM"}); });
  CHECK(tags.size() >= 48);  // the grid: 8 modules x 3 inputs x 2 layouts, and more
  cnn_parity::print_reports("LSTM", tags);
}

TEST_CASE("rnn parity: GRU and RNN (tanh, relu)") {
  const auto tags = run_cases([](const json& c) { return is_module(c, "rnn", {"GRU", "RNN"}); });
  CHECK(tags.size() >= 30);
  cnn_parity::print_reports("GRU and RNN", tags);
}

TEST_CASE("rnn parity: RNNCell, LSTMCell, GRUCell, batched and unbatched, with and without hx") {
  const auto tags = run_cases([](const json& c) { return is_module(c, "cell", kCells); });
  CHECK(tags.size() >= 12);
  cnn_parity::print_reports("cells", tags);
}

TEST_CASE("rnn parity: pack_padded_sequence, pad_packed_sequence, pad_sequence, pack_sequence") {
  const auto tags = run_cases([](const json& c) { return c.at("kind") == "packing"; });
  CHECK(tags.size() >= 4);
  cnn_parity::print_reports("packing", tags);
}

TEST_CASE("rnn parity: every module's state-dict keys are PyTorch's, in PyTorch's order") {
  int modules = 0;
  for (const json& c : cnn_parity::cases_of(fixture())) {
    if (c.at("kind") == "packing") continue;
    const std::string name = c.at("name");
    CAPTURE(name);
    try {
      Built b = build(c, false);
      b.module->to(ag::DType::f64);
      CHECK(check_state_keys(name, *b.module, c));
      ++modules;
    } catch (const std::exception& e) { FAIL_CHECK(name, " threw: ", std::string(e.what())); }
  }
  CHECK(modules >= 20);
}

TEST_CASE("rnn parity: every case of the fixture names a kind, module or function and inputs this test runs") {
  for (const json& c : cnn_parity::cases_of(fixture())) {
    const std::string name = c.at("name"), kind = c.at("kind");
    CAPTURE(name);
    if (kind == "packing") {
      CHECK_MESSAGE(kFunctions.count(c.at("function").get<std::string>()), "function ",
                    c.at("function").get<std::string>(), " has no runner here");
      continue;
    }
    const std::set<std::string>* types = kind == "rnn" ? &kStacks : kind == "cell" ? &kCells : nullptr;
    if (types == nullptr) {
      FAIL_CHECK("unknown case kind '", kind, "'");
      continue;
    }
    CHECK_MESSAGE(types->count(c.at("module").get<std::string>()), "module ", c.at("module").get<std::string>(),
                  " is not a known ", kind);
    CHECK_NOTHROW(check_option_keys(c.at("options"), c.at("module").get<std::string>()));
    const std::set<std::string> inputs = kind == "rnn" ? std::set<std::string>{"padded", "packed", "unbatched"}
                                                       : std::set<std::string>{"batched", "unbatched"};
    CHECK(!c.at("passes").empty());
    for (const json& pass : c.at("passes"))
      CHECK_MESSAGE(inputs.count(pass.at("input").get<std::string>()), "pass ", pass.at("name").get<std::string>(),
                    ": input kind ", pass.at("input").get<std::string>());
  }
}
