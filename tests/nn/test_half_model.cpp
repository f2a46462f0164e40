// bf16 model files between PyTorch and attograd (issue 25, "Done when"):
// - nn::MultiheadAttention in bf16 against torch.nn.MultiheadAttention(batch_first=True)
//   .to(torch.bfloat16) (tests/fixtures/half_ops.safetensors, bf16.mha.*);
// - a TransformerEncoderLayer's state_dict written by PyTorch in BF16
//   (torch_bf16_encoder.safetensors, PyTorch's keys only, as checkpoints ship) loads as
//   is with nn::load into the bf16 module and matches PyTorch's bf16 forward
//   (torch_bf16_encoder_io.safetensors); nn::load into an f32 module converts the BF16
//   values to f32 (load_state_dict copies into each parameter's dtype, as PyTorch's), and
//   its forward matches PyTorch's f32 forward on the same weights;
// - the other direction: attograd writes a bf16 model file (attograd_bf16.safetensors,
//   committed; tools/check_half_file.py loads it in PyTorch and checks it).
// All made by tools/make_half_op_fixtures.py, except attograd_bf16 (this test).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "half_ulps.h"
#include "test_util.h"

using namespace ag;
using test_util::ulp_stats;

namespace {

nn::TransformerEncoderLayer encoder_layer() {
  return nn::TransformerEncoderLayer(
      nn::TransformerLayerOptions(32, 4).dim_feedforward(64).dropout(0.0).activation(nn::Activation::GELU));
}

}  // namespace

// PyTorch's MHA in bf16 runs its in_proj / out_proj linears, q / bf16(sqrt(d)), bmm,
// softmax and bmm, each "f32 then round once"; attograd's module projects with the same
// linears but runs the fused attention kernel (scores and softmax in f32, rounded once), so
// the two differ by the rounding of the scaled q, the scores and the weights, which then
// pass through out_proj. Measured: 1 ulp at the output's scale (max |out|, 0.62 here: the
// errors are absolute, so a value near 0 is off by many of its own ulps); bound 2.
TEST_CASE("half model: nn::MultiheadAttention in bf16 against torch.nn.MultiheadAttention.to(bfloat16)") {
  const test_util::Fixture f = test_util::load_fixture("half_ops");
  nn::MultiheadAttention mha(32, 4);
  mha->to(DType::bf16);
  mha->load_state_dict(f.with_prefix("bf16.mha.param."));  // strict: PyTorch's names
  NoGradGuard no_grad;
  const Tensor kv = f.at("bf16.mha.input.kv");                         // (2, 9, 32)
  const Tensor out = mha(f.at("bf16.mha.input.query"), kv, kv).first;  // (2, 6, 32)
  REQUIRE(out.dtype() == DType::bf16);
  const double scale = test_util::max_abs(f.at("bf16.mha.out"));
  const auto vs_torch = ulp_stats(out, f.at("bf16.mha.out"), DType::bf16, scale);
  const auto vs_once = ulp_stats(out, f.at("bf16.mha.once"), DType::bf16, scale);
  MESSAGE("bf16 MultiheadAttention (max |out| ", scale, "): vs torch ", vs_torch.str(),
          "; vs the f32 module rounded once ", vs_once.str());
  CHECK(vs_torch.scaled <= 2);
  CHECK(vs_once.scaled <= 2);
}

