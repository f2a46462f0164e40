// safetensors and the PyTorch fixtures of tests/fixtures (see its README.md): every file
// loads with the described shapes, errors say how to regenerate, load -> save -> load.
// Part of test_safetensors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../safetensors_test_util.h"
#include "test_util.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;

using test_util::read_bytes;
using test_util::write_bytes;
using namespace safetensors_test;

// ---- PyTorch fixtures (tests/fixtures, see its README.md) ---------------------------

TEST_CASE("every fixture loads with the shapes the README describes") {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(test_util::fixtures_dir())) {
    if (entry.path().extension() != ".safetensors") continue;
    ++files;
    CAPTURE(entry.path().string());
    const std::string stem = entry.path().stem().string();
    test_util::Fixture f;
    REQUIRE_NOTHROW(f = test_util::load_fixture(stem));
    CHECK(f.tensors.size() > 0);
    // masked_softmax is the one fixture written without __metadata__.
    if (stem != "masked_softmax") CHECK_FALSE(f.metadata.empty());
    // The op-semantics fixtures (ops_*, double_backward) hold I64 indices and BOOL results
    // under other names; their README lists every key and dtype.
    if (stem.rfind("ops_", 0) == 0 || stem == "double_backward") continue;
    // cnn_ops / cnn_modules (tools/fixtures/cnn.py) hold I64 pooling indices and targets
    // and BF16 lines beside the f64 cases; test_cnn_parity checks each dtype it reads.
    if (stem.rfind("cnn_", 0) == 0) continue;
    // rnn_modules (tools/fixtures/rnn.py) holds I64 lengths, batch sizes and sorting
    // indices beside its f64 tensors; test_rnn_parity compares them exactly.
    if (stem == "rnn_modules") continue;
    // lbfgs (tools/fixtures/lbfgs.py) holds I64 labels and PyTorch's I64 step counters
    // (func_evals, n_iter); test_lbfgs compares them exactly.
    if (stem == "lbfgs") continue;
    // The half fixtures hold BF16 / F16 / F32 tensors: half_conversion
    // (tools/make_half_fixtures.py), half_ops and the torch_bf16_encoder pair
    // (tools/make_half_op_fixtures.py), attograd_bf16 (written by tests/nn/test_half_model.cpp).
    if (stem == "half_conversion" || stem == "half_ops" || stem.rfind("torch_bf16_encoder", 0) == 0 ||
        stem == "attograd_bf16")
      continue;
    for (const auto& name_t : f.tensors) {  // bool masks, float64 everything else but tokens
      const auto& name = name_t.first;
      const auto& t = name_t.second;
      CAPTURE(name);
      const bool is_mask = name.rfind("mask.", 0) == 0 && name != "mask.attn_additive";
      const bool is_index = name == "input.tokens" || name == "input.targets";
      CHECK(t.dtype() == (is_mask ? ag::DType::b8 : is_index ? ag::DType::i64 : ag::DType::f64));
    }
  }
  // 7 model fixtures, 7 op-semantics ones, gqa, the 3 LLaMA blocks, torch_masks,
  // torch_indexing, nanogpt_port, half_conversion, half_ops, torch_bf16_encoder(_io),
  // attograd_bf16, cnn_ops, cnn_modules, rnn_modules, lr_schedulers, lbfgs
  // (tests/fixtures/README.md)
  CHECK(files == 31);

  struct Expect {
    const char* file;
    const char* key;
    Shape shape;
  };
  const Expect expects[] = {
      {"mha_worked_example", "input.x", {1, 2, 4}},
      {"mha_worked_example", "w_q", {4, 4}},
      {"mha_worked_example", "attn_weights", {1, 2, 2, 2}},  // (B, h, L, S)
      {"mha_worked_example", "output", {1, 2, 4}},
      {"masked_softmax", "input.scores", {3, 3}},
      {"masked_softmax", "mask.causal", {3, 3}},
      {"masked_softmax", "output.both", {3, 3}},
      {"mha_self_causal", "param.in_proj_weight", {24, 8}},  // (3E, E)
      {"mha_self_causal", "param.in_proj_bias", {24}},
      {"mha_self_causal", "attn_weights", {2, 2, 5, 5}},
      {"mha_self_causal", "mask.attn", {5, 5}},
      {"mha_cross_kdim_vdim", "param.k_proj_weight", {8, 5}},  // (E, kdim)
      {"mha_cross_kdim_vdim", "param.v_proj_weight", {8, 7}},  // (E, vdim)
      {"mha_cross_kdim_vdim", "input.key", {3, 6, 5}},
      {"mha_cross_kdim_vdim", "attn_weights", {3, 4, 4, 6}},
      {"mha_additive_nobias", "mask.attn_additive", {3, 4}},
      {"mha_additive_nobias", "param.in_proj_weight", {18, 6}},
      {"transformer_post_norm", "param.encoder.layers.0.linear1.weight", {16, 8}},
      {"transformer_post_norm", "param.decoder.layers.1.multihead_attn.in_proj_weight", {24, 8}},
      {"transformer_post_norm", "mask.tgt_causal", {4, 4}},
      {"transformer_post_norm", "output", {2, 4, 8}},
      {"layers_and_loss", "param.embedding.weight", {11, 6}},
      {"layers_and_loss", "input.tokens", {3, 4}},
      {"layers_and_loss", "logits", {3, 4, 5}},
  };
  for (const Expect& e : expects) {
    const std::string where = std::string(e.file) + ": " + e.key;
    INFO(where);
    const test_util::Fixture m = test_util::load_fixture(e.file);
    REQUIRE(m.contains(e.key));
    CHECK(m.at(e.key).shape() == e.shape);
  }

  const std::string dir = test_util::fixtures_dir();
  ag::TensorMap ms = ag::load_safetensors(test_util::fixture_path("masked_softmax"));
  CHECK(ms.size() == 7);
  CHECK(names(ms).front() == "input.scores");  // offset order
  CHECK(ms.at("input.scores").to_vector<double>() == std::vector<double>{7, -8, 6, -3, 2, 4, 1, 6, -2});
  CHECK(ms.at("mask.causal").to_vector<bool>() ==
        std::vector<bool>{true, false, false, true, true, false, true, true, true});
  ag::Metadata meta = ag::load_safetensors_metadata(test_util::fixture_path("mha_worked_example"));
  CHECK(meta.at("d_model") == "4");
  CHECK(meta.at("num_heads") == "2");
  ag::TensorMap ll = ag::load_safetensors(test_util::fixture_path("layers_and_loss"));
  CHECK(ll.at("input.tokens").to_vector<int64_t>() == std::vector<int64_t>{1, 8, 2, 0, 3, 6, 5, 0, 1, 10, 9, 6});
  CHECK(ll.at("loss").item<double>() == doctest::Approx(2.6115574701685254).epsilon(1e-15));
}

