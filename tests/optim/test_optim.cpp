// Optimizers, learning-rate schedulers and gradient clipping.
//
// The update rules are checked twice over: against a plain double-precision
// reimplementation of torch.optim 1.13's formulas written here (reference_trajectory),
// and against numbers printed by real torch.optim for the same initial values and
// gradients (tools/optim_reference.py, pasted into kTorchTrajectories).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;
namespace optim = ag::optim;

using test_util::map_diff;

namespace {

// ---- values shared with tools/optim_reference.py ----------------------------------
// One (2, 3) parameter, kSteps steps. Every value is exact in binary (f32 included),
// so the f32 runs start from the same numbers as the f64 ones.
constexpr int kN = 6;
constexpr int kSteps = 6;
const Shape kShape{2, 3};
constexpr double kScales[kSteps] = {2.0, 1.0, 0.5, 1.5, 0.25, 0.125};  // shrinking: amsgrad matters

double p0(int i) { return 0.25 * ((i * 5) % 7) - 0.75; }
double grad_at(int k, int i) { return kScales[k] * ((((3 * i + 5 * k) % 9) - 4) / 4.0); }

std::vector<double> p0_values() {
  std::vector<double> v;
  for (int i = 0; i < kN; ++i) v.push_back(p0(i));
  return v;
}
std::vector<double> grad_values(int k) {
  std::vector<double> v;
  for (int i = 0; i < kN; ++i) v.push_back(grad_at(k, i));
  return v;
}

Tensor make_param(const std::vector<double>& v, const Shape& shape, DType dtype) {
  Tensor p = Tensor::from_vector(v, shape).to(dtype).clone();
  p.requires_grad_(true);
  return p;
}

void set_grad(Tensor& p, const std::vector<double>& g) {
  p.set_grad(Tensor::from_vector(g, p.shape()).to(p.dtype()).clone());
}

// ---- configurations (same order and values as CONFIGS in tools/optim_reference.py) ----
enum class Algo { sgd, adam, adamw };

struct Hyper {
  const char* name;
  Algo algo;
  double lr;
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  double weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool amsgrad = false;
};

const std::vector<Hyper> kConfigs = {
    {.name = "sgd", .algo = Algo::sgd, .lr = 0.1},
    {.name = "sgd_wd", .algo = Algo::sgd, .lr = 0.1, .weight_decay = 0.05},
    {.name = "sgd_momentum", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9},
    {.name = "sgd_dampening", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9, .dampening = 0.3},
    {.name = "sgd_nesterov", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9, .nesterov = true},
    {.name = "sgd_nesterov_wd", .algo = Algo::sgd, .lr = 0.05, .momentum = 0.8, .nesterov = true, .weight_decay = 0.1},
    {.name = "sgd_all", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.5, .dampening = 0.5, .weight_decay = 0.1},
    {.name = "adam", .algo = Algo::adam, .lr = 0.01},
    {.name = "adam_wd", .algo = Algo::adam, .lr = 0.01, .weight_decay = 0.1},
    {.name = "adam_amsgrad", .algo = Algo::adam, .lr = 0.01, .beta1 = 0.8, .beta2 = 0.9, .amsgrad = true},
    {.name = "adam_amsgrad_wd",
     .algo = Algo::adam,
     .lr = 0.02,
     .weight_decay = 0.05,
     .beta1 = 0.8,
     .beta2 = 0.9,
     .eps = 1e-6,
     .amsgrad = true},
    {.name = "adamw", .algo = Algo::adamw, .lr = 0.01, .weight_decay = 0.01},
    {.name = "adamw_amsgrad",
     .algo = Algo::adamw,
     .lr = 0.01,
     .weight_decay = 0.1,
     .beta1 = 0.8,
     .beta2 = 0.9,
     .amsgrad = true},
};

const Hyper& config(const std::string& name) {
  for (const Hyper& h : kConfigs)
    if (name == h.name) return h;
  throw std::logic_error("no config " + name);
}

std::unique_ptr<optim::Optimizer> make_optimizer(const Hyper& h, const optim::NamedParams& params) {
  if (h.algo == Algo::sgd)
    return std::make_unique<optim::SGD>(params, optim::SGDOptions(h.lr)
                                                    .momentum(h.momentum)
                                                    .dampening(h.dampening)
                                                    .nesterov(h.nesterov)
                                                    .weight_decay(h.weight_decay));
  if (h.algo == Algo::adam)
    return std::make_unique<optim::Adam>(
        params,
        optim::AdamOptions(h.lr).betas({h.beta1, h.beta2}).eps(h.eps).weight_decay(h.weight_decay).amsgrad(h.amsgrad));
  return std::make_unique<optim::AdamW>(
      params,
      optim::AdamWOptions(h.lr).betas({h.beta1, h.beta2}).eps(h.eps).weight_decay(h.weight_decay).amsgrad(h.amsgrad));
}

// ---- independent reference: torch.optim 1.13 (single-tensor path) in double ----------
// SGD:   d = g + wd p;  buf = d on the first step, else mom buf + (1 - damp) d;
//        d = nesterov ? d + mom buf : buf;  p -= lr d
// Adam:  g += wd p (Adam) | p *= 1 - lr wd (AdamW);  m = b1 m + (1 - b1) g;
//        v = b2 v + (1 - b2) g^2;  vmax = max(vmax, v);
//        p -= lr / (1 - b1^t) * m / (sqrt(v or vmax) / sqrt(1 - b2^t) + eps)
std::vector<std::vector<double>> reference_trajectory(const Hyper& h) {
  std::vector<double> p = p0_values(), buf(kN, 0.0), m(kN, 0.0), v(kN, 0.0), vmax(kN, 0.0);
  std::vector<std::vector<double>> out;
  for (int k = 0; k < kSteps; ++k) {
    const int t = k + 1;
    for (int i = 0; i < kN; ++i) {
      double g = grad_at(k, i);
      if (h.algo == Algo::sgd) {
        double d = g + h.weight_decay * p[i];
        if (h.momentum != 0) {
          buf[i] = k == 0 ? d : h.momentum * buf[i] + (1 - h.dampening) * d;
          d = h.nesterov ? d + h.momentum * buf[i] : buf[i];
        }
        p[i] -= h.lr * d;
        continue;
      }
      if (h.algo == Algo::adamw)
        p[i] *= 1 - h.lr * h.weight_decay;
      else
        g += h.weight_decay * p[i];
      m[i] = h.beta1 * m[i] + (1 - h.beta1) * g;
      v[i] = h.beta2 * v[i] + (1 - h.beta2) * g * g;
      vmax[i] = std::max(vmax[i], v[i]);
      double bc1 = 1 - std::pow(h.beta1, t), bc2 = 1 - std::pow(h.beta2, t);
      double denom = std::sqrt(h.amsgrad ? vmax[i] : v[i]) / std::sqrt(bc2) + h.eps;
      p[i] -= h.lr / bc1 * (m[i] / denom);
    }
    out.push_back(p);
  }
  return out;
}

// ---- real torch.optim ---------------------------------------------------------------
struct TorchTrajectory {
  const char* name;
  std::vector<std::vector<double>> steps;
};

const std::vector<TorchTrajectory> kTorchTrajectories = {
    // Printed by tools/optim_reference.py with torch 1.13.0a0 (Debian python3-torch 1.13.1):
    // the parameter after each step, float64.
    {"sgd",
     {
         {-0.55, 0.55, -0.1, -0.3, 0.8, 0.15},
         {-0.5750000000000001, 0.45000000000000007, -0.05, -0.325, 0.7000000000000001, 0.2},
         {-0.5375000000000001, 0.45000000000000007, -0.08750000000000001, -0.28750000000000003, 0.7000000000000001,
          0.1625},
         {-0.6125, 0.6000000000000001, -0.05, -0.36250000000000004, 0.8500000000000001, 0.2},
         {-0.6000000000000001, 0.5937500000000001, -0.07500000000000001, -0.35000000000000003, 0.8437500000000001,
          0.17500000000000002},
         {-0.6093750000000001, 0.6031250000000001, -0.07500000000000001, -0.35937500000000006, 0.8531250000000001,
          0.17500000000000002},
     }},
    {"sgd_wd",
     {
         {-0.54625, 0.5475, -0.1, -0.2975, 0.79625, 0.14875},
         {-0.56851875, 0.4447625, -0.0495, -0.3210125, 0.69226875, 0.19800625},
         {-0.5281761562499999, 0.4425386875, -0.08675250000000001, -0.28190743749999997, 0.68880740625, 0.15951621875},
         {-0.60053527546875, 0.5903259940625001, -0.04881873750000001, -0.35549790031249995, 0.83536336921875,
          0.19621863765625},
         {-0.5850325990914063, 0.5811243640921876, -0.0735746438125, -0.34122041081093746, 0.8249365523726563,
          0.17023754446796874},
         {-0.5914824360959492, 0.5875937422717267, -0.07320677059343751, -0.3488893087568828, 0.830186869610793,
          0.1693863567456289},
     }},
    {"sgd_momentum",
     {
         {-0.55, 0.55, -0.1, -0.3, 0.8, 0.15},
         {-0.395, 0.49500000000000005, -0.14, -0.14499999999999996, 0.745, 0.10999999999999999},
         {-0.218, 0.44550000000000006, -0.21350000000000002, 0.03200000000000005, 0.6955, 0.03649999999999997},
         {-0.13369999999999999, 0.55095, -0.24215000000000003, 0.11630000000000006, 0.80095, 0.00784999999999996},
         {-0.045329999999999974, 0.6396050000000001, -0.29293500000000006, 0.20467000000000007, 0.8896050000000001,
          -0.042935000000000056},
         {0.024828000000000038, 0.7287695000000001, -0.3386415000000001, 0.27482800000000007, 0.9787695000000001,
          -0.08864150000000007},
     }},
    {"sgd_dampening",
     {
         {-0.55, 0.55, -0.1, -0.3, 0.8, 0.15},
         {-0.3875, 0.525, -0.15500000000000003, -0.13749999999999998, 0.775, 0.09499999999999999},
         {-0.215, 0.5025000000000001, -0.23075000000000004, 0.03500000000000004, 0.7525000000000001,
          0.019249999999999975},
         {-0.11224999999999996, 0.58725, -0.27267500000000006, 0.13775000000000007, 0.83725, -0.02267500000000004},
         {-0.011024999999999924, 0.65915, -0.3279075000000001, 0.2389750000000001, 0.90915, -0.07790750000000006},
         {0.07351500000000011, 0.7304225, -0.3776167500000001, 0.3235150000000001, 0.9804225, -0.12761675000000008},
     }},
    {"sgd_nesterov",
     {
         {-0.37, 0.595, -0.19, -0.12, 0.845, 0.06},
         {-0.2555, 0.44549999999999995, -0.17600000000000002, -0.0054999999999999875, 0.6955, 0.074},
         {-0.058699999999999995, 0.4009499999999999, -0.27965000000000007, 0.19130000000000003, 0.65095,
          -0.02965000000000003},
         {-0.05782999999999999, 0.645855, -0.2679350000000001, 0.19217000000000004, 0.8958550000000001,
          -0.017935000000000038},
         {0.034203000000000025, 0.7193944999999999, -0.3386415000000001, 0.28420300000000004, 0.9693945,
          -0.08864150000000005},
         {0.08797020000000004, 0.80901755, -0.3797773500000001, 0.33797020000000005, 1.05901755, -0.12977735000000007},
     }},
    {"sgd_nesterov_wd",
     {
         {-0.56325, 0.5405, -0.09000000000000001, -0.3155, 0.78825, 0.15775},
         {-0.5142807500000001, 0.4600355, -0.07619000000000001, -0.2695605, 0.70475575, 0.16853025},
         {-0.42897982325000006, 0.4336855805, -0.11856629000000002, -0.18789485549999996, 0.67477054825,
          0.12251867774999999},
         {-0.44143538644075003, 0.5455426166755, -0.10295498539000002, -0.20444952820049994, 0.7825284749157501,
          0.13403087285024998},
         {-0.40789283780838326, 0.5662281043878205, -0.12751361199349, -0.17535480002909543, 0.7987661421671083,
          0.10502442578579772},
         {-0.3925910049079774, 0.5908001120848885, -0.13642471070990062, -0.16475612240451196, 0.8186349945883539,
          0.09141017179356474},
     }},
    {"sgd_all",
     {
         {-0.5425, 0.545, -0.1, -0.295, 0.7925, 0.1475},
         {-0.4485375, 0.514775, -0.1245, -0.20352499999999998, 0.7597875, 0.1205125},
         {-0.38056356249999995, 0.497088625, -0.1548775, -0.138019875, 0.7396323124999999, 0.08766618749999999},
         {-0.38217377593749996, 0.560759994375, -0.1505418625, -0.142077213125, 0.8008565571874999, 0.0895547003125},
         {-0.37481801377656243, 0.586666879090625, -0.1601213344375, -0.137145496121875, 0.8243393967453124,
          0.0775511832171875},
         {-0.37395354262721087, 0.6013744870529844, -0.16411046373406252, -0.13868141013970312, 0.8366466195404921,
          0.07116166875344532},
     }},
    {"adam",
     {
         {-0.74000000005, 0.5099999998, -0.009999999900000002, -0.49000000005, 0.7599999998, 0.2400000001},
         {-0.7342746543328955, 0.5063389645759434, -0.012663370262909686, -0.48427465433289557, 0.7563389645759434,
          0.23733662973709033},
         {-0.7287541597135018, 0.503508973744981, -0.016648183183560702, -0.47875415971350177, 0.753508973744981,
          0.23335181681643932},
         {-0.726507181991403, 0.5067858134949214, -0.017995252896793077, -0.476507181991403, 0.7567858134949214,
          0.23200474710320695},
         {-0.7242986988328926, 0.5093716471504122, -0.020193195844083994, -0.47429869883289266, 0.7593716471504122,
          0.22980680415591603},
         {-0.7226211877795864, 0.5118590343138185, -0.022087538339025898, -0.47262118777958656, 0.7618590343138185,
          0.22791246166097412},
     }},
    {"adam_wd",
     {
         {-0.7400000000481928, 0.5099999997777778, -0.009999999900000002, -0.49000000004878047, 0.7599999997647059,
          0.24000000009756098},
         {-0.7339526408450547, 0.5057950154744281, -0.012655647877437276, -0.48405792211880644, 0.7555389667509225,
          0.23705880842490254},
         {-0.7280369910620618, 0.5022652294081297, -0.016628645145631518, -0.47827148461628116, 0.7516813716034542,
          0.23278794816703147},
         {-0.7251825483227414, 0.5050382338718116, -0.017958165917883726, -0.47561920406031105, 0.754197820881444,
          0.23106997029425427},
         {-0.722298268615411, 0.507044253570018, -0.020133989689835114, -0.4729601446113547, 0.7559100213839602,
          0.22848433394713688},
         {-0.7198626936570615, 0.5088943068536609, -0.022000922306829332, -0.47077817940549715, 0.7574371850213066,
          0.22616271131831978},
     }},
    {"adam_amsgrad",
     {
         {-0.74000000005, 0.5099999998, -0.009999999900000002, -0.49000000005, 0.7599999998, 0.2400000001},
         {-0.7348309818035912, 0.5058486675245191, -0.012142281828854276, -0.4848309818035912, 0.7558486675245191,
          0.23785771817114573},
         {-0.7299227189431226, 0.502922710078243, -0.015969079683619387, -0.47992271894312255, 0.752922710078243,
          0.23403092031638062},
         {-0.7286223395574927, 0.5068162145284744, -0.016640404344136484, -0.4786223395574926, 0.7568162145284744,
          0.23335959565586353},
         {-0.7272492100448, 0.5095920773757737, -0.01852964107035156, -0.4772492100448, 0.7595920773757737,
          0.23147035892964846},
         {-0.7264535707516059, 0.5120619852005783, -0.02000273578020189, -0.47645357075160577, 0.7620619852005783,
          0.22999726421979813},
     }},
    {"adam_amsgrad_wd",
     {
         {-0.7300000098159461, 0.5199999578948254, -0.019999980000020002, -0.48000000987653835, 0.7699999567568503,
          0.23000001975306691},
         {-0.719352379629154, 0.5111708531456032, -0.024268399276509, -0.4694568269477463, 0.7609183486153364,
          0.2254307418422754},
         {-0.7091260146727507, 0.5046401332604038, -0.03189695173902029, -0.4593705368951561, 0.7540620521187062,
          0.2174858596552246},
         {-0.7059146125903415, 0.5119591536034956, -0.03320216410040489, -0.45636815432383887, 0.7611480684613069,
          0.21576336337877672},
         {-0.7025055119640783, 0.5169763990628267, -0.03693232042713647, -0.4531876283099051, 0.7659002235367598,
          0.21158555342751406},
         {-0.7001849733348774, 0.5213344292153922, -0.0398210528276663, -0.45111963882100387, 0.7699711666913369,
          0.20821501497479245},
     }},
    {"adamw",
     {
         {-0.73992500005, 0.5099499998, -0.009999999900000002, -0.48995000005, 0.7599249998, 0.2399750001},
         {-0.7341256618328905, 0.5062379695759635, -0.012662370262919685, -0.4841756593328906, 0.7561879720759633,
          0.23728763223708033},
         {-0.7285317546473135, 0.5033573549480435, -0.01664591694654441, -0.4786067471475635, 0.7532823624477933,
          0.23327909055320561},
         {-0.72621192374975, 0.5065838589624889, -0.01799132206808213, -0.47631190875075, 0.7564838739614889,
          0.23190869293091793},
         {-0.7239308193988646, 0.5091190342320835, -0.02018746588316624, -0.4740557944013646, 0.7589940592295835,
          0.22968755911433392},
         {-0.7221809152636186, 0.5115555094920666, -0.02207978963151983, -0.4723308777686184, 0.761405546987067,
          0.22777024786348057},
     }},
    {"adamw_amsgrad",
     {
         {-0.73925000005, 0.5094999998, -0.009999999900000002, -0.48950000005, 0.7592499998, 0.2397500001},
         {-0.7333417318035411, 0.5048391675247191, -0.012132281828954277, -0.4838414818035412, 0.754339417524719,
          0.23736796817104575},
         {-0.727700127211269, 0.5014083709109183, -0.015946947401890434, -0.47844937746126903, 0.7506591206609182,
          0.23330380234810957},
         {-0.7256720476984279, 0.5048004669902387, -0.01660232511500564, -0.4766705486981778, 0.7538019659904887,
          0.23239917388524436},
         {-0.7235732461380368, 0.5070715293705479, -0.018474959516105713, -0.474820748636787, 0.7558240268717975,
          0.23027753798514405},
         {-0.7220540335987046, 0.5090343656659819, -0.019929579266439935, -0.473550288594956, 0.7575381106697303,
          0.22857416573730857},
     }},
};

// ---- helpers --------------------------------------------------------------------------

// "" when |got - want| <= tol * max(1, |want|) everywhere, else the first mismatch.
std::string diff(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size())
    return "got " + std::to_string(got.size()) + " values, want " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])))) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << i << ": got " << got[i] << ", want " << want[i] << " (diff " << got[i] - want[i] << ")";
      return os.str();
    }
  return "";
}

