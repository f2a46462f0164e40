// nn::Transformer against torch.nn.Transformer (fixture transformer_post_norm), the KV
// cache against full recomputation, padding against unpadded runs, and a float64
// gradcheck of a tiny pre-norm GELU model.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>

using namespace ag;

namespace {

const char* kFixture = "transformer_post_norm";

// Relative to the largest reference magnitude (for gradients with near-zero entries).
double max_err(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double worst = 0, scale = 1e-30;
  for (double v : y) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst / scale;
}

nn::Transformer fixture_model(const test_util::Fixture& f, DType dtype) {
  nn::Transformer model(
      nn::TransformerOptions(8, 2).num_encoder_layers(2).num_decoder_layers(2).dim_feedforward(16).dropout(0.0));
  TensorMap params;
  for (auto& [k, t] : f)
    if (k.rfind("param.", 0) == 0) params.insert(k.substr(6), t);
  model->to(dtype);                // before loading: f64 weights must not pass through f32
  model->load_state_dict(params);  // strict: every name must match PyTorch's
  return model;
}

void run_parity(DType dtype, double tol) {
  const test_util::Fixture f = test_util::load_fixture(kFixture);
  auto model = fixture_model(f, dtype);
  Tensor src = f.at("input.src").to(dtype).requires_grad_();
  Tensor tgt = f.at("input.tgt").to(dtype).requires_grad_();
  nn::TransformerMasks m;
  m.src_padding_mask = f.at("mask.src_padding");
  m.memory_padding_mask = f.at("mask.src_padding");
  m.tgt_padding_mask = f.at("mask.tgt_padding");
  m.tgt_mask = f.at("mask.tgt_causal");
  Tensor out = model(src, tgt, m);
  CHECK(max_err(out, f.at("output")) < tol);
  sum(out * f.at("upstream").to(dtype)).backward();
  CHECK(max_err(src.grad(), f.at("grad.input.src")) < tol);
  CHECK(max_err(tgt.grad(), f.at("grad.input.tgt")) < tol);
  int checked = 0;
  for (auto& name_p : model->named_parameters()) {
    auto& name = name_p.first;
    auto& p = name_p.second;
    INFO(name);
    REQUIRE(p.grad().defined());
    CHECK(max_err(p.grad(), f.at("grad.param." + name)) < tol);
    ++checked;
  }
  int expected = 0;  // every parameter PyTorch has a gradient for
  for (auto& [k, t] : f) expected += k.rfind("grad.param.", 0) == 0;
  CHECK(checked == expected);
}

}  // namespace

TEST_CASE("Transformer matches torch.nn.Transformer in float64") { run_parity(DType::f64, 1e-9); }
TEST_CASE("Transformer matches torch.nn.Transformer in float32") { run_parity(DType::f32, 1e-4); }

TEST_CASE("incremental decoding with the KV cache equals full recomputation") {
  manual_seed(3);
  for (bool norm_first : {false, true}) {
    nn::Transformer model(nn::TransformerOptions(8, 2)
                              .num_encoder_layers(2)
                              .num_decoder_layers(2)
                              .dim_feedforward(16)
                              .dropout(0.0)
                              .norm_first(norm_first));
    model->to(DType::f64);
    model->eval();
    NoGradGuard no_grad;
    Tensor src = randn({2, 5, 8}, DType::f64), tgt = randn({2, 4, 8}, DType::f64);
    Tensor src_pad = Tensor::from_vector(std::vector<bool>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 5});
    Tensor memory = model->encode(src, {}, src_pad);
    nn::TransformerMasks m;
    m.tgt_causal = true;
    m.memory_padding_mask = src_pad;
    Tensor full = model->decode(tgt, memory, m);  // (2, 4, 8)
    nn::KVCache cache;
    for (int64_t t = 0; t < 4; ++t) {
      Tensor step = model->decoder->forward_step(tgt.narrow(1, t, 1), memory, cache, src_pad);
      CHECK(cache.length() == t + 1);
      CHECK(max_err(step, full.narrow(1, t, 1)) < 1e-12);
    }
  }
}