TEST_CASE("a missing or damaged fixture, or a missing key, fails with a message saying what and how to fix it") {
  using test_util::FixtureError;
  const std::string dir = tmp_dir("fixture_errors");
  // Missing file: the message names the path and the regeneration command.
  CHECK_THROWS_AS(test_util::load_fixture("no_such_fixture"), FixtureError);
  CHECK_THROWS_WITH(test_util::load_fixture("no_such_fixture", dir),
                    doctest::Contains((dir + "/no_such_fixture.safetensors does not exist").c_str()));
  CHECK_THROWS_WITH(test_util::fixture_path("no_such_fixture", dir), doctest::Contains("tools/make_fixtures.py"));

  // Damaged file (truncated inside the data): FixtureError carrying the loader's reason.
  const std::string good = read_bytes(test_util::fixture_path("masked_softmax"));
  write_bytes(dir + "/cut.safetensors", good.substr(0, good.size() - 3));
  CHECK_THROWS_WITH_AS(test_util::load_fixture("cut", dir), doctest::Contains("cut.safetensors is damaged"),
                       FixtureError);
  write_bytes(dir + "/empty.safetensors", "");
  CHECK_THROWS_AS(test_util::load_fixture("empty", dir), FixtureError);

  // Missing key or metadata entry: the message names both the key and the file.
  const test_util::Fixture f = test_util::load_fixture("masked_softmax");
  CHECK(f.at("input.scores").shape() == Shape{3, 3});
  const std::string e = test_util::error_of<FixtureError>([&] { (void)f.at("output.nothing"); });
  CHECK(test_util::contains(e, "'output.nothing'"));
  CHECK(test_util::contains(e, "masked_softmax.safetensors"));
  CHECK_THROWS_WITH_AS((void)f.meta("d_model"), doctest::Contains("no metadata entry 'd_model'"), FixtureError);
}

TEST_CASE("a fixture survives load -> save -> load unchanged") {
  const std::string src = test_util::fixture_path("mha_self_causal");
  const std::string path = tmp_dir("resave") + "/r.safetensors";
  ag::SafetensorsFile a = ag::read_safetensors(src);
  ag::save_safetensors(path, a.tensors, a.metadata);
  ag::SafetensorsFile b = ag::read_safetensors(path);
  CHECK(b.metadata == a.metadata);
  CHECK(names(b.tensors) == names(a.tensors));
  // Same tensors in the same order: the data buffers are byte-identical.
  CHECK(data_buffer(read_bytes(src)) == data_buffer(read_bytes(path)));
}
