// The recurrent modules' behaviour: PyTorch's parameter names, order and init bounds,
// every input layout, packed sequences against one sequence at a time, one tape node per
// layer and direction, dropout between layers, f32 / bf16 against f64, the cells, and
// the typed errors. (Values against PyTorch: tests/nn/test_rnn_parity.cpp; gradcheck
// and gradgradcheck of the ops: tests/ops/op_table/rnn.cpp.)
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "nn_test_util.h"
#include "tensor_checks.h"

using namespace ag;
namespace R = ag::nn::utils::rnn;
using nn_test::repr;
using tc::diff;

namespace {

// The nodes reachable from t's grad_fn, by name.
std::multiset<std::string> tape_nodes(const Tensor& t) {
  std::multiset<std::string> names;
  std::set<const Node*> seen;
  std::function<void(const std::shared_ptr<Node>&)> walk = [&](const std::shared_ptr<Node>& n) {
    if (!n || !seen.insert(n.get()).second) return;
    names.insert(n->name);
    for (const Edge& e : n->inputs) walk(e.node);
  };
  walk(t.impl()->grad_fn);
  return names;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

}  // namespace

TEST_CASE("LSTM: PyTorch's parameter names, order, shapes and init bounds; reprs") {
  manual_seed(1);
  nn::LSTM lstm(nn::LSTMOptions(5, 6).num_layers(2).bidirectional(true).proj_size(3));
  const auto params = lstm->named_parameters();
  std::vector<std::string> want;
  for (std::string l : {"0", "1"})
    for (std::string s : {"", "_reverse"})
      for (std::string p : {"weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"})
        want.push_back(p + "_l" + l + s);
  REQUIRE(params.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(params[i].first == want[i]);
  CHECK(params[0].second.shape() == Shape{24, 5});   // weight_ih_l0: (4 H, I)
  CHECK(params[1].second.shape() == Shape{24, 3});   // weight_hh_l0: (4 H, P)
  CHECK(params[4].second.shape() == Shape{3, 6});    // weight_hr_l0: (P, H)
  CHECK(params[10].second.shape() == Shape{24, 6});  // weight_ih_l1: (4 H, 2 P)
  const double bound = 1.0 / std::sqrt(6.0);
  for (const auto& entry : params) {  // no structured binding: clang 14 cannot capture one in CAPTURE
    const std::string& name = entry.first;
    CAPTURE(name);
    CHECK(max(abs(entry.second)).item<double>() <= bound);
    CHECK(max(abs(entry.second)).item<double>() > bound * 0.5);  // drawn over the whole interval
  }
  CHECK(repr(*lstm) == "LSTM(5, 6, proj_size=3, num_layers=2, bidirectional=True)");
  CHECK(repr(*nn::RNN(nn::RNNOptions(2, 3).nonlinearity(kReLU).bias(false))) ==
        "RNN(2, 3, nonlinearity=relu, bias=False)");
  CHECK(repr(*nn::GRU(nn::GRUOptions(2, 3).batch_first(true))) == "GRU(2, 3, batch_first=True)");
  CHECK(repr(*nn::GRUCell(2, 3)) == "GRUCell(2, 3)");
  CHECK(nn::GRU(2, 3)->named_parameters().size() == 4);
  CHECK(nn::RNN(nn::RNNOptions(2, 3).bias(false))->all_weights()[0].size() == 2);
}

TEST_CASE("LSTM / GRU / RNN: output and state shapes in every layout") {
  manual_seed(2);
  const Tensor x = randn({7, 3, 4});  // (T, B, I)
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2).bidirectional(true).proj_size(2));
  auto [out, hc] = lstm(x);
  CHECK(out.shape() == Shape{7, 3, 4});  // D P
  CHECK(std::get<0>(hc).shape() == Shape{4, 3, 2});
  CHECK(std::get<1>(hc).shape() == Shape{4, 3, 6});