// The attograd trajectory of one configuration in `dtype`.
std::vector<std::vector<double>> run(const Hyper& h, DType dtype) {
  Tensor p = make_param(p0_values(), kShape, dtype);
  auto opt = make_optimizer(h, {{"w", p}});
  std::vector<std::vector<double>> out;
  for (int k = 0; k < kSteps; ++k) {
    set_grad(p, grad_values(k));
    opt->step();
    out.push_back(p.to_vector<double>());
  }
  return out;
}

// A deep copy: state_dict() shares storage with the optimizer's live state.
ag::TensorMap clone_map(const ag::TensorMap& m) {
  ag::TensorMap out;
  for (auto& [k, t] : m) out.insert(k, t.clone());
  return out;
}

}  // namespace

// ---- update rules ----------------------------------------------------------------------

TEST_CASE("optimizers follow torch.optim 1.13's update formulas in f64 and f32") {
  for (const Hyper& h : kConfigs) {
    CAPTURE(h.name);
    auto want = reference_trajectory(h);
    auto got64 = run(h, DType::f64), got32 = run(h, DType::f32);
    for (int k = 0; k < kSteps; ++k) {
      CAPTURE(k);
      CHECK(diff(got64[k], want[k], 1e-12) == "");
      CHECK(diff(got32[k], want[k], 1e-6) == "");
    }
    // The parameter really moved, so a no-op optimizer could not pass.
    CHECK(diff(want.back(), p0_values(), 1e-3) != "");
  }
}

