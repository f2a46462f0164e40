// nn::Transformer against torch.nn.Transformer (fixture transformer_post_norm), the KV
// cache against full recomputation, padding against unpadded runs, and a float64
// gradcheck of a tiny pre-norm GELU model.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "tensor_checks.h"
#include "test_util.h"

#include <sstream>

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

nn::Transformer fixture_model(const test_util::Fixture& f, DType dtype, bool batch_first = true) {
  nn::Transformer model(nn::TransformerOptions(8, 2)
                            .num_encoder_layers(2)
                            .num_decoder_layers(2)
                            .dim_feedforward(16)
                            .dropout(0.0)
                            .batch_first(batch_first));
  TensorMap params;
  for (auto& [k, t] : f)
    if (k.rfind("param.", 0) == 0) params.insert(k.substr(6), t);
  model->to(dtype);                // before loading: f64 weights must not pass through f32
  model->load_state_dict(params);  // strict: every name must match PyTorch's
  return model;
}

// seq_first: batch_first(false), PyTorch's default: src, tgt, output and their gradients
// are the fixture's transposed to (len, B, E); masks keep their shapes.
void run_parity(DType dtype, double tol, bool seq_first = false) {
  const test_util::Fixture f = test_util::load_fixture(kFixture);
  auto model = fixture_model(f, dtype, !seq_first);
  auto layout = [&](const Tensor& x) { return seq_first ? x.transpose(0, 1) : x; };
  Tensor src = layout(f.at("input.src")).to(dtype).contiguous().requires_grad_();
  Tensor tgt = layout(f.at("input.tgt")).to(dtype).contiguous().requires_grad_();
  // torch.nn.Transformer's call, its masks (true = not allowed / padding); the fixture
  // stores keep masks (true = allowed / real token).
  const Tensor src_kpm = logical_not(f.at("mask.src_padding")), tgt_kpm = logical_not(f.at("mask.tgt_padding"));
  Tensor out = model->forward(src, tgt, {}, logical_not(f.at("mask.tgt_causal")), {}, src_kpm, tgt_kpm, src_kpm);
  CHECK(max_err(layout(out), f.at("output")) < tol);
  sum(out * layout(f.at("upstream")).to(dtype)).backward();
  CHECK(max_err(layout(src.grad()), f.at("grad.input.src")) < tol);
  CHECK(max_err(layout(tgt.grad()), f.at("grad.input.tgt")) < tol);
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
TEST_CASE("Transformer with batch_first(false) matches torch.nn.Transformer's sequence-first default") {
  run_parity(DType::f64, 1e-9, true);
  run_parity(DType::f32, 1e-4, true);
}

TEST_CASE("sequence-first layers, stacks and cached decoding equal the batch-first ones") {
  manual_seed(5);
  auto opts = nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0);
  nn::TransformerEncoderLayer enc_bf(opts), enc_sf(nn::TransformerLayerOptions(opts).batch_first(false));
  nn::TransformerDecoder dec_bf(opts, 2), dec_sf(nn::TransformerLayerOptions(opts).batch_first(false), 2);
  enc_sf->load_state_dict(enc_bf->state_dict());
  dec_sf->load_state_dict(dec_bf->state_dict());
  Tensor src = randn({2, 5, 8}), tgt = randn({2, 4, 8});
  Tensor pad = Tensor::from_vector(std::vector<bool>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {2, 5});  // true = padding
  Tensor memory = enc_bf->forward(src, {}, pad);
  Tensor memory_sf = enc_sf->forward(src.transpose(0, 1), {}, pad);  // (S, B, E)
  CHECK(memory_sf.shape() == Shape{5, 2, 8});
  CHECK(max_err(memory_sf.transpose(0, 1), memory) < 1e-6);
  nn::TransformerMasks m;
  m.tgt_causal = true;
  m.memory_key_padding_mask = pad;
  Tensor full = dec_bf(tgt, memory, m);
  Tensor full_sf = dec_sf(tgt.transpose(0, 1), memory.transpose(0, 1), m);
  CHECK(max_err(full_sf.transpose(0, 1), full) < 1e-6);
  NoGradGuard no_grad;
  nn::KVCache cache;
  for (int64_t t = 0; t < 4; ++t) {  // one position (1, B, E) at a time
    Tensor step =
        dec_sf->forward_step(tgt.transpose(0, 1).narrow(0, t, 1), memory.transpose(0, 1), cache, logical_not(pad));
    CHECK(step.shape() == Shape{1, 2, 8});
    CHECK(max_err(step.transpose(0, 1), full.narrow(1, t, 1)) < 1e-5);
  }
  CHECK_THROWS_MSG(dec_sf->forward_step(tgt.narrow(1, 0, 1), memory.transpose(0, 1), cache), ShapeError,
                   "expected one position (1, B, E), got [2, 1, 8]");
  std::ostringstream os;
  nn::Transformer printed(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).batch_first(false));
  os << printed;
  CHECK(test_util::contains(os.str(), "batch_first=false"));
}

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
    m.memory_keep_mask = src_pad;
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
  m.src_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{5, 3}), 5);
  m.memory_keep_mask = m.src_keep_mask;
  m.tgt_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{4, 2}), 4);
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
  nn::Transformer sf(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).batch_first(false));
  CHECK_THROWS_MSG(sf(randn({5, 2, 8}), randn({4, 3, 8})), ShapeError,
                   "Transformer: src [5, 2, 8] and tgt [4, 3, 8] must be (S, B, 8) and (T, B, 8)");
}

