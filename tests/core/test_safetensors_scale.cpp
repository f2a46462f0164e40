// save_safetensors at scale (issue 23): the header was built as an nlohmann ordered_json
// object, whose operator[] finds a key by a linear scan, so saving n tensors cost O(n^2)
// (100k tensors: 63 s, measured by tools/benchmarks/load_bench). The header is now written entry by
// entry, in the same bytes.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"

using ag::Tensor;

namespace {
std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("safetensors_scale", name); }
}  // namespace

TEST_CASE("save_safetensors writes the header as before: compact JSON, metadata first, file order") {
  ag::TensorMap m;
  m.insert("b", Tensor::from_vector(std::vector<float>{1.f, 2.f}));
  m.insert("a\"q", Tensor::from_vector(std::vector<double>{3.0}));
  const std::string path = tmp_dir("format") + "/f.safetensors";
  ag::save_safetensors(path, m, {{"k", "v"}});
  const std::string bytes = test_util::read_bytes(path);
  const std::string want =
      "{\"__metadata__\":{\"k\":\"v\"},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"a\\\"q\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]}}";
  REQUIRE(bytes.size() > 8);
  const std::string header = bytes.substr(8, want.size());
  CHECK(header == want);
  CHECK(bytes.substr(8 + want.size(), (8 - want.size() % 8) % 8).find_first_not_of(' ') == std::string::npos);
  const ag::TensorMap back = ag::load_safetensors(path);
  CHECK(back.at("a\"q").item<double>() == 3.0);
  // A name that is not UTF-8 is still a ValueError naming the path, and nothing is written.
  ag::TensorMap bad;
  bad.insert(std::string("\xff"), Tensor::from_vector(std::vector<float>{1.f}));
  CHECK_THROWS_AS(ag::save_safetensors(tmp_dir("format") + "/bad.safetensors", bad), ag::ValueError);
}

TEST_CASE("saving and loading 20,000 tensors keeps every name and value") {
  // Speed is measured by tools/benchmarks/load_bench, not here (no timed unit tests).
  ag::TensorMap m;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    m.insert("layers." + std::to_string(i) + ".attn.wq", Tensor::from_vector(std::vector<float>{float(i)}));
  const std::string path = tmp_dir("many") + "/many.safetensors";
  ag::save_safetensors(path, m);
  const ag::TensorMap back = ag::load_safetensors(path);
  CHECK(back.size() == std::size_t(n));
  CHECK(back.at("layers.0.attn.wq").item<float>() == 0.f);
  CHECK(back.at("layers.19999.attn.wq").item<float>() == 19999.f);
}