TEST_CASE("optimizers match numbers from real torch.optim (tools/optim_reference.py)") {
  REQUIRE(kTorchTrajectories.size() == kConfigs.size());
  for (const TorchTrajectory& ref : kTorchTrajectories) {
    CAPTURE(ref.name);
    const Hyper& h = config(ref.name);
    REQUIRE(ref.steps.size() == std::size_t(kSteps));
    auto ours = reference_trajectory(h);
    auto got64 = run(h, DType::f64), got32 = run(h, DType::f32);
    for (int k = 0; k < kSteps; ++k) {
      CAPTURE(k);
      CHECK(diff(ours[k], ref.steps[k], 1e-12) == "");  // the reference above agrees with torch
      CHECK(diff(got64[k], ref.steps[k], 1e-12) == "");
      CHECK(diff(got32[k], ref.steps[k], 1e-6) == "");
    }
  }
}

TEST_CASE("the test's gradients make every option matter") {
  // Each option, switched off, changes the trajectory beyond the tolerance, so a library
  // that ignored it would fail the tests above.
  auto differs = [](Hyper with, auto&& switch_off) {
    Hyper without = with;
    switch_off(without);
    return diff(reference_trajectory(with).back(), reference_trajectory(without).back(), 1e-5) != "";
  };
  CHECK(differs(config("adam_amsgrad"), [](Hyper& h) { h.amsgrad = false; }));
  CHECK(differs(config("adamw_amsgrad"), [](Hyper& h) { h.amsgrad = false; }));
  CHECK(differs(config("sgd_nesterov"), [](Hyper& h) { h.nesterov = false; }));
  CHECK(differs(config("sgd_dampening"), [](Hyper& h) { h.dampening = 0; }));
  CHECK(differs(config("adam_wd"), [](Hyper& h) { h.weight_decay = 0; }));
  CHECK(differs(config("adamw"), [](Hyper& h) { h.weight_decay = 0; }));
  CHECK(differs(config("adamw"), [](Hyper& h) { h.algo = Algo::adam; }));  // decoupled != L2
}

