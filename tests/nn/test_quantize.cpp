// Quantized Linear (attograd/quant.h, attograd/nn/quantize.h; weight-only int8 / int4 and
// dynamic int8): a quantized
// Linear against the f32 one within the format's bound, bf16/f16 inputs, inference-only
// backward, ag::quant::quantize_ over a module tree (typed members, filter, errors) and
// the safetensors round trip into a model built without the f32 weights. The kernels at
// every ISA level: tests/kernels/test_simd_quant.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/nn/quantize.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;

namespace {

// x (B, 64) -> (B, 10) through typed Linear members, as GPT blocks hold them.
struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    fc1 = register_module("fc1", nn::Linear(64, 96));
    fc2 = register_module("fc2", nn::Linear(96, 64));
    head = register_module("head", nn::Linear(nn::LinearOptions(64, 10).bias(false)));
  }
  Tensor forward(const Tensor& x) { return head(relu(fc2(relu(fc1(x))))); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, head{nullptr};
};
AG_MODULE(Net);

// The format's bound on |y_q - y_f32| for one output: sum_k |x_k| * scale(n, k) / 2 (each
// weight is off by at most half its scale), plus f32 summation slack. Dynamic int8 also
// rounds x[m, k] within xs / 2 (xs = max|x[m, :]| / 127): x^ w^ - x w = x^ (w^ - w) + (x^ - x) w,
// so each term adds (|x_k| + xs / 2) * scale(n) / 2 + xs / 2 * |w[n, k]|.
void check_within_bound(const Tensor& x, const nn::Linear& f32, const nn::Linear& q) {
  const bool dynamic = q->qweight.format == quant::Format::int8_dynamic_activation_int8_weight;
  const std::vector<float> wf = f32->weight.to_vector<float>();
  const Tensor y = q(x), y_ref = f32(x);
  const int64_t K = x.size(-1), N = y.size(-1), M = x.numel() / K;
  const std::vector<float> xs = x.to_vector<float>(), ys = y.to_vector<float>(), rs = y_ref.to_vector<float>();
  const Tensor deq = quant::dequantize(q->qweight);
  const std::vector<float> scale = q->qweight.scale.to_vector<float>();
  const int64_t G = q->qweight.group_size;
  int bad = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double bound = 0, mag = 0, xmax = 0;
      for (int64_t k = 0; k < K; ++k) xmax = std::max(xmax, double(std::fabs(xs[size_t(m * K + k)])));
      const double xh = dynamic ? xmax / 127 / 2 : 0;  // half an activation step
      for (int64_t k = 0; k < K; ++k) {
        const double s = scale[size_t(G ? n * ((K + G - 1) / G) + k / G : n)];
        bound += (std::fabs(xs[size_t(m * K + k)]) + xh) * s / 2 + xh * std::fabs(wf[size_t(n * K + k)]);
        mag += std::fabs(xs[size_t(m * K + k)]);
      }
      const double d = std::fabs(double(ys[size_t(m * N + n)]) - rs[size_t(m * N + n)]);
      if (!(d <= bound + 1e-5 * (mag + 1)) && bad++ < 3)
        FAIL_CHECK("m " << m << " n " << n << ": |diff| " << d << " > bound " << bound);
    }
}

}  // namespace

TEST_CASE("quantized Linear: int8, int4 and dynamic int8 against the f32 Linear within the format's bound") {
  manual_seed(3);
  for (const quant::QuantConfig& cfg : {quant::int8_weight_only(), quant::int4_weight_only(32),
                                        quant::int4_weight_only(64), quant::int8_dynamic_activation_int8_weight()}) {
    CAPTURE(quant::to_string(cfg.format));
    CAPTURE(cfg.group_size);
    nn::Linear f32(128, 37);  // N odd
    nn::Linear q(128, 37);
    {
      NoGradGuard ng;
      q->weight.copy_(f32->weight);
      q->bias.copy_(f32->bias);
    }
    CHECK(quant::quantize_(q, cfg) == 1);
    CHECK(q->is_quantized());
    CHECK_FALSE(q->weight.defined());
    for (int64_t M : {1, 3, 17}) {
      CAPTURE(M);
      check_within_bound(randn({M, 128}), f32, q);
    }
    check_within_bound(randn({2, 5, 128}), f32, q);  // leading dims kept
    CHECK(q(randn({2, 5, 128})).shape() == Shape{2, 5, 37});
  }
}