TEST_CASE("a decoder layer returns its cross-attention weights next to the same output") {
  manual_seed(6);
  nn::TransformerDecoderLayer layer(nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  layer->to(DType::f64);
  NoGradGuard no_grad;
  Tensor tgt = randn({2, 4, 8}, DType::f64), memory = randn({2, 5, 8}, DType::f64);
  nn::TransformerMasks m;
  m.tgt_causal = true;
  m.memory_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{5, 3}), 5);
  auto [out, w] = layer->forward_with_cross_weights(tgt, memory, m);
  CHECK(max_err(out, layer(tgt, memory, m)) < 1e-12);
  REQUIRE(w.shape() == Shape{2, 2, 4, 5});
  CHECK(max_err(sum(w, {-1}), ones({2, 2, 4}, DType::f64)) < 1e-12);                      // each row is a distribution
  CHECK(max_err(w.select(0, 1).narrow(-1, 3, 2), zeros({2, 4, 2}, DType::f64)) < 1e-15);  // padded keys get 0
}

// ---- torch_masks (tools/make_mask_fixtures.py): PyTorch's own masks, bool and float, under
// PyTorch's names, through the calls a port writes; float64, 1e-8 ----
namespace {

template <class Holder>
void load_torch(Holder& m, const test_util::Fixture& f, const std::string& prefix) {
  m->to(DType::f64);
  m->load_state_dict(f.with_prefix(prefix));  // strict: PyTorch's names, every one
}

}  // namespace