// ---- groups, zero_grad, skipped parameters ----------------------------------------------

TEST_CASE("parameter groups use their own lr and options") {
  Tensor a = make_param({1.0, -2.0}, Shape{2}, DType::f64);
  Tensor b = make_param({0.5, 0.25, -1.0}, Shape{3}, DType::f64);
  optim::SGD sgd({{{{"a", a}}, optim::SGDOptions(0.1)}, {{{"b", b}}, optim::SGDOptions(0.01).momentum(0.9)}});
  REQUIRE(sgd.num_groups() == 2);
  CHECK(sgd.lr(0) == 0.1);
  CHECK(sgd.lr(1) == 0.01);
  CHECK(sgd.options(1).momentum() == 0.9);
  set_grad(a, {1.0, 2.0});
  set_grad(b, {-1.0, 4.0, 0.5});
  sgd.step();
  CHECK(diff(a.to_vector<double>(), {1.0 - 0.1 * 1.0, -2.0 - 0.1 * 2.0}, 1e-15) == "");
  CHECK(diff(b.to_vector<double>(), {0.5 + 0.01, 0.25 - 0.04, -1.0 - 0.005}, 1e-15) == "");
  // Second step: group 1 has momentum (buf = 0.9 buf + g), group 0 does not.
  sgd.step();
  CHECK(diff(a.to_vector<double>(), {0.9 - 0.1, -2.2 - 0.2}, 1e-15) == "");
  CHECK(diff(b.to_vector<double>(), {0.51 + 0.019, 0.21 - 0.076, -1.005 - 0.0095}, 1e-15) == "");

  sgd.set_lr(0.5, 1);
  CHECK(sgd.lr(0) == 0.1);
  CHECK(sgd.lr(1) == 0.5);
  sgd.set_lr(0.25);
  CHECK(sgd.lr(0) == 0.25);
  CHECK(sgd.lr(1) == 0.25);

  // Adam's first step moves each element by about lr * sign(g): lr per group.
  Tensor c = make_param({1.0, 1.0}, Shape{2}, DType::f64), d = make_param({1.0, 1.0}, Shape{2}, DType::f64);
  optim::Adam adam({{{{"c", c}}, optim::AdamOptions(0.1)}});
  adam.add_param_group({{{"d", d}}, optim::AdamOptions(0.001)});
  CHECK(adam.lr(1) == 0.001);
  set_grad(c, {3.0, -0.5});
  set_grad(d, {3.0, -0.5});
  adam.step();
  CHECK(diff(c.to_vector<double>(), {0.9, 1.1}, 1e-7) == "");
  CHECK(diff(d.to_vector<double>(), {0.999, 1.001}, 1e-7) == "");

  // A name may appear in only one group.
  CHECK_THROWS_AS(adam.add_param_group({{{"c", make_param({0.0}, Shape{1}, DType::f64)}}, optim::AdamOptions()}),
                  ag::ValueError);
}