TEST_CASE("quantized_linear: a quantized copy of a Linear, the original untouched") {
  manual_seed(9);
  nn::Linear f(64, 5);
  nn::Linear q = quant::quantized_linear(f, quant::int4_weight_only(64));
  CHECK_FALSE(f->is_quantized());
  CHECK(q->is_quantized());
  CHECK(q->qweight.group_size == 64);
  CHECK(q->bias.to_vector<float>() == f->bias.to_vector<float>());
  check_within_bound(randn({3, 64}), f, q);
  CHECK_THROWS_MSG(quant::quantized_linear(q, quant::int8_weight_only()), ValueError,
                   "quantized_linear: the Linear is quantized already (int4_weight_only)");
}

TEST_CASE("quantized Linear: bf16 / f16 / f64 inputs compute in f32 and return x's dtype") {
  manual_seed(4);
  nn::Linear q(64, 9);
  quant::quantize_(q, quant::int8_weight_only());
  const Tensor x = randn({3, 64});
  for (DType dt : {DType::bf16, DType::f16, DType::f64}) {
    CAPTURE(dt);
    const Tensor xd = x.to(dt);
    const Tensor y = q(xd);
    CHECK(y.dtype() == dt);
    // the same as converting the input to f32 first and the result back
    const std::vector<double> a = y.to_vector<double>(), b = q(xd.to(DType::f32)).to(dt).to_vector<double>();
    CHECK(a == b);
  }
}

TEST_CASE("quantized Linear: inference only, backward throws naming the module") {
  manual_seed(5);
  for (const quant::QuantConfig& cfg : {quant::int4_weight_only(32), quant::int8_dynamic_activation_int8_weight()}) {
    CAPTURE(quant::to_string(cfg.format));
    nn::Linear q(32, 4);
    quant::quantize_(q, cfg);
    CHECK(q->parameters().empty());  // weight and bias became buffers: nothing to train
    const Tensor x = randn({2, 32}).requires_grad_();
    const Tensor y = q(x);  // forward runs under grad mode (e.g. below a trainable embedding)
    CHECK(y.requires_grad());
    try {
      y.sum().backward();
      FAIL("backward through a quantized Linear did not throw");
    } catch (const AutogradError& e) {
      CHECK(std::string(e.what()).find("Linear: quantized modules are inference-only; backward is not supported") !=
            std::string::npos);
    }
    NoGradGuard ng;
    CHECK_FALSE(q(x).requires_grad());
  }
}

