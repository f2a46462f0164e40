// bf16 and f16 (the first slice of issue 25): the dtypes, their conversions bit for bit
// against PyTorch 1.13 (tests/fixtures/half_conversion.safetensors, made by
// tools/make_half_fixtures.py), to() between every dtype pair, factories, item,
// to_vector, printing, safetensors BF16/F16, and the DTypeError of the ops that do not
// compute on them yet.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using ag::BFloat16;
using ag::DType;
using ag::Half;
using ag::Shape;
using ag::Tensor;

namespace {

// The raw 16-bit patterns of a bf16/f16 tensor, row-major.
std::vector<uint16_t> bits16(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<uint16_t> out(static_cast<std::size_t>(c.numel()));
  const auto* p = static_cast<const uint16_t*>(c.raw_data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  return out;
}

std::vector<uint32_t> bits32(const Tensor& t) {
  std::vector<uint32_t> out;
  for (float v : t.to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

bool bf16_is_nan(uint16_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; }

const char* const kDTypeNames[] = {"f32", "f64", "i32", "i64", "bool", "bf16", "f16"};
const DType kAll[] = {DType::f32, DType::f64, DType::i32, DType::i64, DType::b8, DType::bf16, DType::f16};

}  // namespace

TEST_CASE("half dtypes: itemsize, names, floating, default dtype") {
  CHECK(ag::itemsize(DType::bf16) == 2);
  CHECK(ag::itemsize(DType::f16) == 2);
  for (int i = 0; i < 7; ++i) CHECK(std::string(ag::name(kAll[i])) == kDTypeNames[i]);
  CHECK(ag::is_floating(DType::bf16));
  CHECK(ag::is_floating(DType::f16));
  CHECK(ag::is_reduced_float(DType::f16));
  CHECK_FALSE(ag::is_reduced_float(DType::f32));
  CHECK(ag::dtype_v<BFloat16> == DType::bf16);
  CHECK(ag::dtype_v<Half> == DType::f16);
  // PyTorch 1.13 takes only float32/float64 as the default dtype.
  CHECK_THROWS_AS(ag::set_default_dtype(DType::bf16), ag::DTypeError);
  CHECK(ag::get_default_dtype() == DType::f32);
}

TEST_CASE("half conversion: f32 -> bf16 / f16 and back bit for bit against PyTorch 1.13") {
  test_util::Fixture f = test_util::load_fixture("half_conversion");
  const Tensor& x = f.at("input");
  REQUIRE(x.dtype() == DType::f32);
  REQUIRE(f.at("bf16").dtype() == DType::bf16);  // PyTorch's BF16 / F16 tensors load as is
  REQUIRE(f.at("f16").dtype() == DType::f16);
  const auto want_bf = bits16(f.at("bf16")), want_h = bits16(f.at("f16"));
  const auto got_bf = bits16(x.to(DType::bf16)), got_h = bits16(x.to(DType::f16));
  const auto in = bits32(x);
  REQUIRE(got_bf.size() == want_bf.size());
  REQUIRE(got_h.size() == want_h.size());
  int nans = 0, mismatches = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    CAPTURE(in[i]);
    if (std::isnan(std::bit_cast<float>(in[i]))) {
      // PyTorch's vectorized loop writes 0xFFFF, its scalar path 0x7FC0; attograd 0x7FC0.
      ++nans;
      CHECK(bf16_is_nan(want_bf[i]));
      CHECK(got_bf[i] == 0x7FC0);
    } else if (got_bf[i] != want_bf[i]) {
      ++mismatches;
      CHECK(got_bf[i] == want_bf[i]);
    }
    if (got_h[i] != want_h[i]) {  // f16 NaNs too: sign | 0x7E00, as PyTorch
      ++mismatches;
      CHECK(got_h[i] == want_h[i]);
    }
  }
  CHECK(mismatches == 0);
  CHECK(nans > 5);  // the specials and the random bit patterns hold NaNs
  // Back to f32: exact (bf16) / exact with quieted NaNs (f16), as PyTorch.
  const auto bf_back = bits32(f.at("bf16").to(DType::f32)), h_back = bits32(f.at("f16").to(DType::f32));
  CHECK(bf_back == bits32(f.at("bf16.f32")));
  CHECK(h_back == bits32(f.at("f16.f32")));
  // to_vector<float> and item<float> read through the same conversion.
  CHECK(bits32(Tensor::from_vector(f.at("f16").to_vector<float>())) == bits32(f.at("f16.f32")));
  CHECK(f.at("bf16").select(0, 12).item<float>() == f.at("bf16.f32").select(0, 12).item<float>());
}

TEST_CASE("half conversion: f64 -> bf16 / f16 goes through f32, as PyTorch") {
  test_util::Fixture f = test_util::load_fixture("half_conversion");
  const Tensor& d = f.at("input.f64");
  REQUIRE(d.dtype() == DType::f64);
  CHECK(bits16(d.to(DType::bf16)) == bits16(f.at("f64.bf16")));
  CHECK(bits16(d.to(DType::f16)) == bits16(f.at("f64.f16")));
  // 1 + 2^-8 + 2^-40: once rounded it would be 0x3F81; through f32 it is the tie 1 + 2^-8 -> 1.
  Tensor one = Tensor::from_vector(std::vector<double>{1.0 + 0x1p-8 + 0x1p-40});
  CHECK(bits16(one.to(DType::bf16))[0] == 0x3F80);
}

TEST_CASE("half conversion: every f16 and bf16 pattern survives float and back") {
  int checked = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float h = Half::from_bits(b), bf = BFloat16::from_bits(b);
    if (!std::isnan(h)) CHECK(Half(h).x == b);
    if (!std::isnan(bf)) CHECK(BFloat16(bf).x == b);
    checked += !std::isnan(h);
  }
  CHECK(checked == 65536 - 2 * 1023);  // 1023 NaN patterns per sign
  CHECK(Half(65504.f).x == 0x7BFF);
  CHECK(Half(65520.f).x == 0x7C00);
  CHECK(Half(-0.f).x == 0x8000);
  CHECK(Half(0x1p-25f).x == 0);
  CHECK(Half(0x1.8p-24f).x == 2);
  CHECK(BFloat16(std::numeric_limits<float>::max()).x == 0x7F80);
  CHECK(BFloat16(-std::numeric_limits<float>::infinity()).x == 0xFF80);
}

TEST_CASE("half to(): every dtype pair, strided, integers through float") {
  Tensor base = Tensor::from_vector(std::vector<double>{0, 1, -2, 3.5, 1e6, -0.25}, Shape{2, 3});
  for (DType from : kAll) {
    for (DType to : kAll) {
      CAPTURE(from);
      CAPTURE(to);
      Tensor src = base.to(from);
      Tensor mid = src.to(DType::bf16).to(to);
      Tensor want = src.to(DType::f32).to(DType::bf16).to(DType::f32).to(to);
      CHECK(mid.dtype() == to);
      CHECK(mid.to_vector<double>() == want.to_vector<double>());
      CHECK(src.to(DType::f16).to(to).to_vector<double>() ==
            src.to(DType::f32).to(DType::f16).to(to).to_vector<double>());
    }
  }
  // A strided view converts element by element; 1e6 is past f16's max 65504: inf.
  Tensor t = base.to(DType::f16).transpose(0, 1);
  CHECK(t.to(DType::f32).to_vector<float>() == std::vector<float>{0, 3.5, 1, INFINITY, -2, -0.25});
  // NaN and inf to integers: the integer minimum, as PyTorch on x86; to bool: true.
  Tensor special = Tensor::from_vector(std::vector<float>{NAN, INFINITY, -INFINITY, 3.f}).to(DType::bf16);
  CHECK(special.to(DType::i64).to_vector<int64_t>() == std::vector<int64_t>{INT64_MIN, INT64_MIN, INT64_MIN, 3});
  CHECK(special.to(DType::b8).to_vector<bool>() == std::vector<bool>{true, true, true, true});
  // from_vector of the storage types.
  Tensor fv = Tensor::from_vector(std::vector<BFloat16>{BFloat16(1.5f), BFloat16(-2.f)});
  CHECK(fv.dtype() == DType::bf16);
  CHECK(fv.to_vector<float>() == std::vector<float>{1.5f, -2.f});
  CHECK(fv.to_vector<BFloat16>()[1].x == 0xC000);
  CHECK(Tensor::from_vector(std::vector<Half>{Half(0.1f)}).item<double>() == static_cast<double>(float(Half(0.1f))));
}

TEST_CASE("half factories, fill and printing") {
  for (DType dt : {DType::bf16, DType::f16}) {
    CAPTURE(dt);
    CHECK(ag::zeros({2, 2}, dt).to_vector<float>() == std::vector<float>(4, 0.f));
    CHECK(ag::ones({3}, dt).to_vector<float>() == std::vector<float>(3, 1.f));
    CHECK(ag::full({2}, 0.1, dt).to_vector<float>() ==
          std::vector<float>(2, dt == DType::bf16 ? float(BFloat16(0.1f)) : float(Half(0.1f))));
    CHECK(ag::full({1}, int64_t{257}, dt).item<float>() == (dt == DType::bf16 ? 256.f : 257.f));
    CHECK(ag::empty({5}, dt).dtype() == dt);
    CHECK(ag::arange(0, 5, 1, dt).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
    CHECK(ag::arange(0.0, 1.0, 0.25, dt).to_vector<float>() == std::vector<float>{0, 0.25, 0.5, 0.75});
    CHECK(ag::eye(2, std::nullopt, dt).to_vector<float>() == std::vector<float>{1, 0, 0, 1});
    CHECK(ag::randn({16}, dt).dtype() == dt);
    CHECK(ag::zeros_like(ag::ones({2}, dt)).dtype() == dt);
    Tensor z = ag::zeros({3}, dt);
    z.fill_(2.5);
    CHECK(z.to_vector<float>() == std::vector<float>(3, 2.5f));
    z.copy_(Tensor::from_vector(std::vector<int64_t>{1, 2, 3}));
    CHECK(z.to_vector<float>() == std::vector<float>{1, 2, 3});
  }
  // 65536 does not fit f16: inf, as PyTorch's torch.full((1,), 65536.0, dtype=torch.half).
  CHECK(std::isinf(ag::full({1}, 65536.0, DType::f16).item<float>()));
  std::ostringstream os;
  os << Tensor::from_vector(std::vector<float>{1.5f, 2.f}).to(DType::bf16);
  CHECK(os.str() == "tensor([1.5000, 2.0000], dtype=bf16)");
  std::ostringstream os2;
  os2 << Tensor::from_vector(std::vector<float>{1.f, 2.f}).to(DType::f16);
  CHECK(os2.str() == "tensor([1., 2.], dtype=f16)");
}

TEST_CASE("half: ops compute in f32 and round once, as PyTorch on the CPU") {
  // 1 + 2^-8 is a tie between the bf16 neighbours 1 and 1 + 2^-7: computed in f32 and
  // rounded once it goes to the even one, 1.
  Tensor one = ag::ones({1}, DType::bf16), tiny = ag::full({1}, 1.0 / 256, DType::bf16);
  CHECK((one + tiny).dtype() == DType::bf16);
  CHECK((one + tiny).item<float>() == 1.0f);
  // 300 ones sum to 300 (accumulated in f32); a bf16 accumulator would stop at 256.
  CHECK(ag::sum(ag::ones({300}, DType::bf16)).item<float>() == 300.0f);
  CHECK(ag::sum(ag::ones({300}, DType::f16)).dtype() == DType::f16);
  // matmul: one rounding of the f32 dot product, 1 * 1 + 2^-8 * 1 -> 1 (the tie again).
  Tensor a = ag::Tensor::from_vector(std::vector<float>{1, 1.0f / 256}, {1, 2}).to(DType::bf16);
  CHECK(ag::matmul(a, ag::ones({2, 1}, DType::bf16)).item<float>() == 1.0f);
  // softmax of equal logits: exactly 1/4 in either dtype; exp(1) rounds once.
  CHECK(ag::softmax(ag::zeros({4}, DType::f16), 0).to_vector<float>() == std::vector<float>(4, 0.25f));
  CHECK(ag::exp(ag::ones({1}, DType::f16)).item<float>() ==
        ag::Tensor::from_vector(std::vector<float>{2.718281828f}).to(DType::f16).item<float>());
}

TEST_CASE("half: collectives and optimizers take bf16/f16; bool still refused by name") {
  // One process: the collectives return their input (tests/dist/ runs them on 2 ranks).
  Tensor x = ag::full({2, 4}, 1.5, DType::bf16);
  Tensor r = ag::dist::functional::all_reduce(x);
  CHECK(r.dtype() == DType::bf16);
  CHECK(r.to_vector<float>() == std::vector<float>(8, 1.5f));
  CHECK_THROWS_WITH_AS(ag::dist::functional::all_reduce(ag::ones({2}, DType::b8)),
                       doctest::Contains("has dtype bool; collectives take f32, f64, bf16, f16 or i64"),
                       ag::DTypeError);
  // An optimizer steps an f16 parameter (through its f32 master: tests/optim/test_optim_half.cpp).
  Tensor w = ag::ones({2}, DType::f16).requires_grad_();
  ag::sum(w * w).backward();
  CHECK(w.grad().dtype() == DType::f16);
  ag::optim::SGD sgd({w}, ag::optim::SGDOptions(0.1));
  sgd.step();
  CHECK(w.dtype() == DType::f16);
  CHECK(w.to_vector<float>() == std::vector<float>(2, 0.7998046875f));  // 1 - 0.1 * 2 = 0.8, rounded to f16
}

TEST_CASE("half safetensors: BF16 / F16 round trip bit for bit") {
  const std::string path = test_util::tmp_dir("half", "roundtrip") + "/h.safetensors";
  test_util::Fixture f = test_util::load_fixture("half_conversion");
  ag::TensorMap m;
  m.insert("bf16", f.at("bf16"));
  m.insert("f16.strided", f.at("f16").slice(0, 0, 100, 3));  // not contiguous
  ag::save_safetensors(path, m);
  ag::TensorMap back = ag::load_safetensors(path);
  CHECK(back.at("bf16").dtype() == DType::bf16);
  CHECK(back.at("f16.strided").dtype() == DType::f16);
  CHECK(bits16(back.at("bf16")) == bits16(f.at("bf16")));
  CHECK(bits16(back.at("f16.strided")) == bits16(f.at("f16").slice(0, 0, 100, 3)));
}

// The bytes attograd writes for BF16 / F16 (what PyTorch's and Hugging Face's readers
// expect): an 8-byte little-endian header length, the JSON header with the dtype names
// "BF16" / "F16", shapes and data_offsets in bytes (2 per element), padded with spaces to
// a multiple of 8, then the raw little-endian 16-bit patterns. tools/check_half_file.py
// checks a committed attograd file the same way from PyTorch.
TEST_CASE("half safetensors: the header and bytes of a BF16 / F16 file") {
  const std::string path = test_util::tmp_dir("half", "bytes") + "/h.safetensors";
  const float inf = std::numeric_limits<float>::infinity();
  ag::TensorMap m;
  m.insert("w", Tensor::from_vector(std::vector<float>{1, -2, 0.5f, 3, -0.0f, inf}, Shape{2, 3}).to(DType::bf16));
  m.insert("h", Tensor::from_vector(std::vector<float>{1, -2}).to(DType::f16));
  ag::save_safetensors(path, m, {{"format", "pt"}});
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
                       R"("h":{"dtype":"F16","shape":[2],"data_offsets":[12,16]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string want(8, '\0');
  for (int i = 0; i < 8; ++i) want[std::size_t(i)] = static_cast<char>(header.size() >> (8 * i) & 0xFF);
  want += header;
  // bf16 1 = 0x3F80, -2 = 0xC000, 0.5 = 0x3F00, 3 = 0x4040, -0 = 0x8000, inf = 0x7F80;
  // f16 1 = 0x3C00, -2 = 0xC000; each little-endian
  want += std::string("\x80\x3F\x00\xC0\x00\x3F\x40\x40\x00\x80\x80\x7F", 12);
  want += std::string("\x00\x3C\x00\xC0", 4);
  CHECK(test_util::read_bytes(path) == want);
  CHECK(ag::load_safetensors(path).at("w").dtype() == DType::bf16);
}