TEST_CASE("zero_grad drops the gradients and parameters without a gradient are skipped") {
  Tensor a = make_param(p0_values(), kShape, DType::f32);
  Tensor b = make_param({1.0, 2.0, 3.0}, Shape{3}, DType::f32);
  optim::Adam adam({{"a", a}, {"b", b}}, optim::AdamOptions(0.01));

  set_grad(a, grad_values(0));  // b has no gradient
  adam.step();
  CHECK(b.to_vector<double>() == std::vector<double>{1.0, 2.0, 3.0});
  CHECK(a.to_vector<double>() != p0_values());
  ag::TensorMap sd = adam.state_dict();
  CHECK(sd.contains("a.step"));
  CHECK(sd.contains("a.exp_avg"));
  CHECK(sd.contains("a.exp_avg_sq"));
  CHECK_FALSE(sd.contains("b.step"));  // no state for a parameter never stepped
  CHECK_FALSE(sd.contains("b.exp_avg"));
  CHECK(sd.at("a.step").item<int64_t>() == 1);

  adam.zero_grad();
  CHECK_FALSE(a.grad().defined());
  CHECK_FALSE(b.grad().defined());
  std::vector<double> a_before = a.to_vector<double>();
  adam.step();  // nothing has a gradient: nothing moves, no step is counted
  CHECK(a.to_vector<double>() == a_before);
  CHECK(adam.state_dict().at("a.step").item<int64_t>() == 1);

  // Per-parameter step counts, as in torch: b starts counting when it first has a grad.
  set_grad(a, grad_values(1));
  set_grad(b, {0.5, -0.5, 1.0});
  adam.step();
  sd = adam.state_dict();
  CHECK(sd.at("a.step").item<int64_t>() == 2);
  CHECK(sd.at("b.step").item<int64_t>() == 1);
  CHECK(diff(b.to_vector<double>(), {0.99, 2.01, 2.99}, 1e-6) == "");

  // SGD skips the same way.
  Tensor c = make_param({1.0, 2.0}, Shape{2}, DType::f64), d = make_param({3.0}, Shape{1}, DType::f64);
  optim::SGD sgd({{"c", c}, {"d", d}}, optim::SGDOptions(0.1).momentum(0.9));
  set_grad(c, {1.0, 1.0});
  sgd.step();
  CHECK(d.to_vector<double>() == std::vector<double>{3.0});
  CHECK_FALSE(sgd.state_dict().contains("d.momentum_buffer"));
  CHECK(sgd.state_dict().contains("c.momentum_buffer"));
}

// ---- optimizer state dicts ------------------------------------------------------------

namespace {

// Two named parameters, as a model would give them.
struct TwoParams {
  Tensor w, b;
  explicit TwoParams(DType dtype)
      : w(make_param(p0_values(), kShape, dtype)), b(make_param({0.5, -0.25, 1.0}, Shape{3}, dtype)) {}
  optim::NamedParams named() const { return {{"encoder.weight", w}, {"decoder.bias", b}}; }
  void set_grads(int k) {
    set_grad(w, grad_values(k));
    set_grad(b, {grad_at(k, 1), -grad_at(k, 4), 0.5 * grad_at(k, 2)});
  }
};

}  // namespace

TEST_CASE("optimizer state_dict / load_state_dict round trip by parameter name") {
  for (const char* name : {"sgd_momentum", "sgd_nesterov_wd", "adam", "adam_amsgrad_wd", "adamw_amsgrad"}) {
    CAPTURE(name);
    const Hyper& h = config(name);
    TwoParams pa(DType::f64), pb(DType::f64);
    auto a = make_optimizer(h, pa.named());
    for (int k = 0; k < 3; ++k) {
      pa.set_grads(k);
      a->step();
    }
    ag::TensorMap sd = a->state_dict();
    CHECK(sd.contains("group.0.lr"));
    if (h.algo == Algo::sgd) {
      CHECK(sd.contains("encoder.weight.momentum_buffer"));
      CHECK(sd.contains("decoder.bias.momentum_buffer"));
    } else {
      for (const char* field : {"step", "exp_avg", "exp_avg_sq"}) {
        CHECK(sd.contains(std::string("encoder.weight.") + field));
        CHECK(sd.contains(std::string("decoder.bias.") + field));
      }
      CHECK(sd.contains("encoder.weight.max_exp_avg_sq") == h.amsgrad);
      CHECK(sd.at("encoder.weight.step").item<int64_t>() == 3);
    }

    // A fresh optimizer over equal parameters, listed in the other order (names, not
    // positions, match state to parameters) and with another lr (the state sets it).
    pb.w.detach().copy_(pa.w);
    pb.b.detach().copy_(pa.b);
    Hyper other = h;
    other.lr = 123.0;
    auto b = make_optimizer(other, {{"decoder.bias", pb.b}, {"encoder.weight", pb.w}});
    b->load_state_dict(sd);
    CHECK(b->lr() == h.lr);
    CHECK(map_diff(b->state_dict(), a->state_dict()) == "");

    // Continuing gives the same numbers as the uninterrupted optimizer, exactly.
    for (int k = 3; k < kSteps; ++k) {
      pa.set_grads(k);
      pb.set_grads(k);
      a->step();
      b->step();
      CHECK(pb.w.to_vector<double>() == pa.w.to_vector<double>());
      CHECK(pb.b.to_vector<double>() == pa.b.to_vector<double>());
    }
  }
}

