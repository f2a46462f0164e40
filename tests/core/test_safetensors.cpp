// safetensors: round trips, the PyTorch fixtures, hostile files, atomic writes.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;
using ag::Tensor;

using test_util::read_bytes;
using test_util::write_bytes;

namespace {

std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("safetensors", name); }

std::string u64_le(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((n >> (8 * i)) & 0xff);
  return s;
}

// A file from a header text and a data buffer, with a correct header length.
std::string st_file(const std::string& header, const std::string& data) {
  return u64_le(header.size()) + header + data;
}

// The message of the IOError that loading `path` throws ("" if it loads).
std::string load_error(const std::string& path) {
  try {
    ag::load_safetensors(path);
  } catch (const ag::IOError& e) { return e.what(); }
  return "";
}

uint64_t header_length(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(file[size_t(i)]);
  return n;
}

std::string data_buffer(const std::string& file) { return file.substr(8 + header_length(file)); }

std::vector<std::string> names(const ag::TensorMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

// Turns the fault hook off even when a CHECK fails midway.
struct FaultGuard {
  explicit FaultGuard(int64_t n) { ag::testing::set_save_fault_after_bytes(n); }
  ~FaultGuard() { ag::testing::set_save_fault_after_bytes(-1); }
};

}  // namespace

// ---- TensorMap -----------------------------------------------------------------

TEST_CASE("TensorMap keeps insertion order and replaces in place") {
  ag::TensorMap m;
  m.insert("b", Tensor::from_vector(std::vector<float>{1}));
  m.insert("a", Tensor::from_vector(std::vector<float>{2}));
  m.insert("b", Tensor::from_vector(std::vector<float>{3}));
  CHECK(m.size() == 2);
  CHECK(names(m) == std::vector<std::string>{"b", "a"});
  CHECK(m.contains("a"));
  CHECK_FALSE(m.contains("c"));
  CHECK(m.at("b").to_vector<float>() == std::vector<float>{3});
  CHECK_THROWS_WITH_AS(m.at("x"), "TensorMap: no tensor named 'x'", ag::IndexError);
}

TEST_CASE("TensorMap: many keys, replacements keep their place, lookups find each") {
  // Loading went through a linear scan per insert (quadratic in the tensors of a file);
  // the index must keep the same order and replace semantics.
  ag::TensorMap m;
  const int n = 20000;
  for (int i = 0; i < n; ++i) m.insert("t" + std::to_string(i), Tensor::from_vector(std::vector<float>{float(i)}));
  for (int i = 0; i < n; i += 7) m.insert("t" + std::to_string(i), Tensor::from_vector(std::vector<float>{-1.f}));
  REQUIRE(m.size() == std::size_t(n));
  int k = 0;
  for (const auto& kv : m) {  // no structured binding: clang 14 cannot capture one in a check
    const std::string& name = kv.first;
    const Tensor& t = kv.second;
    CHECK_MESSAGE(name == "t" + std::to_string(k), name);
    const float want = k % 7 == 0 ? -1.f : float(k);
    if (t.item<float>() != want) CHECK_MESSAGE(false, name, " holds ", t.item<float>());
    ++k;
  }
  CHECK(m.at("t19998").item<float>() == 19998.f);  // 19998 % 7 != 0
  CHECK(m.at("t19999").item<float>() == -1.f);     // 19999 = 7 * 2857: replaced
  CHECK(m.contains("t0"));
  CHECK_FALSE(m.contains("t20000"));
}

TEST_CASE("a file of many tensors loads in file order, and a duplicate name among them is refused") {
  // The header parse used nlohmann's callback parser, which rescans the object at every
  // object's end: quadratic in the tensors (a 10 MB header took minutes). Correctness of
  // the replacement here; its speed is measured outside the tests.
  ag::TensorMap m;
  const int n = 5000;
  for (int i = 0; i < n; ++i)
    m.insert("layer." + std::to_string(n - i), Tensor::from_vector(std::vector<float>{float(i)}));
  const std::string path = tmp_dir("many") + "/many.safetensors";
  ag::save_safetensors(path, m);
  ag::TensorMap back = ag::load_safetensors(path);
  REQUIRE(back.size() == std::size_t(n));
  CHECK(names(back) == names(m));  // file order, not the header's sorted key order
  CHECK(back.at("layer.1").item<float>() == float(n - 1));
}

// ---- round trips ---------------------------------------------------------------

