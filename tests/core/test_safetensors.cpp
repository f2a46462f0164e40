// safetensors: TensorMap, round trips, atomic writes. The PyTorch fixtures and hostile
// files are in test_safetensors/fixture_cases.cpp and test_safetensors/hostile_cases.cpp (same
// executable; helpers in safetensors_test_util.h).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "safetensors_test_util.h"
#include "test_util.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;
using ag::Tensor;

using test_util::read_bytes;
using namespace safetensors_test;

namespace {

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