TEST_CASE("optimizer load_state_dict rejects a bad state and changes nothing") {
  TwoParams p(DType::f32);
  optim::Adam adam(p.named(), optim::AdamOptions(0.01).amsgrad(true));
  for (int k = 0; k < 2; ++k) {
    p.set_grads(k);
    adam.step();
  }
  const ag::TensorMap before = clone_map(adam.state_dict());

  auto with = [&](const std::string& key, const Tensor& t) {
    ag::TensorMap m = clone_map(before);
    m.insert("group.0.lr", ag::scalar_tensor(0.5, DType::f64));  // would change the lr if applied
    m.insert(key, t);
    return m;
  };
  auto check_unchanged = [&] {
    CHECK(map_diff(adam.state_dict(), before) == "");
    CHECK(adam.lr() == 0.01);
  };

  // A state tensor of the wrong shape.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.weight.exp_avg", ag::zeros(Shape{3, 2}))), ag::ShapeError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("decoder.bias.max_exp_avg_sq", ag::zeros(Shape{4}))), ag::ShapeError);
  check_unchanged();
  // A name that is no parameter of this optimizer.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.bias.exp_avg", ag::zeros(Shape{3}))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("nodot", ag::zeros(Shape{3}))), ag::ValueError);
  check_unchanged();
  // Groups that do not exist, or malformed group keys.
  CHECK_THROWS_AS(adam.load_state_dict(with("group.7.lr", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("group.x.lr", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  CHECK_THROWS_AS(adam.load_state_dict(with("group.0.momentum", ag::scalar_tensor(0.1, DType::f64))), ag::ValueError);
  check_unchanged();
  // A step count that is not one integer.
  CHECK_THROWS_AS(adam.load_state_dict(with("encoder.weight.step", ag::scalar_tensor(2.0, DType::f32))),
                  ag::ValueError);
  check_unchanged();

  // After all that, the optimizer still continues exactly like an untouched one.
  TwoParams q(DType::f32);
  optim::Adam control(q.named(), optim::AdamOptions(0.01).amsgrad(true));
  for (int k = 0; k < kSteps; ++k) {
    q.set_grads(k);
    control.step();
    if (k < 2) continue;
    p.set_grads(k);
    adam.step();
    CHECK(p.w.to_vector<double>() == q.w.to_vector<double>());
  }
}

// ---- schedulers --------------------------------------------------------------------------

namespace {

struct OneParam {
  Tensor p = make_param({1.0}, Shape{1}, DType::f64);
};

// Vaswani et al., written independently of NoamScheduler::rate.
double noam(int64_t s, int64_t d_model, double factor, int64_t warmup) {
  const double sd = double(s), w = double(warmup);
  return factor / std::sqrt(double(d_model)) * std::min(1.0 / std::sqrt(sd), sd / (w * std::sqrt(w)));
}

}  // namespace

TEST_CASE("NoamScheduler follows the formula, with step 1 set at construction") {
  OneParam x;
  optim::Adam adam({x.p}, optim::AdamOptions(0.123));  // its own lr is not used
  const int64_t d_model = 16, warmup = 5;
  const double factor = 2.0;
  optim::NoamScheduler sched(adam, d_model, factor, warmup);
  CHECK(sched.last_step() == 0);
  CHECK(sched.get_lr() == doctest::Approx(noam(1, d_model, factor, warmup)).epsilon(1e-14));
  CHECK(adam.lr() == sched.get_lr());
  // At step 1 the linear branch is in force: factor d^-0.5 w^-1.5.
  CHECK(sched.get_lr() == doctest::Approx(2.0 / 4.0 / std::pow(5.0, 1.5)).epsilon(1e-14));

  std::vector<double> lrs{sched.get_lr()};  // lrs[s - 1] is the lr of optimizer step s
  for (int64_t k = 1; k < 3 * warmup; ++k) {
    sched.step();
    CHECK(sched.last_step() == k);
    CHECK(adam.lr() == sched.get_lr());
    CHECK(sched.get_lr() == doctest::Approx(noam(k + 1, d_model, factor, warmup)).epsilon(1e-14));
    lrs.push_back(sched.get_lr());
  }
  // The three named points: 1, warmup (the peak, both branches equal), 2 * warmup.
  CHECK(lrs[0] == doctest::Approx(factor * std::pow(16.0, -0.5) * 1.0 * std::pow(5.0, -1.5)).epsilon(1e-14));
  CHECK(lrs[warmup - 1] == doctest::Approx(factor * 0.25 / std::sqrt(5.0)).epsilon(1e-14));
  CHECK(lrs[2 * warmup - 1] == doctest::Approx(factor * 0.25 / std::sqrt(10.0)).epsilon(1e-14));
  CHECK(*std::max_element(lrs.begin(), lrs.end()) == lrs[warmup - 1]);
  CHECK(optim::NoamScheduler::rate(warmup, d_model, factor, warmup) == doctest::Approx(lrs[warmup - 1]).epsilon(1e-14));

  // The optimizer step after k scheduler steps really uses lr(k + 1).
  OneParam y;
  optim::SGD sgd({y.p}, optim::SGDOptions(1.0));
  optim::NoamScheduler s2(sgd, d_model, factor, warmup);
  for (int64_t s = 1; s <= 3; ++s) {
    double before = y.p.item<double>();
    set_grad(y.p, {1.0});
    sgd.step();
    s2.step();
    CHECK(before - y.p.item<double>() == doctest::Approx(noam(s, d_model, factor, warmup)).epsilon(1e-12));
  }
  CHECK_THROWS_AS(optim::NoamScheduler(sgd, 0, 1.0, 10), ag::ValueError);
  CHECK_THROWS_AS(optim::NoamScheduler(sgd, 16, 1.0, 0), ag::ValueError);
}

TEST_CASE("StepLR, CosineAnnealingLR with warm-up and LambdaLR") {
  SUBCASE("StepLR: base * gamma ^ floor(steps / step_size), per group") {
    OneParam a, b;
    optim::SGD sgd({{{{"a", a.p}}, optim::SGDOptions(0.1)}, {{{"b", b.p}}, optim::SGDOptions(1.0)}});
    optim::StepLR sched(sgd, 3, 0.5);
    for (int64_t k = 0; k < 10; ++k) {
      CAPTURE(k);
      CHECK(sched.get_lr(0) == doctest::Approx(0.1 * std::pow(0.5, double(k / 3))).epsilon(1e-15));
      CHECK(sched.get_lr(1) == doctest::Approx(1.0 * std::pow(0.5, double(k / 3))).epsilon(1e-15));
      sched.step();
    }
    CHECK_THROWS_AS(optim::StepLR(sgd, 0), ag::ValueError);
  }
  SUBCASE("CosineAnnealingLR: linear warm-up, then cosine to eta_min, then held") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.1));
    const int64_t t_max = 10, warmup = 4;
    const double base = 0.1, eta_min = 0.001;
    optim::CosineAnnealingLR sched(sgd, t_max, eta_min, warmup);
    for (int64_t k = 0; k < 15; ++k) {
      CAPTURE(k);
      double want;
      if (k < warmup)
        want = base * double(k + 1) / double(warmup);
      else if (k >= t_max)
        want = eta_min;
      else
        want = eta_min +
               (base - eta_min) * 0.5 * (1 + std::cos(std::numbers::pi * double(k - warmup) / double(t_max - warmup)));
      CHECK(sched.get_lr() == doctest::Approx(want).epsilon(1e-14));
      sched.step();
    }
    CHECK_THROWS_AS(optim::CosineAnnealingLR(sgd, 4, 0.0, 4), ag::ValueError);
  }
  SUBCASE("CosineAnnealingLR without warm-up is torch's closed form") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.5));
    optim::CosineAnnealingLR sched(sgd, 8);
    for (int64_t k = 0; k <= 8; ++k) {
      CAPTURE(k);
      CHECK(sched.get_lr() ==
            doctest::Approx(0.5 * 0.5 * (1 + std::cos(std::numbers::pi * double(k) / 8.0))).epsilon(1e-14));
      sched.step();
    }
  }
  SUBCASE("LambdaLR: base * fn(steps)") {
    OneParam a;
    optim::SGD sgd({a.p}, optim::SGDOptions(0.3));
    optim::LambdaLR sched(sgd, [](int64_t s) { return 1.0 / double(1 + s * s); });
    for (int64_t k = 0; k < 6; ++k) {
      CHECK(sched.get_lr() == doctest::Approx(0.3 / double(1 + k * k)).epsilon(1e-15));
      sched.step();
    }
    CHECK_THROWS_AS(optim::LambdaLR(sgd, nullptr), ag::ValueError);
  }
}