  nn::GRU gru(nn::GRUOptions(4, 5).batch_first(true));
  auto [gout, gh] = gru(x.transpose(0, 1));
  CHECK(gout.shape() == Shape{3, 7, 5});
  CHECK(gh.shape() == Shape{1, 3, 5});

  nn::RNN rnn(nn::RNNOptions(4, 5).num_layers(3));
  auto [rout, rh] = rnn(x.select(1, 0));  // unbatched (T, I)
  CHECK(rout.shape() == Shape{7, 5});
  CHECK(rh.shape() == Shape{3, 5});
}

TEST_CASE("batch_first and unbatched inputs compute what the time-major batch computes") {
  manual_seed(3);
  set_default_dtype(DType::f64);
  nn::LSTM a(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  nn::LSTM b(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  b->load_state_dict(a->state_dict());
  const Tensor x = randn({5, 2, 3}), h0 = randn({4, 2, 4}), c0 = randn({4, 2, 4});
  auto [ya, sa] = a->forward(x, std::make_tuple(h0, c0));
  auto [yb, sb] = b->forward(x.transpose(0, 1), std::make_tuple(h0, c0));
  CHECK(diff(yb.transpose(0, 1), ya) == "");
  CHECK(diff(std::get<1>(sb), std::get<1>(sa)) == "");
  // one sequence of the batch alone, unbatched, with its own states
  auto [y1, s1] = a->forward(x.select(1, 1), std::make_tuple(h0.select(1, 1), c0.select(1, 1)));
  CHECK(diff(y1, ya.select(1, 1), 1e-14) == "");
  CHECK(diff(std::get<0>(s1), std::get<0>(sa).select(1, 1), 1e-14) == "");
  set_default_dtype(DType::f32);
}

TEST_CASE("packed sequences: each sequence as if it ran alone, in the caller's order") {
  manual_seed(4);
  set_default_dtype(DType::f64);
  for (bool lstm_mode : {true, false}) {
    CAPTURE(lstm_mode);
    nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
    nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
    const std::vector<int64_t> lengths{2, 5, 1, 4};  // unsorted; T = 5
    const Tensor x = randn({5, 4, 3});
    const int64_t P = lstm_mode ? 2 : 4;
    const Tensor h0 = randn({4, 4, P}), c0 = randn({4, 4, 4});
    const R::PackedSequence packed = R::pack_padded_sequence(x, lengths, false, false);
    CHECK(packed.batch_sizes_vector() == std::vector<int64_t>{4, 3, 2, 2, 1});
    CHECK(packed.sorted_indices().to_vector<int64_t>() == std::vector<int64_t>{1, 3, 0, 2});
    CHECK(packed.unsorted_indices().to_vector<int64_t>() == std::vector<int64_t>{2, 0, 3, 1});
    Tensor out, h_n;
    if (lstm_mode) {
      auto [po, s] = lstm->forward_with_packed_input(packed, std::make_tuple(h0, c0));
      out = std::get<0>(R::pad_packed_sequence(po, false, -7.0));
      h_n = std::get<0>(s);
    } else {
      auto [po, h] = gru->forward_with_packed_input(packed, h0.narrow(2, 0, P));
      out = std::get<0>(R::pad_packed_sequence(po, false, -7.0));
      h_n = h;
    }
    for (int64_t b = 0; b < 4; ++b) {
      CAPTURE(b);
      const Tensor xb = x.select(1, b).narrow(0, 0, lengths[b]);
      Tensor ob, hb;
      if (lstm_mode) {
        auto [o, s] = lstm->forward(xb, std::make_tuple(h0.select(1, b), c0.select(1, b)));
        ob = o, hb = std::get<0>(s);
      } else {
        auto [o, h] = gru->forward(xb, h0.select(1, b));
        ob = o, hb = h;
      }
      CHECK(diff(out.select(1, b).narrow(0, 0, lengths[b]), ob, 1e-13) == "");
      CHECK(diff(h_n.select(1, b), hb, 1e-13) == "");
      if (lengths[b] < 5)
        CHECK(max(abs(out.select(1, b).narrow(0, lengths[b], 5 - lengths[b]) + 7.0)).item<double>() == 0);
    }
  }
  set_default_dtype(DType::f32);
}

TEST_CASE("pack / pad round trips and gradients through packing") {
  manual_seed(5);
  const Tensor a = randn({3, 2}), b = randn({1, 2}), c = randn({2, 2});
  const Tensor padded = R::pad_sequence({a, b, c}, true, 9.0);
  CHECK(padded.shape() == Shape{3, 3, 2});
  CHECK(diff(padded.select(0, 1).select(0, 1), {9.0, 9.0}) == "");
  const R::PackedSequence p = R::pack_sequence({a, c, b});
  CHECK(p.batch_sizes_vector() == std::vector<int64_t>{3, 2, 1});
  CHECK(!p.sorted_indices().defined());
  auto [back, lengths] = R::pad_packed_sequence(p, false, 0.0, 4);
  CHECK(back.shape() == Shape{4, 3, 2});
  CHECK(lengths.to_vector<int64_t>() == std::vector<int64_t>{3, 2, 1});
  CHECK(diff(back.select(1, 1).narrow(0, 0, 2), c) == "");
  // gradients reach only the packed positions
  Tensor x = randn({3, 2, 2}).requires_grad_();
  R::PackedSequence q = R::pack_padded_sequence(x, std::vector<int64_t>{1, 3}, false, false);
  q.data().sum().backward();
  CHECK(diff(x.grad().sum({2}), {2, 2, 0, 2, 0, 2}) == "");
}

TEST_CASE("the tape holds one node per layer and direction, whatever the length") {
  manual_seed(6);
  nn::LSTM lstm(nn::LSTMOptions(4, 8).num_layers(2).bidirectional(true));
  std::vector<size_t> sizes;
  for (int64_t T : {3, 60}) {
    CAPTURE(T);
    auto [out, hc] = lstm(randn({T, 2, 4}));
    const auto nodes = tape_nodes(out.sum() + std::get<0>(hc).sum() + std::get<1>(hc).sum());
    CHECK(nodes.count("rnn_layer") == 4);
    sizes.push_back(nodes.size());
  }
  CHECK(sizes[0] == sizes[1]);  // views, projections and joins per layer: none per step
}

TEST_CASE("LSTM gradients and second derivatives through the module (f64 gradcheck)") {
  manual_seed(7);
  set_default_dtype(DType::f64);
  nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true).proj_size(2));
  nn::GRU gru(nn::GRUOptions(2, 3).num_layers(2));
  const Tensor x = randn({3, 2, 2}).requires_grad_(), h0 = randn({4, 2, 2}).requires_grad_();
  auto f = [&](const std::vector<Tensor>& in) {
    auto [o, s] = lstm->forward(in[0], std::make_tuple(in[1], zeros({4, 2, 3})));
    return cat({o.reshape({-1}), std::get<1>(s).reshape({-1})}, 0);
  };
  CHECK(gradcheck(f, {x, h0}).ok);
  CHECK(gradgradcheck(f, {x, h0}).ok);
  auto g = [&](const std::vector<Tensor>& in) { return std::get<0>(gru->forward(in[0], in[1])); };
  const Tensor gh0 = randn({2, 2, 3}).requires_grad_();
  CHECK(gradcheck(g, {x, gh0}).ok);
  CHECK(gradgradcheck(g, {x, gh0}).ok);
  set_default_dtype(DType::f32);
}