TEST_CASE("dynamic int8: activations quantized per row, weights as int8_weight_only's; errors") {
  manual_seed(10);
  nn::Linear w8(96, 21), dyn(96, 21);
  {
    NoGradGuard ng;
    dyn->weight.copy_(w8->weight);
    dyn->bias.copy_(w8->bias);
  }
  quant::quantize_(w8, quant::int8_weight_only());
  quant::quantize_(dyn, quant::int8_dynamic_activation_int8_weight());
  // the same int8 codes and scales: only the activations differ
  CHECK(w8->qweight.data.to_vector<int64_t>() == dyn->qweight.data.to_vector<int64_t>());
  CHECK(w8->qweight.scale.to_vector<float>() == dyn->qweight.scale.to_vector<float>());
  // x whose rows are already on the int8 grid of their own scale (max 127 * s): the
  // activation rounding is exact, so dynamic int8 equals weight-only int8 up to f32 sums
  Tensor x = randint(-127, 128, {5, 96}).to(DType::f32);
  for (int64_t m = 0; m < 5; ++m) x.data<float>()[m * 96] = 127.f;  // every row's scale 1
  const Tensor y8 = w8(x), yd = dyn(x);
  CHECK(allclose(yd, y8, 1e-5, 1e-3));
  // an all-zero row gives the bias; a NaN in a row gives NaN outputs for that row only
  Tensor z = zeros({3, 96});
  z.data<float>()[96 + 7] = NAN;
  z.data<float>()[2 * 96] = 1.f;
  const std::vector<float> yz = dyn(z).to_vector<float>(), b = dyn->bias.to_vector<float>();
  CHECK(std::vector<float>(yz.begin(), yz.begin() + 21) == b);
  CHECK(std::isnan(yz[21]));
  CHECK(std::isfinite(yz[42]));
  std::ostringstream os;
  os << *dyn;
  CHECK(os.str() ==
        "Linear(in_features=96, out_features=21, bias=true, quantized=int8_dynamic_activation_int8_weight)");
  // the int32 sums bound in_features; the formats' ops refuse each other's weights
  nn::Linear big(nn::LinearOptions(131073, 1).bias(false));
  CHECK_THROWS_WITH_AS(quant::quantize_(big, quant::int8_dynamic_activation_int8_weight()),
                       doctest::Contains("in_features 131073 is larger than 131072"), ValueError);
  CHECK_THROWS_WITH_AS(quant::weight_only_linear(x, dyn->qweight),
                       doctest::Contains("takes a weight-only format, got int8_dynamic_activation_int8_weight"),
                       ValueError);
  CHECK_THROWS_WITH_AS(quant::int8_dynamic_linear(x, w8->qweight),
                       doctest::Contains("int8_dynamic_linear: int8_dynamic_linear takes an "
                                         "int8_dynamic_activation_int8_weight weight, got int8_weight_only"),
                       ValueError);
}

TEST_CASE("quantize_: typed members keep working; filter by name; state-dict names") {
  manual_seed(6);
  Net net;
  const Tensor x = randn({4, 64});
  const Tensor y_f32 = net(x);
  const int64_t n = quant::quantize_(net, quant::int8_weight_only(),
                                     [](nn::Module&, const std::string& fqn) { return fqn != "head"; });
  CHECK(n == 2);
  CHECK(net->fc1->is_quantized());
  CHECK(net->fc2->is_quantized());
  CHECK_FALSE(net->head->is_quantized());
  const TensorMap sd = net->state_dict();
  std::vector<std::string> keys;
  for (const auto& entry : sd) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"fc1.bias", "fc1.weight_int8", "fc1.weight_scale", "fc2.bias",
                                         "fc2.weight_int8", "fc2.weight_scale", "head.weight"});
  CHECK(sd.at("fc1.weight_int8").dtype() == DType::i8);
  CHECK(sd.at("fc1.weight_int8").shape() == Shape{96, 64});
  CHECK(sd.at("fc1.weight_scale").shape() == Shape{96});
  CHECK(net->parameters().size() == 1);  // head.weight
  // the parents' typed members call the quantized forward: close to f32, not equal
  const Tensor y_q = net(x);
  const double err = max(abs(y_q - y_f32)).item<double>(), ref = max(abs(y_f32)).item<double>();
  CHECK(err > 0);
  CHECK(err < 0.05 * ref);
  // a second call leaves the quantized layers alone and takes the rest
  CHECK(quant::quantize_(net, quant::int8_weight_only()) == 1);
  std::ostringstream os;
  os << *net->fc1;
  CHECK(os.str() == "Linear(in_features=64, out_features=96, bias=true, quantized=int8_weight_only)");
}