TEST_CASE("scheduler state_dict / load_state_dict round trip and malformed state") {
  SUBCASE("StepLR with two groups: base lrs and step count restored") {
    OneParam a1, b1, a2, b2;
    optim::SGD s1({{{{"a", a1.p}}, optim::SGDOptions(0.1)}, {{{"b", b1.p}}, optim::SGDOptions(0.7)}});
    optim::SGD s2({{{{"a", a2.p}}, optim::SGDOptions(9.0)}, {{{"b", b2.p}}, optim::SGDOptions(9.0)}});
    optim::StepLR one(s1, 3, 0.5), two(s2, 3, 0.5);
    for (int k = 0; k < 7; ++k) one.step();
    two.load_state_dict(one.state_dict());
    CHECK(two.last_step() == 7);
    for (int k = 0; k < 5; ++k) {
      CHECK(two.get_lr(0) == one.get_lr(0));
      CHECK(two.get_lr(1) == one.get_lr(1));
      CHECK(s2.lr(1) == s1.lr(1));
      one.step();
      two.step();
    }
  }
  SUBCASE("Noam") {
    OneParam a1, a2;
    optim::Adam o1({a1.p}), o2({a2.p});
    optim::NoamScheduler one(o1, 32, 1.0, 8), two(o2, 32, 1.0, 8);
    for (int k = 0; k < 11; ++k) one.step();
    two.load_state_dict(one.state_dict());
    CHECK(two.last_step() == 11);
    CHECK(o2.lr() == o1.lr());
    CHECK(o2.lr() == doctest::Approx(noam(12, 32, 1.0, 8)).epsilon(1e-14));
  }
  SUBCASE("malformed state throws ValueError and changes nothing") {
    OneParam a, b;
    optim::SGD sgd({{{{"a", a.p}}, optim::SGDOptions(0.1)}, {{{"b", b.p}}, optim::SGDOptions(0.7)}});
    optim::StepLR sched(sgd, 2, 0.5);
    for (int k = 0; k < 3; ++k) sched.step();
    const ag::Metadata good = sched.state_dict();
    REQUIRE(good.count("steps"));
    REQUIRE(good.count("base_lr.0"));
    REQUIRE(good.count("base_lr.1"));
    const double lr0 = sgd.lr(0), lr1 = sgd.lr(1);

    auto with = [&](const std::string& key, const char* value) {
      ag::Metadata m = good;
      if (value)
        m[key] = value;
      else
        m.erase(key);
      return m;
    };
    const std::vector<ag::Metadata> bad = {
        with("steps", nullptr),   with("base_lr.1", nullptr), with("steps", "abc"),
        with("steps", ""),        with("steps", "-1"),        with("steps", "7junk"),
        with("steps", "2.5"),     with("base_lr.0", "lr"),    with("base_lr.1", "0.5x"),
        with("base_lr.0", "nan"), with("base_lr.0", "inf"),   with("steps", "99999999999999999999999"),
    };
    for (const ag::Metadata& m : bad) {
      CAPTURE(m.count("steps") ? m.at("steps") : "<missing steps>");
      CAPTURE(m.count("base_lr.0") ? m.at("base_lr.0") : "<missing base_lr.0>");
      CAPTURE(m.count("base_lr.1") ? m.at("base_lr.1") : "<missing base_lr.1>");
      CHECK_THROWS_AS(sched.load_state_dict(m), ag::ValueError);
      CHECK(sched.last_step() == 3);
      CHECK(sgd.lr(0) == lr0);
      CHECK(sgd.lr(1) == lr1);
      CHECK(sched.state_dict() == good);
    }
    // The good state still loads.
    sched.load_state_dict(good);
    CHECK(sched.last_step() == 3);
  }
}

// ---- clipping ----------------------------------------------------------------------------