TEST_CASE("padded sources give the same outputs at real positions as unpadded runs") {
  manual_seed(4);
  nn::Transformer model(
      nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(16).dropout(0.0));
  model->to(DType::f64);
  NoGradGuard no_grad;
  // Two sources of lengths 5 and 3, padded to 5; targets of lengths 4 and 2, padded to 4.
  Tensor src = randn({2, 5, 8}, DType::f64), tgt = randn({2, 4, 8}, DType::f64);
  nn::TransformerMasks m;
  m.src_padding_mask = padding_mask(Tensor::from_vector(std::vector<int64_t>{5, 3}), 5);
  m.memory_padding_mask = m.src_padding_mask;
  m.tgt_padding_mask = padding_mask(Tensor::from_vector(std::vector<int64_t>{4, 2}), 4);
  m.tgt_causal = true;
  Tensor batched = model(src, tgt, m);
  const int64_t src_len[] = {5, 3}, tgt_len[] = {4, 2};
  for (int64_t b = 0; b < 2; ++b) {
    nn::TransformerMasks one;
    one.tgt_causal = true;
    Tensor alone =
        model(src.narrow(0, b, 1).narrow(1, 0, src_len[b]), tgt.narrow(0, b, 1).narrow(1, 0, tgt_len[b]), one);
    CHECK(max_err(batched.narrow(0, b, 1).narrow(1, 0, tgt_len[b]), alone) < 1e-12);
  }
}

TEST_CASE("a tiny pre-norm GELU Transformer passes float64 gradcheck") {
  manual_seed(5);
  nn::Transformer model(nn::TransformerOptions(4, 2)
                            .num_encoder_layers(1)
                            .num_decoder_layers(1)
                            .dim_feedforward(6)
                            .dropout(0.0)
                            .activation(nn::Activation::GELU)
                            .norm_first(true));
  model->to(DType::f64);
  Tensor src = randn({1, 3, 4}, DType::f64).requires_grad_();
  Tensor tgt = randn({1, 2, 4}, DType::f64).requires_grad_();
  nn::TransformerMasks m;
  m.tgt_causal = true;
  std::vector<Tensor> inputs{src, tgt};
  for (auto& [name, p] : model->named_parameters())
    if (name.find("layers.0.linear1") != std::string::npos || name.find("norm1.weight") != std::string::npos)
      inputs.push_back(p);  // a sample of parameters, from both stacks
  auto fn = [&](const std::vector<Tensor>& x) { return model(x[0], x[1], m); };
  auto r = gradcheck(fn, inputs, {.name = "Transformer(norm_first, GELU)"});
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_CASE("Transformer rejects bad shapes with every shape named") {
  nn::Transformer model(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(8));
  CHECK_THROWS_WITH_AS(model(randn({2, 5, 8}), randn({3, 4, 8})), doctest::Contains("[3, 4, 8]"), ShapeError);
  CHECK_THROWS_WITH_AS(nn::Transformer(nn::TransformerOptions(8, 3)), doctest::Contains("divisible"), ShapeError);
}

TEST_CASE("a decoder layer returns its cross-attention weights next to the same output") {
  manual_seed(6);
  nn::TransformerDecoderLayer layer(nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  layer->to(DType::f64);
  NoGradGuard no_grad;
  Tensor tgt = randn({2, 4, 8}, DType::f64), memory = randn({2, 5, 8}, DType::f64);
  nn::TransformerMasks m;
  m.tgt_causal = true;
  m.memory_padding_mask = padding_mask(Tensor::from_vector(std::vector<int64_t>{5, 3}), 5);
  auto [out, w] = layer->forward_with_cross_weights(tgt, memory, m);
  CHECK(max_err(out, layer(tgt, memory, m)) < 1e-12);
  REQUIRE(w.shape() == Shape{2, 2, 4, 5});
  CHECK(max_err(sum(w, {-1}), ones({2, 2, 4}, DType::f64)) < 1e-12);                      // each row is a distribution
  CHECK(max_err(w.select(0, 1).narrow(-1, 3, 2), zeros({2, 4, 2}, DType::f64)) < 1e-15);  // padded keys get 0
}