TEST_CASE("save/load round trips every dtype, scalars, empty and non-contiguous tensors") {
  const std::string path = tmp_dir("roundtrip") + "/t.safetensors";
  Tensor base = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor transposed = base.transpose(0, 1);  // (3, 2) view, not contiguous
  REQUIRE_FALSE(transposed.is_contiguous());

  ag::TensorMap m;
  m.insert("z.f32", Tensor::from_vector(std::vector<float>{1.5f, -2.f, 3.25f, 1e-30f, -0.f, 7.f}, {2, 3}));
  m.insert("f64", Tensor::from_vector(std::vector<double>{3.141592653589793, -1e300, 0.1}, {3}));
  m.insert("i32", Tensor::from_vector(std::vector<int32_t>{INT32_MIN, -1, 0, INT32_MAX}, {2, 2}));
  m.insert("i64.scalar", Tensor::from_vector(std::vector<int64_t>{INT64_MIN + 7}, Shape{}));
  m.insert("b8", Tensor::from_vector(std::vector<bool>{true, false, false, true, true, false}, {3, 2}));
  m.insert("empty", Tensor::from_vector(std::vector<float>{}, {0, 3}));
  m.insert("transposed", transposed);
  const ag::Metadata meta{{"format", "pt"}, {"note", "ünïcödé, \"quotes\" and \n newlines"}};
  ag::save_safetensors(path, m, meta);

  ag::SafetensorsFile f = ag::read_safetensors(path);
  CHECK(f.metadata == meta);
  CHECK(ag::load_safetensors_metadata(path) == meta);
  // Map order is file order is load order (not name order: "z.f32" comes first).
  CHECK(names(f.tensors) == names(m));

  for (const auto& name_orig : m) {
    const auto& name = name_orig.first;
    const auto& orig = name_orig.second;
    CAPTURE(name);
    const Tensor& t = f.tensors.at(name);
    CHECK(t.shape() == orig.shape());
    CHECK(t.dtype() == orig.dtype());
    CHECK(t.is_contiguous());
    CHECK_FALSE(t.shares_storage(orig));
  }
  const auto& t = f.tensors;
  CHECK(t.at("z.f32").to_vector<float>() == m.at("z.f32").to_vector<float>());
  CHECK(t.at("f64").to_vector<double>() == m.at("f64").to_vector<double>());
  CHECK(t.at("i32").to_vector<int32_t>() == m.at("i32").to_vector<int32_t>());
  CHECK(t.at("i64.scalar").dim() == 0);
  CHECK(t.at("i64.scalar").item<int64_t>() == INT64_MIN + 7);
  CHECK(t.at("b8").to_vector<bool>() == m.at("b8").to_vector<bool>());
  CHECK(t.at("empty").numel() == 0);
  CHECK(t.at("transposed").to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(ag::allclose(t.at("transposed"), transposed));
}

TEST_CASE("the header is space-padded so the data starts 8-byte aligned") {
  const std::string dir = tmp_dir("align");
  for (int len = 1; len <= 9; ++len) {  // name lengths shift the header length through all residues
    const std::string path = dir + "/a.safetensors";
    ag::TensorMap m;
    m.insert(std::string(size_t(len), 'k'), Tensor::from_vector(std::vector<double>{1, 2}));
    ag::save_safetensors(path, m);
    const std::string bytes = read_bytes(path);
    REQUIRE(bytes.size() >= 8);
    const uint64_t n = header_length(bytes);
    CAPTURE(len);
    CHECK((8 + n) % 8 == 0);
    CHECK(bytes.size() == 8 + n + 16);
    CHECK(bytes[8] == '{');
    CHECK(bytes.find("__metadata__") == std::string::npos);  // no metadata, no key
    CHECK(ag::load_safetensors(path).at(std::string(size_t(len), 'k')).to_vector<double>() ==
          std::vector<double>{1, 2});
  }
}

TEST_CASE("an empty map round trips") {
  const std::string path = tmp_dir("empty_map") + "/e.safetensors";
  ag::save_safetensors(path, ag::TensorMap{});
  CHECK(ag::load_safetensors(path).size() == 0);
  CHECK(ag::load_safetensors_metadata(path).empty());
}

TEST_CASE("save rejects bad names and undefined tensors, and leaves no file") {
  const std::string dir = tmp_dir("bad_save");
  const std::string path = dir + "/x.safetensors";
  Tensor one = Tensor::from_vector(std::vector<float>{1});

  ag::TensorMap undefined;
  undefined.insert("ok", one);
  undefined.insert("layer.weight", Tensor{});
  CHECK_THROWS_WITH_AS(ag::save_safetensors(path, undefined), doctest::Contains("'layer.weight' is undefined"),
                       ag::ValueError);
  ag::TensorMap reserved;
  reserved.insert("__metadata__", one);
  CHECK_THROWS_WITH_AS(ag::save_safetensors(path, reserved), doctest::Contains("__metadata__"), ag::ValueError);
  ag::TensorMap unnamed;
  unnamed.insert("", one);
  CHECK_THROWS_WITH_AS(ag::save_safetensors(path, unnamed), doctest::Contains("non-empty"), ag::ValueError);
  CHECK(fs::is_empty(dir));

  ag::TensorMap fine;
  fine.insert("a", one);
  CHECK_THROWS_WITH_AS(ag::save_safetensors(dir + "/no/such/dir/x.safetensors", fine),
                       doctest::Contains("save_safetensors: "), ag::IOError);
}

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
  // attograd_bf16 (tests/fixtures/README.md)
  CHECK(files == 26);

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

// ---- hostile files -------------------------------------------------------------

TEST_CASE("a file truncated anywhere throws IOError") {
  const std::string good = read_bytes(test_util::fixture_path("masked_softmax"));
  const std::string path = tmp_dir("truncated") + "/t.safetensors";
  const uint64_t n = header_length(good);
  REQUIRE(8 + n < good.size());

  std::vector<size_t> cuts;
  for (size_t cut = 0; cut <= 8 + n; ++cut) cuts.push_back(cut);  // every byte of the header
  for (size_t cut : {size_t(8 + n + 1), size_t(8 + n + 72), size_t(8 + n + 80), good.size() - 1}) cuts.push_back(cut);
  for (size_t cut : cuts) {
    CAPTURE(cut);
    write_bytes(path, good.substr(0, cut));
    CHECK_THROWS_AS(ag::load_safetensors(path), ag::IOError);
  }

  write_bytes(path, good.substr(0, 5));
  CHECK(load_error(path) == "load_safetensors: " + path + ": file is 5 bytes, shorter than the 8-byte header length");
  write_bytes(path, good.substr(0, 100));
  CHECK(load_error(path).find("header length " + std::to_string(n) +
                              " is larger than the rest of the file (92 bytes)") != std::string::npos);
  write_bytes(path, good.substr(0, 8 + n));
  CHECK(load_error(path).find("beyond the data buffer (0 bytes)") != std::string::npos);
  write_bytes(path, good.substr(0, good.size() - 1));
  CHECK(load_error(path).find("'output.padding'") != std::string::npos);
}

TEST_CASE("corrupt headers throw IOError saying what is wrong") {
  const std::string path = tmp_dir("corrupt") + "/c.safetensors";
  const std::string f32x2 = std::string(8, '\0');  // two F32 zeros
  auto tensor = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"w":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
  };
  struct Case {
    const char* what;
    std::string bytes;
    const char* message;  // a substring of the error
  };
  const Case cases[] = {
      {"garbage JSON", st_file("{not json", ""), "header is not valid JSON"},
      {"non-UTF-8 JSON", st_file("{\"\xff\":1}", ""), "header is not valid JSON"},
      {"not an object", st_file("[1, 2]", ""), "header must be a JSON object, got a JSON array"},
      {"entry not an object", st_file(R"({"w": 3})", ""), "'w': expected an object"},
      {"missing shape", st_file(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", f32x2), "'w': missing \"shape\""},
      {"unknown dtype", st_file(tensor("F8_E4M3", "[2]", "[0,2]"), "ab"), "unsupported dtype 'F8_E4M3'"},
      {"dtype not a string", st_file(R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", f32x2),
       "'w': dtype must be a string, got 4"},
      {"negative dim", st_file(tensor("F32", "[-2]", "[0,8]"), f32x2),
       "shape dim 0 must be a non-negative integer, got -2"},
      {"float dim", st_file(tensor("F32", "[2.0]", "[0,8]"), f32x2), "shape dim 0 must be a non-negative integer"},
      {"shape not an array", st_file(tensor("F32", "\"2\"", "[0,8]"), f32x2), "shape must be an array"},
      {"nine dims", st_file(tensor("F32", "[1,1,1,1,1,1,1,1,2]", "[0,8]"), f32x2), "at most 8"},
      {"dims overflow", st_file(tensor("F32", "[0,4611686018427387904,4611686018427387904]", "[0,0]"), ""),
       "too large"},
      {"offsets reversed", st_file(tensor("F32", "[2]", "[8,0]"), f32x2), "begin > end"},
      {"offsets not a pair", st_file(tensor("F32", "[2]", "[0,8,9]"), f32x2), "data_offsets must be [begin, end]"},
      {"offsets beyond end", st_file(tensor("F32", "[2]", "[0,800]"), f32x2), "beyond the data buffer (8 bytes)"},
      {"offsets of 2^64-1", st_file(tensor("F32", "[2]", "[0,18446744073709551615]"), f32x2), "beyond the data buffer"},
      {"size mismatch", st_file(tensor("F32", "[3]", "[0,8]"), f32x2), "needs 12 bytes but data_offsets [0, 8] hold 8"},
      {"trailing bytes", st_file(tensor("F32", "[2]", "[0,8]"), f32x2 + "xx"), "the data buffer has 10 bytes"},
      {"hole", st_file(tensor("F32", "[1]", "[4,8]"), f32x2), "leaving a hole"},
      {"overlap",
       st_file(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           f32x2),
       "overlaps tensor 'a'"},
      {"duplicate name",
       st_file(
           R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           f32x2),
       "'w' twice"},
      {"bool byte 2", st_file(tensor("BOOL", "[2]", "[0,2]"), std::string("\x01\x02", 2)), "not 0 or 1"},
      {"metadata value not a string", st_file(R"({"__metadata__":{"a":1}})", ""), "__metadata__ value for 'a'"},
      {"metadata not an object", st_file(R"({"__metadata__":[1]})", ""), "__metadata__ must be an object"},
      {"header length 2^60", u64_le(uint64_t{1} << 60) + "{}", "exceeds the 100 MB limit"},
      {"header length 100 MB + 1", u64_le((uint64_t{100} << 20) + 1) + "{}", "exceeds the 100 MB limit"},
      {"header length past the file", u64_le(1000) + "{}", "header length 1000 is larger than the rest of the file"},
      {"empty header", u64_le(0), "header is not valid JSON"},
      {"deeply nested JSON", st_file(R"({"w":)" + std::string(100000, '[') + std::string(100000, ']') + "}", ""),
       "'w': expected an object with dtype, shape and data_offsets, got a JSON array"},
  };
  for (const Case& c : cases) {
    write_bytes(path, c.bytes);
    const std::string msg = load_error(path);
    const std::string what = c.what;
    INFO(what);
    INFO(msg);
    CHECK(msg.rfind("load_safetensors: " + path + ": ", 0) == 0);
    CHECK(msg.find(c.message) != std::string::npos);
  }
}

// tests/fixtures/hostile (also the fuzz corpus's regress-* seeds): shapes whose byte count
// wraps 2^64, so that numel * itemsize (mod 2^64) equals the offsets' span. Both loaded
// before the byte count was checked; the F32 one then read past its 4-byte buffer.
TEST_CASE("a shape whose byte count overflows 64 bits is rejected, whatever the offsets say") {
  struct Case {
    const char* file;
    const char* message;
  };
  // 2^61 * 8 = 2^64 wraps to 0 and (2^62 + 1) * 4 = 2^64 + 4 wraps to 4: the spans the files give.
  const Case cases[] = {
      {"numel_bytes_overflow_f64",
       "tensor 'w': shape [2305843009213693952] of F64 needs 2^64 bytes or more but data_offsets [0, 0] hold 0"},
      {"numel_bytes_overflow_f32",
       "tensor 'w': shape [4611686018427387905] of F32 needs 2^64 bytes or more but data_offsets [0, 4] hold 4"},
  };
  for (const Case& c : cases) {
    const std::string path = test_util::fixtures_dir() + "/hostile/" + c.file + ".safetensors";
    CAPTURE(path);
    REQUIRE(fs::is_regular_file(path));
    CHECK(load_error(path) == "load_safetensors: " + path + ": " + c.message);
  }

  // The same wrap at every dtype size, and across dims: [2^32, 2^30] of F32 is 2^64 bytes.
  const std::string path = tmp_dir("byte_overflow") + "/o.safetensors";
  auto tensor = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"w":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
  };
  for (const auto& [dtype, shape_b, offsets, data] :
       {std::tuple<std::string, std::string, std::string, std::string>{"I64", "[2305843009213693953]", "[0,8]",
                                                                       std::string(8, '\0')},
        {"I32", "[4611686018427387904]", "[0,0]", ""},
        {"F32", "[4294967296,1073741824]", "[0,0]", ""},
        {"F64", "[3,768614336404564651]", "[0,8]", std::string(8, '\0')}}) {  // 3 * 768614336404564651 * 8 = 2^64 + 8
    const std::string& shape = shape_b;  // clang 14 cannot capture a structured binding
    CAPTURE(shape);
    write_bytes(path, st_file(tensor(dtype, shape, offsets), data));
    CHECK(test_util::contains(load_error(path), "needs 2^64 bytes or more"));
  }
  // One byte short of the wrap is an honest size mismatch. BOOL is 1 byte per element and
  // cannot wrap: [2^62] is a plain mismatch too.
  write_bytes(path, st_file(tensor("F64", "[2305843009213693951]", "[0,0]"), ""));
  CHECK(test_util::contains(load_error(path), "needs 18446744073709551608 bytes but data_offsets [0, 0] hold 0"));
  write_bytes(path, st_file(tensor("BOOL", "[4611686018427387904]", "[0,0]"), ""));
  CHECK(test_util::contains(load_error(path), "needs 4611686018427387904 bytes but data_offsets [0, 0] hold 0"));
}

TEST_CASE("unusual but valid files load") {
  const std::string path = tmp_dir("valid") + "/v.safetensors";
  // Two empty tensors at one offset, a scalar, null metadata, unknown extra keys.
  write_bytes(path, st_file(R"({"__metadata__":null,"s":{"dtype":"I32","shape":[],"data_offsets":[0,4],"x":1},)"
                            R"("e1":{"dtype":"F64","shape":[0],"data_offsets":[4,4]},)"
                            R"("e0":{"dtype":"BOOL","shape":[2,0],"data_offsets":[4,4]}})",
                            std::string("\x2a\0\0\0", 4)));
  ag::SafetensorsFile f = ag::read_safetensors(path);
  CHECK(f.metadata.empty());
  CHECK(names(f.tensors) == std::vector<std::string>{"s", "e0", "e1"});  // offset, then name
  CHECK(f.tensors.at("s").item<int32_t>() == 42);
  CHECK(f.tensors.at("e0").shape() == Shape{2, 0});
}

TEST_CASE("missing files and directories throw IOError") {
  const std::string dir = tmp_dir("missing");
  const std::string path = dir + "/nope.safetensors";
  const std::string expected = "load_safetensors: " + path + ": cannot open file (No such file or directory)";
  CHECK_THROWS_WITH_AS(ag::load_safetensors(path), expected.c_str(), ag::IOError);
  CHECK_THROWS_AS(ag::load_safetensors_metadata(path), ag::IOError);
  CHECK_THROWS_WITH_AS(ag::load_safetensors(dir), doctest::Contains("not a regular file"), ag::IOError);
}

// ---- atomic writes -----------------------------------------------------------------

TEST_CASE("a crash during save leaves the old file intact and no temporary file") {
  const std::string dir = tmp_dir("atomic");
  const std::string path = dir + "/model.safetensors";
  ag::TensorMap old_map, new_map;
  old_map.insert("w", Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}));
  new_map.insert("w", Tensor::from_vector(std::vector<float>{5, 6, 7, 8, 9, 10}, {3, 2}));
  new_map.insert("b", Tensor::from_vector(std::vector<double>(100, 0.5)));
  ag::save_safetensors(path, old_map, {{"version", "old"}});
  const std::string old_bytes = read_bytes(path);

  const std::string crash = "save_safetensors: " + path + ": simulated crash";
  for (int64_t after : {0, 1, 7, 8, 20, 100, 200}) {  // in the length, header and data
    CAPTURE(after);
    {
      FaultGuard fault(after);
      CHECK_THROWS_WITH_AS(ag::save_safetensors(path, new_map, {{"version", "new"}}), doctest::Contains(crash.c_str()),
                           ag::IOError);
    }
    CHECK(read_bytes(path) == old_bytes);
    CHECK(ag::load_safetensors_metadata(path).at("version") == "old");
    CHECK(ag::load_safetensors(path).at("w").to_vector<float>() == std::vector<float>{1, 2, 3, 4});
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      CHECK(e.path().filename() == "model.safetensors");
      ++files;
    }
    CHECK(files == 1);
  }

  ag::save_safetensors(path, new_map, {{"version", "new"}});  // hook off: the save lands
  ag::TensorMap loaded = ag::load_safetensors(path);
  CHECK(loaded.at("w").shape() == Shape{3, 2});
  CHECK(loaded.at("b").to_vector<double>() == std::vector<double>(100, 0.5));
  CHECK(ag::load_safetensors_metadata(path).at("version") == "new");
}