namespace {

// Three parameters with gradients (and one without), f64 and f32 mixed.
struct Grads {
  Tensor a = make_param({0, 0, 0}, Shape{3}, DType::f64);
  Tensor b = make_param({0, 0, 0, 0}, Shape{2, 2}, DType::f32);
  Tensor c = make_param({0}, Shape{1}, DType::f64);
  Tensor none = make_param({0, 0}, Shape{2}, DType::f64);  // never gets a gradient
  std::vector<double> ga{3.0, -4.0, 1.0}, gb{-2.0, 0.5, 6.0, -1.5}, gc{-7.0};
  Grads() {
    set_grad(a, ga);
    set_grad(b, gb);
    set_grad(c, gc);
  }
  std::vector<Tensor> params() const { return {a, b, c, none}; }
  std::vector<double> all() const {
    std::vector<double> v = ga;
    v.insert(v.end(), gb.begin(), gb.end());
    v.insert(v.end(), gc.begin(), gc.end());
    return v;
  }
};

double norm_of(const std::vector<double>& v, double type) {
  double acc = 0;
  for (double x : v) acc = std::isinf(type) ? std::max(acc, std::abs(x)) : acc + std::pow(std::abs(x), type);
  return std::isinf(type) ? acc : std::pow(acc, 1 / type);
}

std::vector<double> scaled(const std::vector<double>& v, double s) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * s);
  return out;
}

}  // namespace

TEST_CASE("clip_grad_norm_ clips by the norm over all parameters together") {
  SUBCASE("2-, 1-, inf- and 3-norms above max_norm") {
    for (double type : {2.0, 1.0, optim::kInfNorm, 3.0}) {
      CAPTURE(type);
      Grads g;
      const double total = norm_of(g.all(), type);
      const double max_norm = 0.9 * total;
      if (!std::isinf(type)) {  // each parameter's own norm is below max_norm; only the total is above
        REQUIRE(norm_of(g.ga, type) < max_norm);
        REQUIRE(norm_of(g.gb, type) < max_norm);
        REQUIRE(norm_of(g.gc, type) < max_norm);
      }
      double got = optim::clip_grad_norm_(g.params(), max_norm, type);
      CHECK(got == doctest::Approx(total).epsilon(1e-14));
      const double s = max_norm / (total + 1e-6);
      CHECK(diff(g.a.grad().to_vector<double>(), scaled(g.ga, s), 1e-14) == "");
      CHECK(diff(g.b.grad().to_vector<double>(), scaled(g.gb, s), 1e-7) == "");
      CHECK(diff(g.c.grad().to_vector<double>(), scaled(g.gc, s), 1e-14) == "");
      CHECK_FALSE(g.none.grad().defined());
      // The clipped total is max_norm (to within the 1e-6).
      std::vector<double> after = g.a.grad().to_vector<double>();
      for (double x : g.b.grad().to_vector<double>()) after.push_back(x);
      after.push_back(g.c.grad().item<double>());
      CHECK(norm_of(after, type) == doctest::Approx(max_norm).epsilon(1e-6));
    }
  }
  SUBCASE("below max_norm nothing changes") {
    Grads g;
    const double total = norm_of(g.all(), 2.0);
    CHECK(optim::clip_grad_norm_(g.params(), total * 1.01) == doctest::Approx(total).epsilon(1e-14));
    CHECK(g.a.grad().to_vector<double>() == g.ga);
    CHECK(g.b.grad().to_vector<double>() == g.gb);
    CHECK(g.c.grad().to_vector<double>() == g.gc);
    // Exactly at max_norm the factor max_norm / (total + 1e-6) is just below 1, and torch
    // scales by it.
    Grads h;
    optim::clip_grad_norm_(h.params(), total);
    CHECK(diff(h.a.grad().to_vector<double>(), scaled(h.ga, total / (total + 1e-6)), 1e-15) == "");
  }
  SUBCASE("no gradients at all") {
    Tensor p = make_param({1, 2}, Shape{2}, DType::f32);
    CHECK(optim::clip_grad_norm_({p}, 1.0) == 0.0);
    CHECK(optim::clip_grad_norm_({}, 1.0) == 0.0);
  }
  CHECK_THROWS_AS(optim::clip_grad_norm_({}, 1.0, 0.0), ag::ValueError);
}

TEST_CASE("clip_grad_norm_ returns a non-finite norm and leaves the gradients alone") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double bad;
    double type;
    bool want_nan;
  };
  for (Case c :
       {Case{inf, 2.0, false}, Case{inf, 1.0, false}, Case{inf, optim::kInfNorm, false}, Case{-inf, 2.0, false},
        Case{nan, 2.0, true}, Case{nan, 1.0, true}, Case{nan, optim::kInfNorm, true}}) {
    CAPTURE(c.bad);
    CAPTURE(c.type);
    for (int where = 0; where < 2; ++where) {  // the bad value first, or after large finite ones
      CAPTURE(where);
      Grads g;
      if (where == 0)
        g.ga[0] = c.bad;
      else
        g.gc[0] = c.bad;
      set_grad(g.a, g.ga);
      set_grad(g.c, g.gc);
      double total = optim::clip_grad_norm_(g.params(), 1.0, c.type);
      if (c.want_nan)
        CHECK(std::isnan(total));
      else
        CHECK(total == inf);
      auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
        for (std::size_t i = 0; i < x.size(); ++i)
          if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
        return x.size() == y.size();
      };
      CHECK(same(g.a.grad().to_vector<double>(), g.ga));
      CHECK(same(g.b.grad().to_vector<double>(), g.gb));
      CHECK(same(g.c.grad().to_vector<double>(), g.gc));
    }
  }
  // inf and NaN together: NaN, as torch.
  Grads g;
  g.ga[0] = inf;
  g.gc[0] = nan;
  set_grad(g.a, g.ga);
  set_grad(g.c, g.gc);
  CHECK(std::isnan(optim::clip_grad_norm_(g.params(), 1.0)));
  CHECK(g.b.grad().to_vector<double>() == g.gb);
}

TEST_CASE("clip_grad_value_ clamps every gradient element") {
  Grads g;
  optim::clip_grad_value_(g.params(), 2.5);
  CHECK(g.a.grad().to_vector<double>() == std::vector<double>{2.5, -2.5, 1.0});
  CHECK(g.b.grad().to_vector<double>() == std::vector<double>{-2.0, 0.5, 2.5, -1.5});
  CHECK(g.c.grad().to_vector<double>() == std::vector<double>{-2.5});
  CHECK_FALSE(g.none.grad().defined());
  CHECK(g.a.grad().dtype() == DType::f64);
  CHECK(g.b.grad().dtype() == DType::f32);
  optim::clip_grad_value_(g.params(), 0.0);
  CHECK(g.a.grad().to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK_THROWS_AS(optim::clip_grad_value_(g.params(), -1.0), ag::ValueError);
}
