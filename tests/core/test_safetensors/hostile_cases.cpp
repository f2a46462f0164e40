// safetensors against hostile files: truncated, corrupt headers, byte counts that wrap
// 2^64, unusual but valid files, missing paths. Part of test_safetensors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "../safetensors_test_util.h"
#include "test_util.h"

#include <cstdint>
#include <filesystem>
#include <tuple>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;

using test_util::read_bytes;
using test_util::write_bytes;
using namespace safetensors_test;

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
  std::string dims65 = "[2";  // one dim past PyTorch's limit of 64
  for (int i = 0; i < 64; ++i) dims65 += ",1";
  dims65 += "]";
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
      {"65 dims", st_file(tensor("F32", dims65, "[0,8]"), f32x2), "has 65 dims; attograd supports at most 64"},
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