TEST_CASE("quantize_: int4 with a partial last group pads it with zero weights") {
  // fc2 (64, 96) in groups of 64: one whole group and 32 columns, padded to 128.
  manual_seed(5);
  Net f32, net;
  {
    NoGradGuard ng;
    const auto from = f32->named_parameters(), to = net->named_parameters();
    for (std::size_t i = 0; i < from.size(); ++i) Tensor(to[i].second).copy_(from[i].second);
  }
  CHECK(quant::quantize_(net, quant::int4_weight_only(64)) == 3);
  const quant::QuantizedWeight& q = net->fc2->qweight;
  CHECK(q.in_features() == 96);
  CHECK(q.pad == 32);
  CHECK(q.data.shape() == Shape{64, 64});
  CHECK(q.scale.shape() == Shape{64, 2});
  // The padded half of the last group holds q = 0 (nibble 8, both nibbles: 0x88): in the
  // last group's 32 bytes, the low nibbles are its first 32 columns (real), the high
  // nibbles its last 32 (padding).
  const std::vector<int64_t> codes = q.data.to_vector<int64_t>();
  int bad = 0;
  for (int64_t n = 0; n < 64; ++n)
    for (int64_t b = 32; b < 64; ++b) bad += (codes[size_t(n * 64 + b)] >> 4) != 8;
  CHECK(bad == 0);
  // The scale of the last group is that of its 32 real columns alone.
  const std::vector<float> w = f32->fc2->weight.to_vector<float>(), sc = q.scale.to_vector<float>();
  for (int64_t n : {0, 17, 63}) {
    float mx = 0;
    for (int64_t k = 64; k < 96; ++k) mx = std::max(mx, std::fabs(w[size_t(n * 96 + k)]));
    CHECK(sc[size_t(n * 2 + 1)] == doctest::Approx(mx / 7).epsilon(1e-6));
  }
  CHECK(quant::dequantize(q).shape() == Shape{64, 96});
  const Tensor x = randn({5, 96});
  check_within_bound(x, f32->fc2, net->fc2);
  // Decode rows (GEMV) and prefill rows (tiles) agree with the dequantized product.
  for (int64_t rows : {1, 5, 40}) {
    CAPTURE(rows);
    const Tensor xr = randn({rows, 96});
    const Tensor want = matmul(xr, quant::dequantize(q).t()) + net->fc2->bias;
    CHECK(max(abs(net->fc2(xr) - want)).item<double>() < 1e-4);
  }
}

TEST_CASE("quantize_: int4 errors name what is wrong") {
  CHECK_THROWS_MSG(quant::int4_weight_only(48), ValueError, "int4_weight_only: group_size must be 32 or 64, got 48");
  CHECK_THROWS_WITH_AS(quant::quantize_weight(randn({4, 8}), quant::Format::int4_weight_only, 16),
                       "quantize_weight: int4_weight_only group_size must be 32 or 64, got 16", ValueError);
  Tensor w = randn({2, 4});
  w.data<float>()[3] = NAN;
  CHECK_THROWS_MSG(quant::quantize_weight(w, quant::Format::int8_weight_only), ValueError,
                   "quantize_weight: weight of shape [2, 4] holds a non-finite value (nan at");
  // Codes whose pad does not fill whole groups are refused by the product.
  quant::QuantizedWeight q = quant::quantize_weight(randn({4, 40}), quant::Format::int4_weight_only, 32);
  CHECK(q.pad == 24);
  CHECK_THROWS_WITH_AS(quant::empty_quantized_weight(4, -32, quant::Format::int4_weight_only, 32),
                       "empty_quantized_weight: negative shape (4, -32)", ShapeError);
  q.pad = 40;  // K 24 in codes for 64 columns: a whole group of padding
  CHECK_THROWS_WITH_AS(quant::weight_only_linear(randn({1, 24}), q), doctest::Contains("do not fill whole groups"),
                       ValueError);
}