// bf16 tolerance of the whole layer: each of its ~15 ops rounds to bf16 (2^-8 relative),
// torch's layer_norm is not round-once (tests/ops/test_half_parity.cpp) and the attention
// differs as in the MHA case above; the errors add up through two residual adds and two
// LayerNorms. Measured: 2 ulps at the output's scale (max |out| 2.9: 2 * 2^-6 absolute);
// bound 4. PyTorch's own bf16 forward is as far from its f32 one (printed).
TEST_CASE("half model: a bf16 TransformerEncoderLayer file written by PyTorch loads as is and matches") {
  const std::string path = test_util::fixture_path("torch_bf16_encoder");
  const test_util::Fixture io = test_util::load_fixture("torch_bf16_encoder_io");
  const TensorMap file = load_safetensors(path);
  for (const auto& k_t : file) {
    const std::string& k = k_t.first;
    const Tensor& t = k_t.second;
    INFO(k);
    CHECK(t.dtype() == DType::bf16);  // PyTorch wrote BF16
  }
  CHECK(load_safetensors_metadata(path).at("format") == "pt");
  const Tensor src = io.at("input.src");  // (2, 7, 32) bf16

  SUBCASE("as is: bf16 module, nn::load, bf16 forward") {
    auto layer = encoder_layer();
    layer->to(DType::bf16);
    nn::load(*layer, path);  // strict: every PyTorch key, no conversion
    for (const auto& n_p : layer->named_parameters()) {
      const std::string& n = n_p.first;
      const Tensor& p = n_p.second;
      INFO(n);
      CHECK(p.dtype() == DType::bf16);
      CHECK(p.to_vector<double>() == file.at(n).to_vector<double>());  // bit for bit
    }
    layer->eval();
    NoGradGuard no_grad;
    const Tensor out = layer(src);
    REQUIRE(out.dtype() == DType::bf16);
    const double scale = test_util::max_abs(io.at("output"));
    const auto st = ulp_stats(out, io.at("output"), DType::bf16, scale);
    const double rel32 = test_util::max_abs_diff(out.to(DType::f32), io.at("output.f32"));
    const auto torch_own = ulp_stats(io.at("output"), io.at("output.f32").to(DType::bf16), DType::bf16, scale);
    MESSAGE("bf16 TransformerEncoderLayer (max |out| ", scale, "): vs torch bf16 ", st.str(),
            "; max |attograd bf16 - torch f32| ", rel32, "; torch bf16 vs its f32 rounded: ", torch_own.str());
    CHECK(st.scaled <= 4);
    CHECK(rel32 <= 4 * test_util::half_spacing(scale, DType::bf16));
  }
  SUBCASE("converted: f32 module, nn::load converts BF16 -> f32, f32 forward") {
    auto layer = encoder_layer();  // f32 parameters
    nn::load(*layer, path);        // load_state_dict copies each value into the f32 parameter
    for (const auto& n_p : layer->named_parameters()) {
      const std::string& n = n_p.first;
      const Tensor& p = n_p.second;
      INFO(n);
      CHECK(p.dtype() == DType::f32);
      CHECK(p.to_vector<double>() == file.at(n).to_vector<double>());  // widening is exact
    }
    layer->eval();
    NoGradGuard no_grad;
    const Tensor out = layer(src.to(DType::f32));
    REQUIRE(out.dtype() == DType::f32);
    const double err = test_util::max_abs_diff(out, io.at("output.f32"));
    MESSAGE("f32 TransformerEncoderLayer from the BF16 file: max |attograd - torch| ", err);
    CHECK(err < 1e-5);  // f32 against f32: summation order only
  }
}