TEST_CASE("dropout between layers in training only") {
  manual_seed(8);
  nn::GRU gru(nn::GRUOptions(3, 16).num_layers(2).dropout(0.5));
  const Tensor x = randn({4, 2, 3});
  const Tensor a = std::get<0>(gru(x)), b = std::get<0>(gru(x));
  CHECK(max_abs_diff(a, b) > 1e-3);  // a fresh mask each call
  gru->eval();
  const Tensor c = std::get<0>(gru(x)), d = std::get<0>(gru(x));
  CHECK(max_abs_diff(c, d) == 0);
  nn::GRU one(nn::GRUOptions(3, 16).dropout(0.5));  // one layer: nothing to drop between
  CHECK(max_abs_diff(std::get<0>(one(x)), std::get<0>(one(x))) == 0);
}

TEST_CASE("f32 and bf16 agree with f64; gradients too") {
  manual_seed(9);
  nn::LSTM lstm(nn::LSTMOptions(8, 16).num_layers(2).proj_size(4));
  nn::LSTM lstm64(nn::LSTMOptions(8, 16).num_layers(2).proj_size(4));
  lstm64->to(DType::f64);
  lstm64->load_state_dict(lstm->state_dict());
  const Tensor x = randn({20, 3, 8}).requires_grad_();
  const Tensor x64 = x.detach().to(DType::f64).requires_grad_();
  auto [y, s] = lstm(x);
  auto [y64, s64] = lstm64(x64);
  CHECK(max_abs_diff(y, y64) < 1e-5);
  (y.square().sum() + std::get<1>(s).sum()).backward();
  (y64.square().sum() + std::get<1>(s64).sum()).backward();
  CHECK(max_abs_diff(x.grad(), x64.grad()) < 1e-5);
  const auto p = lstm->parameters(), p64 = lstm64->parameters();
  for (size_t i = 0; i < p.size(); ++i) CHECK(max_abs_diff(p[i].grad(), p64[i].grad()) < 1e-4);
  // bf16 input and weights: computed in f32, rounded back
  lstm->to(DType::bf16);
  auto [yb, sb] = lstm(x.detach().to(DType::bf16));
  CHECK(yb.dtype() == DType::bf16);
  CHECK(max_abs_diff(yb.to(DType::f64), y64) < 0.05);
}