TEST_CASE("quantize_: safetensors round trip into a model built without the f32 weights, bit for bit") {
  for (const quant::QuantConfig& cfg : {quant::int8_weight_only(), quant::int4_weight_only(32),
                                        quant::int4_weight_only(64), quant::int8_dynamic_activation_int8_weight()}) {
    CAPTURE(quant::to_string(cfg.format));
    CAPTURE(cfg.group_size);
    manual_seed(7);
    Net a;
    quant::quantize_(a, cfg);
    const std::string path = test_util::tmp_dir("test_quantize", "round_trip") + "/q.safetensors";
    nn::save(*a, path);
    const TensorMap file = load_safetensors(path);
    const bool int4 = cfg.format == quant::Format::int4_weight_only;
    const std::string codes = int4 ? "fc1.weight_int4" : "fc1.weight_int8";
    REQUIRE(file.contains(codes));
    CHECK(file.at(codes).dtype() == (int4 ? DType::u8 : DType::i8));
    CHECK(file.at(codes).shape() == (int4 ? Shape{96, 32} : Shape{96, 64}));
    CHECK(file.at("fc1.weight_scale").shape() == (int4 ? Shape{96, 64 / cfg.group_size} : Shape{96}));
    // fc2's in_features 96: three groups of 32, or two of 64 with the last half padded.
    if (int4) CHECK(file.at("fc2.weight_int4").shape() == Shape{64, cfg.group_size == 32 ? 48 : 64});

    manual_seed(8);  // other random f32 weights, never a's
    Net b;
    quant::quantize_(b, cfg);  // the skeleton: shapes and names only
    nn::load(*b, path);
    const TensorMap sa = a->state_dict(), sb = b->state_dict();
    REQUIRE(sa.size() == sb.size());
    for (const auto& entry : sa) {
      const std::string& k = entry.first;
      const Tensor& t = entry.second;
      CAPTURE(k);
      const Tensor u = sb.at(k);
      REQUIRE(u.dtype() == t.dtype());
      REQUIRE(u.shape() == t.shape());
      CHECK(std::memcmp(u.contiguous().raw_data(), t.contiguous().raw_data(),
                        size_t(t.numel()) * itemsize(t.dtype())) == 0);
    }
    const Tensor x = randn({3, 64});
    const std::vector<float> ya = a(x).to_vector<float>(), yb = b(x).to_vector<float>();
    CHECK(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("i8 / u8 storage dtypes: convert, save, refuse to compute") {
  const Tensor a = Tensor::from_vector(std::vector<float>{-3.7f, 0.f, 126.9f, 300.f}).to(DType::i8);
  CHECK(a.dtype() == DType::i8);
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{-3, 0, 126, 44});  // truncation, 300 wraps as torch
  const Tensor b = full({3}, 200, DType::u8);
  CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{200, 200, 200});
  CHECK_THROWS_MSG(full({1}, 300, DType::u8), ValueError,
                   "full: value 300 cannot be converted to type u8 (uint8_t) without overflow");
  CHECK_THROWS_MSG(a + a, DTypeError, "add: dtype i8 is a storage dtype for quantized weights (convert with");
  // PyTorch's promotion makes these floating: they convert (nn/QUANTIZATION.md)
  const Tensor f = ones({4});
  CHECK((a * f).dtype() == DType::f32);
  CHECK((a * 2.0).dtype() == DType::f32);
  CHECK((a + f).to_vector<double>() == std::vector<double>{-2, 1, 127, 45});
  CHECK(eq(a, f).dtype() == DType::b8);
  // the ones that would compute in 8-bit integers refuse, naming the op
  CHECK_THROWS_MSG(sum(a), DTypeError, "sum: dtype i8 is a storage dtype for quantized weights (convert with");
  CHECK_THROWS_MSG(exp(a), DTypeError, "exp: expected a floating dtype (f32, f64), got i8");
  CHECK_THROWS_MSG(matmul(a.reshape({1, 4}), f.reshape({4, 1})), DTypeError,
                   "matmul: dtypes i8 and f32 differ (shapes [1, 4] and [4, 1])");
  std::ostringstream os;
  os << a;
  CHECK(os.str().find("-3") != std::string::npos);
}

// Every field of a public QuantizedWeight is checked by quant::validate before a kernel
// reads it: group sizes 16 and 48 made the AVX kernels write past their buffers and 0
// divided by zero (issue 42). Each entry point refuses each bad field with a typed error.
TEST_CASE("QuantizedWeight: every bad field is a typed error at every entry point") {
  using quant::Format;
  const quant::QuantizedWeight good = quant::quantize_weight(randn({4, 64}), Format::int4_weight_only, 32);
  const Tensor x = randn({2, 64});
  // The entry points: dequantize, the product, and a Linear taking the weight.
  auto each = [&](const quant::QuantizedWeight& q, auto expect, const std::string& what) {
    using E = decltype(expect);
    CHECK_THROWS_WITH_AS(quant::dequantize(q), doctest::Contains(what.c_str()), E);
    CHECK_THROWS_WITH_AS(quant::weight_only_linear(x, q), doctest::Contains(what.c_str()), E);
    nn::Linear lin(64, 4);
    CHECK_THROWS_WITH_AS(lin->set_quantized_weight(q), doctest::Contains(what.c_str()), E);
    CHECK_FALSE(lin->is_quantized());
  };
  for (int64_t G : {0, 16, 48, -32, 128}) {
    CAPTURE(G);
    quant::QuantizedWeight q = good;
    q.group_size = G;
    each(q, ValueError{""}, "int4_weight_only group_size must be 32 or 64, got " + std::to_string(G));
  }
  {  // scales of the wrong shape, or not floating
    quant::QuantizedWeight q = good;
    q.scale = zeros({4, 4});
    each(q, ShapeError{""}, "scale shape [4, 4] does not match codes [4, 32] (expected [4, 2])");
    q.scale = zeros({4, 2}, DType::i32);
    each(q, DTypeError{""}, "expects floating scales, got i32");
  }
  {  // packed length: 2 x 40 = 80 values a row are not whole groups of 32 (nor of 64)
    quant::QuantizedWeight q = good;
    q.data = full({4, 40}, 0x88, DType::u8);
    each(q, ValueError{""}, "pack 80 values a row, not a whole number of groups of 32");
    q.group_size = 64;
    each(q, ValueError{""}, "not a whole number of groups of 64");
  }
  {  // pad outside [0, G): no zero points exist in this format (symmetric), the pad is the other offset
    quant::QuantizedWeight q = good;
    q.pad = -1;
    each(q, ValueError{""}, "with pad -1 do not fill whole groups of 32");
    q.pad = 32;
    each(q, ValueError{""}, "with pad 32 do not fill whole groups of 32");
  }
  {  // codes of the wrong dtype or rank
    quant::QuantizedWeight q = good;
    q.data = q.data.to(DType::i8);
    each(q, DTypeError{""}, "expects u8 codes, got i8");
    q.data = full({4, 32, 1}, 0x88, DType::u8);
    each(q, ShapeError{""}, "codes must be 2-D");
  }
  {  // int8 formats have no groups
    quant::QuantizedWeight q = quant::quantize_weight(randn({4, 64}), Format::int8_weight_only);
    q.group_size = 32;
    each(q, ValueError{""}, "has no groups: group_size must be 0 and pad 0, got 32 and 0");
    q.group_size = 0;
    q.scale = zeros({5});
    each(q, ShapeError{""}, "scale shape [5] does not match codes [4, 64] (expected [4])");
  }
  {  // undefined, unknown format
    each(quant::QuantizedWeight{}, ValueError{""}, "the quantized weight is undefined");
    quant::QuantizedWeight q = good;
    q.format = static_cast<Format>(7);
    each(q, ValueError{""}, "unknown quantized format 7");
  }
  // The good one passes everywhere and matches its dequantized product.
  CHECK_NOTHROW(quant::validate(good, "test"));
  const Tensor y = quant::weight_only_linear(x, good);
  CHECK(test_util::max_abs_diff(y, matmul(x, quant::dequantize(good).t())) < 1e-4);
}