namespace {

// A closed-form f32 tensor (no RNG, so the file below never changes with the generator):
// 0.5 * sin(0.7 * i + phase) over the row-major index i.
Tensor wave(const Shape& shape, double phase) {
  std::vector<float> v(static_cast<std::size_t>(ag::numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(0.5 * std::sin(0.7 * double(i) + phase));
  return Tensor::from_vector(v, shape);
}

// The tensors of tests/fixtures/attograd_bf16.safetensors, in the order written: the state
// dict of Sequential(Linear(16, 32), GELU(), LayerNorm(32), Linear(32, 8)) in bf16 under
// PyTorch's keys (0.weight ... 3.bias), `input` (3, 16) and attograd's bf16 forward
// `output` (3, 8), and f32 values with attograd's conversions `values.bf16` / `values.f16`
// (ties, overflow, subnormals, +-0, +-inf, NaN).
TensorMap attograd_bf16_file() {
  nn::Sequential model(nn::Linear(16, 32), nn::GELU(), nn::LayerNorm(nn::LayerNormOptions({32})), nn::Linear(32, 8));
  TensorMap f32;
  double phase = 0;
  for (auto& [n, p] : model->named_parameters()) f32.insert(n, wave(p.shape(), phase += 1));
  model->load_state_dict(f32);
  model->to(DType::bf16);
  TensorMap out = model->state_dict();
  const Tensor x = wave(Shape{3, 16}, 0.25).to(DType::bf16);
  NoGradGuard no_grad;
  out.insert("input", x);
  out.insert("output", model(x));
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor values = Tensor::from_vector(std::vector<float>{0.0f,
                                                               -0.0f,
                                                               1.0f,
                                                               -1.0f,
                                                               1.0f / 3,
                                                               1.00390625f /* 1 + 2^-8: bf16 tie to even 1 */,
                                                               1.01171875f /* 1 + 3 * 2^-8: tie up */,
                                                               1.00048828125f /* 1 + 2^-11: f16 tie */,
                                                               65504.0f,
                                                               65520.0f /* f16: inf */,
                                                               3.0e38f,
                                                               3.4028235e38f /* bf16: inf */,
                                                               1e-8f /* f16 subnormal */,
                                                               2.9802322e-8f /* 2^-25: f16 0 */,
                                                               1e-40f,
                                                               inf,
                                                               -inf,
                                                               std::numeric_limits<float>::quiet_NaN(),
                                                               -1234.5678f,
                                                               0.1f});
  out.insert("values.f32", values);
  out.insert("values.bf16", values.to(DType::bf16));
  out.insert("values.f16", values.to(DType::f16));
  return out;
}

// The bytes of t's values, row-major (NaNs compare by their bits).
std::string raw_bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), std::size_t(c.numel()) * itemsize(c.dtype()));
}

}  // namespace

// The committed tests/fixtures/attograd_bf16.safetensors is what save_safetensors writes
// today, byte for byte; tools/check_half_file.py loads it in PyTorch (json header +
// torch.frombuffer), runs the same Sequential in torch.bfloat16 and compares (README).
// To rewrite it after a deliberate change: AG_WRITE_FIXTURES=1 build/tests/test_half_model.
TEST_CASE("half model: attograd writes a bf16 model file (committed, checked in PyTorch)") {
  const TensorMap tensors = attograd_bf16_file();
  const Metadata meta = {{"format", "pt"},
                         {"writer", "attograd save_safetensors (tests/nn/test_half_model.cpp)"},
                         {"model", "Sequential(Linear(16, 32), GELU(), LayerNorm(32), Linear(32, 8)) in bf16"}};
  const std::string path = test_util::tmp_dir("half_model", "write") + "/attograd_bf16.safetensors";
  save_safetensors(path, tensors, meta);
  const std::string committed = test_util::fixtures_dir() + "/attograd_bf16.safetensors";
  if (std::getenv("AG_WRITE_FIXTURES")) {
    std::filesystem::copy_file(path, committed, std::filesystem::copy_options::overwrite_existing);
    MESSAGE("wrote ", committed);
  }
  // The header (names, dtypes, shapes, offsets, metadata) and every tensor but `output`
  // byte for byte; `output` within 1 ulp at its scale, so that another bf16 GEMM engine
  // (a tie rounded the other way) does not stale the file (rewrite it when it moves).
  const std::string now = test_util::read_bytes(path), was = test_util::read_bytes(committed);
  const std::string hint =
      " differs from what attograd writes now: AG_WRITE_FIXTURES=1 build/tests/test_half_model, "
      "then tools/check_half_file.py";
  REQUIRE_MESSAGE(was.size() == now.size(), committed, hint);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(now[std::size_t(i)]);
  CHECK_MESSAGE(was.substr(0, 8 + header_len) == now.substr(0, 8 + header_len), committed, hint);
  const TensorMap back = load_safetensors(committed);
  for (const auto& k_t : tensors) {
    const std::string& k = k_t.first;
    const Tensor& t = k_t.second;
    INFO(k);
    REQUIRE(back.contains(k));
    CHECK(back.at(k).dtype() == t.dtype());
    if (k == "output")
      CHECK(ulp_stats(back.at(k), t, DType::bf16, test_util::max_abs(t)).scaled <= 1);
    else
      CHECK_MESSAGE(raw_bytes(back.at(k)) == raw_bytes(t), committed, hint);
  }
  CHECK(back.at("0.weight").dtype() == DType::bf16);
  CHECK(back.at("values.f16").dtype() == DType::f16);
}