TEST_CASE("cells: one step of the module, unbatched inputs, default states") {
  manual_seed(10);
  set_default_dtype(DType::f64);
  nn::LSTMCell cell(3, 4);
  nn::LSTM lstm(3, 4);
  NoGradGuard no_grad;
  lstm->named_parameters()[0].second.copy_(cell->weight_ih);  // same weights
  lstm->named_parameters()[1].second.copy_(cell->weight_hh);
  lstm->named_parameters()[2].second.copy_(cell->bias_ih);
  lstm->named_parameters()[3].second.copy_(cell->bias_hh);
  const Tensor x = randn({2, 3}), h = randn({2, 4}), c = randn({2, 4});
  auto [h1, c1] = cell(x, std::make_tuple(h, c));
  auto [y, s] = lstm->forward(x.unsqueeze(0), std::make_tuple(h.unsqueeze(0), c.unsqueeze(0)));
  CHECK(diff(h1, y.select(0, 0), 1e-15) == "");
  CHECK(diff(c1, std::get<1>(s).select(0, 0), 1e-15) == "");
  auto [hu, cu] = cell(x.select(0, 1), std::make_tuple(h.select(0, 1), c.select(0, 1)));
  CHECK(hu.shape() == Shape{4});
  CHECK(diff(hu, h1.select(0, 1), 1e-15) == "");
  nn::GRUCell gcell(3, 4);
  CHECK(diff(gcell(x), gcell(x, zeros({2, 4}))) == "");
  nn::RNNCell rcell(nn::RNNCellOptions(3, 4).nonlinearity(kReLU));
  CHECK(min(rcell(x, h)).item<double>() >= 0);
  CHECK(diff(rcell(x, h),
             relu(linear(x, rcell->weight_ih, rcell->bias_ih) + linear(h, rcell->weight_hh, rcell->bias_hh)),
             1e-15) == "");
  set_default_dtype(DType::f32);
}