TEST_CASE("PyTorch's masks under PyTorch's names match torch (MHA, every Transformer layer, the model)") {
  const test_util::Fixture f = test_util::load_fixture("torch_masks");
  const Tensor src = f.at("input.src"), tgt = f.at("input.tgt"), memory = f.at("input.memory");
  const Tensor causal_s = f.at("mask.causal_s"), causal_t = f.at("mask.causal_t");              // triu(ones, 1).bool()
  const Tensor src_kpm = f.at("mask.src_key_padding"), tgt_kpm = f.at("mask.tgt_key_padding");  // true = pad
  const Tensor float_s = f.at("float_mask.src"), memory_mask = f.at("mask.memory");
  const auto layer_opts = nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0);
  SUBCASE("MultiheadAttention: forward(q, k, v, {key_padding_mask, need_weights, attn_mask})") {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    load_torch(mha, f, "mha.param.");
    for (const char* kind : {"bool", "float"}) {
      INFO(kind);
      nn::AttentionArgs args;
      args.key_padding_mask = src_kpm;
      args.need_weights = true;
      args.attn_mask = std::string(kind) == "bool" ? causal_s : float_s;
      auto r = mha(src, src, src, args);
      CHECK(max_err(r.first, f.at(std::string("mha.output.") + kind)) < 1e-8);
      CHECK(max_err(r.second, f.at(std::string("mha.weights.") + kind)) < 1e-8);
    }
  }
  SUBCASE("TransformerEncoderLayer: forward(src, src_mask, src_key_padding_mask)") {
    nn::TransformerEncoderLayer layer(layer_opts);
    load_torch(layer, f, "enc.param.");
    CHECK(max_err(layer(src, causal_s, src_kpm), f.at("enc.output.bool")) < 1e-8);
    CHECK(max_err(layer(src, float_s, src_kpm), f.at("enc.output.float")) < 1e-8);
  }
  SUBCASE("TransformerDecoderLayer: forward(tgt, memory, tgt_mask, memory_mask, tgt_kpm, memory_kpm)") {
    nn::TransformerDecoderLayer layer(nn::TransformerLayerOptions(layer_opts).norm_first(true));
    load_torch(layer, f, "dec.param.");
    CHECK(max_err(layer(tgt, memory, causal_t, memory_mask, tgt_kpm, src_kpm), f.at("dec.output")) < 1e-8);
    nn::TransformerMasks m;  // the same through the struct
    m.tgt_mask = causal_t;
    m.memory_mask = memory_mask;
    m.tgt_key_padding_mask = tgt_kpm;
    m.memory_key_padding_mask = src_kpm;
    CHECK(max_err(layer(tgt, memory, m), f.at("dec.output")) < 1e-8);
    m.tgt_mask = Tensor{};  // tgt_causal instead of the mask
    m.tgt_causal = true;
    CHECK(max_err(layer(tgt, memory, m), f.at("dec.output")) < 1e-8);
  }
  SUBCASE("Transformer: forward(src, tgt, src_mask, tgt_mask, memory_mask, src/tgt/memory_key_padding_mask)") {
    nn::Transformer model(
        nn::TransformerOptions(8, 2).num_encoder_layers(2).num_decoder_layers(2).dim_feedforward(16).dropout(0.0));
    load_torch(model, f, "tf.param.");
    CHECK(max_err(model(src, tgt, causal_s, causal_t, memory_mask, src_kpm, tgt_kpm, src_kpm), f.at("tf.output.bool")) <
          1e-8);
    const Tensor square = nn::TransformerImpl::generate_square_subsequent_mask(4, DType::f64);
    {  // without a dtype: the default dtype, as PyTorch's (it was always f32)
      set_default_dtype(DType::f64);
      CHECK(nn::TransformerImpl::generate_square_subsequent_mask(3).dtype() == DType::f64);
      set_default_dtype(DType::f32);
      CHECK(nn::TransformerImpl::generate_square_subsequent_mask(3).dtype() == DType::f32);
    }
    CHECK(max_err(where(isinf(square), 1.0, square),
                  where(isinf(f.at("float_mask.square_t")), 1.0, f.at("float_mask.square_t"))) == 0);
    CHECK(all(eq(isinf(square), f.at("mask.causal_t"))).item<bool>());
    CHECK(max_err(model->forward(src, tgt, float_s, square, {}, src_kpm, tgt_kpm, src_kpm), f.at("tf.output.float")) <
          1e-8);
    // attograd's keep masks (true = real token) in TransformerMasks give the same.
    nn::TransformerMasks m;
    m.src_mask = causal_s;
    m.tgt_mask = causal_t;
    m.memory_mask = memory_mask;
    m.src_keep_mask = logical_not(src_kpm);
    m.tgt_keep_mask = logical_not(tgt_kpm);
    m.memory_keep_mask = logical_not(src_kpm);
    CHECK(max_err(model(src, tgt, m), f.at("tf.output.bool")) < 1e-8);
    m.src_key_padding_mask = src_kpm;  // both spellings of one mask: an error, not a guess
    CHECK_THROWS_AS(model(src, tgt, m), ValueError);
  }
}
