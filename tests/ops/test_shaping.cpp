// Shaping ops against PyTorch 1.13: values and input gradients written down from torch
// (x = arange(numel).reshape(shape) in f64, upstream gradient G[i] = (3 i mod 7) - 3 over
// the output in row-major order), linspace bit patterns, special values, and every error
// path's type and message.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;

namespace {

Tensor ids(const std::vector<int64_t>& v) { return Tensor::from_vector(v); }
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }

Tensor iota_f64(const Shape& s) { return arange(double(numel(s)), DType::f64).reshape(s); }

Tensor upstream(const Shape& s) {
  std::vector<double> g;
  for (int64_t i = 0; i < numel(s); ++i) g.push_back(double((3 * i) % 7 - 3));
  return f64(g, s);
}

struct Ref {
  const char* name;
  Shape in, out;
  Tensor (*fn)(const Tensor&);
  std::vector<double> y, dx;
};

// clang-format off
const std::vector<Ref>& refs() {
  static const std::vector<Ref> r = {
    // torch 1.13: F.pad(x, (3, 1), mode='reflect')
    {"pad reflect 3-D (3, 1)", {1, 2, 4}, {1, 2, 8},
     [](const Tensor& x) { return pad(x, {3, 1}, PadMode::reflect); },
     {3, 2, 1, 0, 1, 2, 3, 2, 7, 6, 5, 4, 5, 6, 7, 6},
     {-1, 5, -5, -2, 2, -3, 4, -3}},
    // torch 1.13: F.pad(x, (2, 3), mode='replicate')
    {"pad replicate 3-D (2, 3)", {1, 2, 4}, {1, 2, 9},
     [](const Tensor& x) { return pad(x, {2, 3}, PadMode::replicate); },
     {0, 0, 0, 1, 2, 3, 3, 3, 3, 4, 4, 4, 5, 6, 7, 7, 7, 7},
     {0, -1, 2, -4, 4, -2, 1, -1}},
    // torch 1.13: F.pad(x, (1, 2, -1, 1), value=-1)
    {"pad constant 3-D (1, 2, -1, 1) value -1", {1, 2, 4}, {1, 2, 7},
     [](const Tensor& x) { return pad(x, {1, 2, -1, 1}, PadMode::constant, -1.0); },
     {-1, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1},
     {0, 0, 0, 0, 0, 3, -1, 2}},
    // torch 1.13: F.pad(x, (1, 2), mode='circular')
    {"pad circular 3-D (1, 2)", {1, 2, 4}, {1, 2, 7},
     [](const Tensor& x) { return pad(x, {1, 2}, PadMode::circular); },
     {3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5},
     {-2, 4, -1, -1, -2, 4, -1, -1}},
    // torch 1.13: F.pad(x, (2, 1, 1, 2), mode='reflect')
    {"pad reflect 4-D (2, 1, 1, 2)", {1, 1, 3, 4}, {1, 1, 6, 7},
     [](const Tensor& x) { return pad(x, {2, 1, 1, 2}, PadMode::reflect); },
     {6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6, 10, 9, 8, 9, 10, 11, 10, 6, 5, 4, 5, 6, 7,
      6, 2, 1, 0, 1, 2, 3, 2},
     {6, -2, 0, -4, 9, -3, 0, -6, 3, -1, 0, -2}},
    // torch 1.13: F.pad(x, (1, 3, 2, 0), mode='replicate')
    {"pad replicate 4-D (1, 3, 2, 0)", {1, 1, 3, 4}, {1, 1, 5, 8},
     [](const Tensor& x) { return pad(x, PadFuncOptions({1, 3, 2, 0}).mode(PadMode::replicate)); },
     {0, 0, 1, 2, 3, 3, 3, 3, 0, 0, 1, 2, 3, 3, 3, 3, 0, 0, 1, 2, 3, 3, 3, 3, 4, 4, 5, 6, 7, 7, 7, 7, 8, 8, 9,
      10, 11, 11, 11, 11},
     {2, 4, -1, -5, 1, -2, 1, -1, 0, 1, -3, 4}},
    // torch 1.13: F.pad(x, (1, 0, 2, 1), value=9)
    {"pad constant 4-D (1, 0, 2, 1) value 9", {1, 1, 3, 4}, {1, 1, 6, 5},
     [](const Tensor& x) { return pad(x, PadFuncOptions({1, 0, 2, 1}).value(9.0)); },
     {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0, 1, 2, 3, 9, 4, 5, 6, 7, 9, 8, 9, 10, 11, 9, 9, 9, 9, 9},
     {2, -2, 1, -3, 3, -1, 2, -2, -3, 0, 3, -1}},
    // torch 1.13: F.pad(x, (2, 1, 0, 2), mode='circular')
    {"pad circular 4-D (2, 1, 0, 2)", {1, 1, 3, 4}, {1, 1, 5, 7},
     [](const Tensor& x) { return nn::functional::pad(x, {2, 1, 0, 2}, PadMode::circular); },
     {2, 3, 0, 1, 2, 3, 0, 6, 7, 4, 5, 6, 7, 4, 10, 11, 8, 9, 10, 11, 8, 2, 3, 0, 1, 2, 3, 0, 6, 7, 4, 5, 6, 7, 4},
     {8, -2, -2, -4, 8, -2, -2, -4, 4, -1, -1, -2}},
    // torch 1.13: F.pad(x, (-1, 2, 2, -1), mode='reflect')
    {"pad reflect 4-D crops (-1, 2, 2, -1)", {1, 1, 3, 4}, {1, 1, 4, 5},
     [](const Tensor& x) { return pad(x, {-1, 2, 2, -1}, PadMode::reflect); },
     {9, 10, 11, 10, 9, 5, 6, 7, 6, 5, 1, 2, 3, 2, 1, 5, 6, 7, 6, 5},
     {0, -4, 3, -2, 0, -1, 6, -4, 0, -1, -1, 3}},
    // torch 1.13: F.pad(x, (2, -3), mode='replicate')
    {"pad replicate 3-D crops (2, -3)", {1, 2, 4}, {1, 2, 3},
     [](const Tensor& x) { return pad(x, {2, -3}, PadMode::replicate); },
     {0, 0, 0, 4, 4, 4},
     {0, 0, 0, 0, -1, 0, 0, 0}},
    // torch 1.13: F.pad(x, (-1, 3), mode='circular')
    {"pad circular 3-D crops (-1, 3)", {1, 2, 4}, {1, 2, 6},
     [](const Tensor& x) { return pad(x, {-1, 3}, PadMode::circular); },
     {1, 2, 3, 1, 2, 3, 5, 6, 7, 5, 6, 7},
     {0, -4, 2, 1, 0, 4, -4, 2}},
    // torch 1.13: F.pad(x, (1, 1, 1, 0, 1, 1), mode='reflect')
    {"pad reflect 5-D (1, 1, 1, 0, 1, 1)", {1, 1, 2, 2, 3}, {1, 1, 4, 3, 5},
     [](const Tensor& x) { return pad(x, {1, 1, 1, 0, 1, 1}, PadMode::reflect); },
     {10, 9, 10, 11, 10, 7, 6, 7, 8, 7, 10, 9, 10, 11, 10, 4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4, 10, 9,
      10, 11, 10, 7, 6, 7, 8, 7, 10, 9, 10, 11, 10, 4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4},
     {0, -3, 5, 0, -6, 3, 1, 0, -1, 2, 0, -2}},
    // torch 1.13: torch.roll(x, (-1, 5), (0, 1))
    {"roll (-1, 5) dims (0, 1)", {3, 4}, {3, 4},
     [](const Tensor& x) { return roll(x, {-1, 5}, {0, 1}); },
     {7, 4, 5, 6, 11, 8, 9, 10, 3, 0, 1, 2},
     {3, -1, 2, 0, 0, 3, -1, -3, -2, 1, -3, 2}},
    // torch 1.13: torch.roll(x, -5)
    {"roll flattened -5", {3, 4}, {3, 4},
     [](const Tensor& x) { return roll(x, -5); },
     {5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4},
     {-3, 0, 3, -1, 2, -3, 0, 3, -1, 2, -2, 1}},
    // torch 1.13: torch.roll(x, (1, -2), (2, 0))
    {"roll 3-D (1, -2) dims (2, 0)", {3, 2, 4}, {3, 2, 4},
     [](const Tensor& x) { return roll(x, {1, -2}, {2, 0}); },
     {19, 16, 17, 18, 23, 20, 21, 22, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14},
     {3, -1, 2, 0, 1, -3, 0, -2, -1, 2, -2, 3, -3, 0, 3, 1, 0, 3, -1, -3, -2, 1, -3, 2}},
    // torch 1.13: torch.repeat_interleave(x, torch.tensor([2, 0, 3]), 0)
    {"repeat_interleave [2, 0, 3] dim 0", {3, 2}, {5, 2},
     [](const Tensor& x) { return repeat_interleave(x, ids({2, 0, 3}), 0); },
     {0, 1, 0, 1, 4, 5, 4, 5, 4, 5},
     {0, -1, 0, 0, 3, -2}},
    // torch 1.13: torch.repeat_interleave(x, torch.tensor([1, 3]), -1)
    {"repeat_interleave [1, 3] dim -1", {3, 2}, {3, 4},
     [](const Tensor& x) { return repeat_interleave(x, ids({1, 3}), -1); },
     {0, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5},
     {-3, 2, 2, -4, 0, 4}},
    // torch 1.13: torch.repeat_interleave(x, torch.tensor([0, 1, 2, 0, 1, 2]))
    {"repeat_interleave [0, 1, 2, 0, 1, 2] flattened", {3, 2}, {6},
     [](const Tensor& x) { return repeat_interleave(x, ids({0, 1, 2, 0, 1, 2})); },
     {1, 2, 2, 4, 5, 5},
     {0, -3, 3, 0, -1, 0}},
    // torch 1.13: torch.repeat_interleave(x, torch.tensor([2]), 1)
    {"repeat_interleave [2] dim 1 (one count)", {3, 2}, {3, 4},
     [](const Tensor& x) { return repeat_interleave(x, ids({2}), 1); },
     {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5},
     {-3, 2, 0, -2, 3, 1}},
    // torch 1.13: torch.diagonal(x, -1)
    {"diagonal -1 of 3x4", {3, 4}, {2},
     [](const Tensor& x) { return diagonal(x, -1); },
     {4, 9},
     {0, 0, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0}},
    // torch 1.13: torch.diagonal(x, -2)
    {"diagonal -2 of 3x4", {3, 4}, {1},
     [](const Tensor& x) { return diagonal(x, -2); },
     {8},
     {0, 0, 0, 0, 0, 0, 0, 0, -3, 0, 0, 0}},
    // torch 1.13: torch.diagonal(x, 2)
    {"diagonal 2 of 3x4", {3, 4}, {2},
     [](const Tensor& x) { return diagonal(x, 2); },
     {2, 7},
     {0, 0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    // torch 1.13: torch.diagonal(x, -1)
    {"diagonal -1 of 4x3", {4, 3}, {3},
     [](const Tensor& x) { return diagonal(x, -1); },
     {3, 7, 11},
     {0, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0, 3}},
    // torch 1.13: torch.diagonal(x, -3)
    {"diagonal -3 of 4x3", {4, 3}, {1},
     [](const Tensor& x) { return diagonal(x, -3); },
     {9},
     {0, 0, 0, 0, 0, 0, 0, 0, 0, -3, 0, 0}},
    // torch 1.13: torch.diagonal(x, -1, 2, 1)
    {"diagonal -1 dims (2, 1) of 2x3x4", {2, 3, 4}, {2, 3},
     [](const Tensor& x) { return diagonal(x, -1, 2, 1); },
     {1, 6, 11, 13, 18, 23},
     {0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, -1, 0, 0, 0, 0, 2, 0, 0, 0, 0, -2}},
    // torch 1.13: torch.diagonal(x, 1, -1, 0)
    {"diagonal 1 dims (-1, 0) of 2x3x4", {2, 3, 4}, {3, 1},
     [](const Tensor& x) { return diagonal(x, 1, -1, 0); },
     {12, 16, 20},
     {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0}},
    // torch 1.13: torch.flip(x, (0, 2))
    {"flip dims (0, 2)", {2, 2, 3}, {2, 2, 3},
     [](const Tensor& x) { return flip(x, {0, 2}); },
     {8, 7, 6, 11, 10, 9, 2, 1, 0, 5, 4, 3},
     {0, -3, 1, 2, -1, 3, 3, 0, -3, -2, 2, -1}},
    // torch 1.13: x.repeat(2, 1, 3)
    {"repeat (2, 1, 3)", {2, 2}, {2, 2, 6},
     [](const Tensor& x) { return repeat(x, {2, 1, 3}); },
     {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3},
     {0, -3, 3, 0}},
    // torch 1.13: torch.tile(x, (2,))
    {"tile (2,)", {2, 2}, {2, 4},
     [](const Tensor& x) { return tile(x, {2}); },
     {0, 1, 0, 1, 2, 3, 2, 3},
     {0, -1, 3, -5}},
    // torch 1.13: torch.tril(x, -1)
    {"tril -1 batched", {2, 3, 4}, {2, 3, 4},
     [](const Tensor& x) { return tril(x, -1); },
     {0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 20, 21, 0, 0},
     {0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, -3, 0, 0}},
    // torch 1.13: torch.triu(x, 1)
    {"triu 1 batched", {2, 4, 3}, {2, 4, 3},
     [](const Tensor& x) { return triu(x, 1); },
     {0, 1, 2, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 13, 14, 0, 0, 17, 0, 0, 0, 0, 0, 0},
     {0, 0, 3, 0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 1, -3, 0, 0, -1, 0, 0, 0, 0, 0, 0}},
    // torch 1.13: torch.diag(x, -1)
    {"diag 1-D offset -1", {3}, {4, 4},
     [](const Tensor& x) { return diag(x, -1); },
     {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0},
     {2, 3, -3}},
    // torch 1.13: torch.diag(x, 1)
    {"diag 2-D offset 1", {3, 4}, {3},
     [](const Tensor& x) { return diag(x, 1); },
     {1, 6, 11},
     {0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
    // torch 1.13: torch.movedim(x, (0, 1), (2, 0))
    {"movedim (0, 1) -> (2, 0)", {2, 3, 4, 1}, {3, 4, 2, 1},
     [](const Tensor& x) { return movedim(x, {0, 1}, {2, 0}); },
     {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23},
     {-3, 3, 2, 1, 0, -1, -2, -3, 3, 2, 1, 0, 0, -1, -2, -3, 3, 2, 1, 0, -1, -2, -3, 3}},
  };
  return r;
}
// clang-format on

std::vector<uint32_t> bits(const Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

}  // namespace

TEST_CASE("shaping ops: PyTorch 1.13 values and input gradients") {
  for (const Ref& r : refs()) {
    INFO("case: ", std::string(r.name));
    Tensor x = iota_f64(r.in).requires_grad_();
    Tensor y = r.fn(x);
    CHECK(tc::str(y.shape()) == tc::str(r.out));
    CHECK(tc::diff(y, r.y) == "");
    y.backward(upstream(y.shape()));
    REQUIRE(x.grad().defined());
    CHECK(tc::diff(x.grad(), r.dx) == "");
    // The same through a non-contiguous input holding the same values.
    std::vector<double> spread(std::size_t(2 * numel(r.in)), -99.0);
    for (std::size_t i = 0; i < spread.size(); i += 2) spread[i] = double(i / 2);
    Tensor xt = f64(spread, {int64_t(spread.size())}).slice(0, 0, int64_t(spread.size()), 2).reshape(r.in);
    REQUIRE((xt.numel() <= 1 || !xt.is_contiguous()));
    CHECK(tc::diff(r.fn(xt), r.y) == "");
  }
}

TEST_CASE("linspace: PyTorch 1.13's values bit for bit") {
  // torch 1.13: torch.linspace(0, 1, 7).numpy().view(np.uint32)
  CHECK(bits(linspace(0, 1, 7)) ==
        std::vector<uint32_t>{0, 1042983595, 1051372203, 1056964608, 1059760810, 1062557013, 1065353216});
  // torch 1.13: torch.linspace(-1, 3.3, 5) (bits)
  CHECK(bits(linspace(-1, 3.3, 5)) ==
        std::vector<uint32_t>{3212836864, 1033476512, 1066611506, 1074685542, 1079194419});
  // torch 1.13: torch.linspace(0, 1, 20) (bits; 16 values from the vectorized loop)
  CHECK(bits(linspace(0, 1, 20)) == std::vector<uint32_t>{0,          1029149750, 1037538358, 1042394920, 1045926966,
                                                          1049017506, 1050783528, 1052549551, 1054315574, 1056081597,
                                                          1057406114, 1058289125, 1059172136, 1060055148, 1060938159,
                                                          1061821170, 1062704182, 1063587193, 1064470205, 1065353216});
  // torch 1.13: torch.linspace(-2.5, 100, 50) (bits)
  CHECK(bits(linspace(-2.5, 100, 50)) ==
        std::vector<uint32_t>{
            3223322624, 3201366728, 1071088284, 1081188852, 1086046542, 1090433442, 1092669690, 1094863140, 1097056590,
            1099078844, 1100175569, 1101272294, 1102369018, 1103465744, 1104562468, 1105659193, 1106755918, 1107574449,
            1108122812, 1108671174, 1109219537, 1109767899, 1110316262, 1110864624, 1111412986, 1111961348, 1112509711,
            1113058073, 1113606436, 1114154798, 1114703160, 1115251523, 1115742375, 1116016556, 1116290737, 1116564919,
            1116839100, 1117113281, 1117387462, 1117661644, 1117935825, 1118210006, 1118484187, 1118758369, 1119032550,
            1119306731, 1119580912, 1119855094, 1120129275, 1120403456});
  // torch 1.13: torch.linspace(0, 1, 31, dtype=torch.float64), printed with %.17g
  Tensor d = linspace(0, 1, 31, DType::f64);
  CHECK(d.dtype() == DType::f64);
  CHECK(tc::diff(d, {0,
                     0.033333333333333333,
                     0.066666666666666666,
                     0.10000000000000001,
                     0.13333333333333333,
                     0.16666666666666666,
                     0.20000000000000001,
                     0.23333333333333334,
                     0.26666666666666666,
                     0.29999999999999999,
                     0.33333333333333331,
                     0.3666666666666667,
                     0.40000000000000002,
                     0.43333333333333335,
                     0.46666666666666667,
                     0.5,
                     0.53333333333333333,
                     0.56666666666666665,
                     0.59999999999999998,
                     0.6333333333333333,
                     0.66666666666666663,
                     0.69999999999999996,
                     0.73333333333333328,
                     0.76666666666666661,
                     0.80000000000000004,
                     0.83333333333333337,
                     0.8666666666666667,
                     0.90000000000000002,
                     0.93333333333333335,
                     0.96666666666666667,
                     1}) == "");
  // torch 1.13: steps 0 -> [], 1 -> [start], equal ends, an infinite or NaN end -> all NaN
  CHECK(tc::str(linspace(0, 1, 0).shape()) == "[0]");
  CHECK(tc::diff(linspace(2, 5, 1), {2}) == "");
  CHECK(tc::diff(linspace(2, 2, 3), {2, 2, 2}) == "");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(tc::diff(linspace(0, inf, 3), {nan, nan, nan}) == "");
  CHECK(tc::diff(linspace(0, nan, 3), {nan, nan, nan}) == "");
  CHECK_THROWS_MSG(linspace(0, 1, -1), ValueError, "linspace: number of steps must be non-negative, got -1");
  CHECK_THROWS_MSG(linspace(0, 1, 3, DType::b8), DTypeError, "linspace: needs a numeric dtype");
}

TEST_CASE("shaping ops: each recorded backward is itself differentiable (gradcheck of the closure)") {
  // Until the engine has create_graph, call a node's closure directly on a g that requires
  // grad: it must build a graph, and that graph's gradient must pass gradcheck.
  using Fn = Tensor (*)(const Tensor&);
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"flip",
       [](const Tensor& x) {
         return flip(x, {0, -1});
       }},
      {"tril", [](const Tensor& x) { return tril(x, -1); }},
      {"triu", [](const Tensor& x) { return triu(x, 1); }},
      {"diagonal", [](const Tensor& x) { return diagonal(x, -1, 1, 0); }},
      {"diag", [](const Tensor& x) { return diag(x.select(0, 0), 1); }},
      {"pad",
       [](const Tensor& x) {
         return pad(x, {2, -1, 1, 0}, PadMode::constant, 3.0);
       }},
  };
  for (const auto& name_op : ops) {
    const auto& name = name_op.first;
    const auto& op = name_op.second;
    INFO("op: ", std::string(name));
    Tensor x = randn({3, 4}, DType::f64).requires_grad_();
    Tensor y = op(x);
    REQUIRE(y.grad_fn());
    std::shared_ptr<Node> node = y.grad_fn();
    auto closure = [node](const std::vector<Tensor>& in) {
      std::vector<bool> need(node->inputs.size(), true);
      return node->backward(in[0], NeedsGrad(need))[0];
    };
    Tensor g = randn(y.shape(), DType::f64).requires_grad_();
    Tensor gx = closure({g});
    CHECK(gx.requires_grad());
    CHECK(gradcheck(closure, {g}, {.name = name}).ok);
    // And one level further: the backward of the backward.
    if (gx.grad_fn()) {
      std::shared_ptr<Node> node2 = gx.grad_fn();
      auto closure2 = [node2](const std::vector<Tensor>& in) {
        std::vector<bool> need(node2->inputs.size(), true);
        return node2->backward(in[0], NeedsGrad(need))[0];
      };
      Tensor gg = randn(gx.shape(), DType::f64).requires_grad_();
      CHECK(gradcheck(closure2, {gg}, {.name = name}).ok);
    }
  }
}

TEST_CASE("pad: the ops_pad fixture (PyTorch 1.13 F.pad, 1-D/2-D/3-D padding of 3-D/4-D/5-D inputs)") {
  const test_util::Fixture f = test_util::load_fixture("ops_pad");
  for (std::string nd : {"1d", "2d", "3d"}) {
    const Tensor& input = f.at(nd + ".input");
    const std::vector<int64_t> p = f.at(nd + ".pad").to_vector<int64_t>();
    for (auto name_mode : {std::pair<std::string, PadMode>{"constant", PadMode::constant},
                           {"reflect", PadMode::reflect},
                           {"replicate", PadMode::replicate}}) {
      // Not a structured binding: clang before 16 cannot capture one (INFO is a lambda).
      const std::string& name = name_mode.first;
      const PadMode mode = name_mode.second;
      INFO("ops_pad ", nd, ".", name);
      Tensor x = input.detach().requires_grad_();
      Tensor y = pad(x, p, mode, mode == PadMode::constant ? 1.5 : 0.0);
      CHECK(tc::diff(y, f.at(nd + "." + name + ".out"), 1e-12) == "");
      y.backward(f.at(nd + "." + name + ".upstream"));
      CHECK(tc::diff(x.grad(), f.at(nd + "." + name + ".grad"), 1e-12) == "");
    }
  }
}