namespace {
// The message of the error `f` throws, checked to be of type E.
template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) { return e.what(); } catch (const std::exception& e) {
    FAIL("wrong exception type: " << e.what());
  }
  FAIL("no exception");
  return "";
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("bad input: typed errors naming the module and the shapes") {
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2));
  std::string m = error_of<ShapeError>([&] { lstm(randn({5, 2, 3})); });
  CHECK(has(m, "LSTM"));
  CHECK(has(m, "[5, 2, 3]"));
  CHECK(has(m, "input_size is 4"));
  m = error_of<ShapeError>([&] {
    lstm->forward(randn({5, 2, 4}), std::make_tuple(zeros({2, 3, 6}), zeros({2, 2, 6})));
  });
  CHECK(has(m, "LSTM: h0 [2, 3, 6] must be [2, 2, 6]"));
  m = error_of<ShapeError>([&] {
    lstm->forward(randn({5, 2, 4}), std::make_tuple(zeros({2, 2, 6}), zeros({1, 2, 6})));
  });
  CHECK(has(m, "LSTM: c0 [1, 2, 6] must be [2, 2, 6]"));
  nn::GRU gru(4, 6);
  m = error_of<ShapeError>([&] { gru->forward(randn({5, 2, 4}), zeros({1, 2, 5})); });
  CHECK(has(m, "GRU: hx [1, 2, 5] must be [1, 2, 6]"));
  m = error_of<ShapeError>([&] { gru(randn({5, 2, 3, 4})); });
  CHECK(has(m, "GRU"));
  m = error_of<ValueError>([&] { R::pack_padded_sequence(randn({5, 2, 4}), std::vector<int64_t>{6, 2}); });
  CHECK(has(m, "lengths [6, 2] must lie in [1, 5]"));
  m = error_of<ValueError>([&] { R::pack_padded_sequence(randn({5, 2, 4}), std::vector<int64_t>{5, 0}); });
  CHECK(has(m, "zero-length"));
  m = error_of<ValueError>([&] { R::pack_padded_sequence(randn({5, 2, 4}), std::vector<int64_t>{2, 5}); });
  CHECK(has(m, "lengths [2, 5] must be sorted in decreasing order"));
  m = error_of<ShapeError>([&] { R::pack_padded_sequence(randn({5, 2, 4}), std::vector<int64_t>{2}); });
  CHECK(has(m, "1 lengths for input [5, 2, 4]"));
  const auto packed = R::pack_padded_sequence(randn({5, 2, 3}), std::vector<int64_t>{5, 2});
  m = error_of<ShapeError>([&] { gru->forward_with_packed_input(packed); });
  CHECK(has(m, "GRU: packed data [7, 3]"));
  m = error_of<ValueError>([&] { R::pad_packed_sequence(packed, false, 0.0, 3); });
  CHECK(has(m, "total_length 3"));
  CHECK_THROWS_AS(nn::LSTM(nn::LSTMOptions(4, 6).proj_size(6)), ValueError);
  CHECK_THROWS_AS(nn::GRU(nn::GRUOptions(4, 6).dropout(1.5)), ValueError);
  nn::LSTMCell cell(4, 6);
  m = error_of<ShapeError>([&] { cell(randn({2, 5})); });
  CHECK(has(m, "LSTMCell: input [2, 5]"));
  m = error_of<ShapeError>([&] { cell(randn({2, 4}), std::make_tuple(zeros({2, 6}), zeros({3, 6}))); });
  CHECK(has(m, "LSTMCell: c [3, 6] must be [2, 6]"));
  m = error_of<ShapeError>([&] { rnn_layer(RnnMode::gru, randn({4, 9}), {2, 2}, randn({9, 3}), {}, zeros({3, 3})); });
  CHECK(has(m, "h0 [3, 3] must be (2, 3)"));
  m = error_of<ValueError>([&] { rnn_layer(RnnMode::gru, randn({4, 9}), {1, 3}, randn({9, 3}), {}, zeros({1, 3})); });
  CHECK(has(m, "non-increasing"));
}
