// Adamax, NAdam and RAdam against numbers printed by real torch.optim 1.13
// (tools/optim_reference.py --variants, pasted into kTorchVariants; NAdam as PyTorch 2.x
// computes it, whose line-for-line copy the script runs: 1.13 counted mu twice), in f64 (1e-12) and f32
// (1e-6), on the shared parameter and gradients of optim_test_util.h; their state
// resumes exactly, and bad options are PyTorch's ValueErrors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optim_test_util.h"

using namespace ag;
using namespace optim_test_util;

namespace {

struct Variant {
  const char* name;
  std::function<std::unique_ptr<optim::Optimizer>(const optim::NamedParams&)> make;
};

const std::vector<Variant> kVariantConfigs = {
    {"adamax", [](auto& ps) { return std::make_unique<optim::Adamax>(ps, optim::AdamaxOptions(0.02)); }},
    {"adamax_wd",
     [](auto& ps) {
       return std::make_unique<optim::Adamax>(ps, optim::AdamaxOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1));
     }},
    {"nadam", [](auto& ps) { return std::make_unique<optim::NAdam>(ps, optim::NAdamOptions(0.02)); }},
    {"nadam_all",
     [](auto& ps) {
       return std::make_unique<optim::NAdam>(
           ps, optim::NAdamOptions(0.01).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.05).momentum_decay(0.01));
     }},
    {"radam", [](auto& ps) { return std::make_unique<optim::RAdam>(ps, optim::RAdamOptions(0.02)); }},
    // beta2 0.5: rho_t passes 5 within the steps, so both branches run
    {"radam_rect",
     [](auto& ps) {
       return std::make_unique<optim::RAdam>(ps, optim::RAdamOptions(0.01).betas({0.8, 0.5}).weight_decay(0.1));
     }},
};

struct TorchTrajectory {
  const char* name;
  std::vector<std::vector<double>> steps;
};

// clang-format off
const std::vector<TorchTrajectory> kTorchVariants = {
    {"adamax",
      {
        {-0.7300000001, 0.5199999996, -0.019999999800000005, -0.4800000001, 0.7699999996, 0.2300000002},
        {-0.7218339393431905, 0.5142105259736842, -0.024214740814698914, -0.47183393934319057, 0.7642105259736842, 0.2257852591853011},
        {-0.7152894917113782, 0.5105537326855621, -0.029649960007163547, -0.46528949171137823, 0.7605537326855621, 0.22035003999283648},
        {-0.7128308291286071, 0.5146421304483614, -0.03132115057997943, -0.4628308291286071, 0.7646421304483614, 0.21867884942002058},
        {-0.7106642308763819, 0.5175315590549764, -0.03381137784464178, -0.46066423087638186, 0.7675315590549764, 0.21618862215535825},
        {-0.709159407695568, 0.5200739097160453, -0.035772100794839105, -0.4591594076955679, 0.7700739097160453, 0.21422789920516092},
      }},
    {"adamax_wd",
      {
        {-0.7400000000481928, 0.5099999997777778, -0.009999999900000002, -0.49000000004878047, 0.7599999997647059, 0.24000000009756098},
        {-0.7355853042491358, 0.5063473938288524, -0.01184567889395062, -0.48566696785069147, 0.7561999171895695, 0.23792833495661753},
        {-0.731596651343535, 0.503732854056529, -0.014947355811520194, -0.4817802097413249, 0.7533880287884729, 0.23460130612899832},
        {-0.730181852808427, 0.5059922875022503, -0.015476710762684668, -0.4805153867714869, 0.7555116858850067, 0.2337505776042567},
        {-0.7286448043476726, 0.507498079221015, -0.01701640411105053, -0.4791453489252407, 0.7568490841104126, 0.23187725742381954},
        {-0.72744609335022, 0.5088169405307019, -0.018255649480622884, -0.4781383374636628, 0.7579747268767622, 0.2302561401129127},
      }},
    {"nadam",
      {
        {-0.7288709645385374, 0.521129035144527, -0.021129035355817415, -0.4788709645385374, 0.771129035144527, 0.22887096464418258},
        {-0.7302128493244524, 0.5029978855202384, -0.01290684087504404, -0.4802128493244524, 0.7529978855202384, 0.23709315912495596},
        {-0.7249728381465441, 0.502277616291829, -0.020587226556241903, -0.4749728381465441, 0.752277616291829, 0.2294127734437581},
        {-0.7321457518465635, 0.5216901687298648, -0.014060453850188497, -0.4821457518465635, 0.7716901687298648, 0.2359395461498115},
        {-0.7298913869108131, 0.521816059202595, -0.01984059058354572, -0.4798913869108131, 0.771816059202595, 0.2301594094164543},
        {-0.7303446304541703, 0.5242283583731879, -0.020643366727146548, -0.48034463045417036, 0.7742283583731879, 0.22935663327285347},
      }},
    {"nadam_all",
      {
        {-0.7390466248004927, 0.510953357515697, -0.010953369622027401, -0.48904662483367717, 0.7609533568924632, 0.23904663024274594},
        {-0.7392653240445745, 0.501262330626419, -0.006689625093771364, -0.4893438266555851, 0.7511879538152567, 0.2431526176285679},
        {-0.7358600420346446, 0.5003239854040173, -0.01110022609051543, -0.4860084038845534, 0.7500937937558156, 0.23861850501584297},
        {-0.739668645501597, 0.5106169897090841, -0.007347000628469663, -0.4899320820353737, 0.760313947819778, 0.24217971113106468},
        {-0.7380742083740022, 0.5106972224990062, -0.01073133000345215, -0.48845257462526326, 0.7602635828469753, 0.23860902480460325},
        {-0.7380920542662409, 0.5119655390581013, -0.011193432873764318, -0.4886100608505158, 0.7613853816804773, 0.2379118549292873},
      }},
    {"radam",
      {
        {-0.71, 0.51, -0.02, -0.46, 0.76, 0.23},
        {-0.6936842105263158, 0.5042105263157894, -0.024210526315789474, -0.4436842105263158, 0.7542105263157894, 0.22578947368421054},
        {-0.6806214798990096, 0.5005573897844241, -0.02963488055933191, -0.4306214798990095, 0.7505573897844241, 0.2203651194406681},
        {-0.6757188919373928, 0.506689986469507, -0.03130106258899169, -0.42571889193739276, 0.756689986469507, 0.21869893741100832},
        {-0.6714030022155301, 0.511019795265385, -0.03378134390080337, -0.42140300221553006, 0.761019795265385, 0.21621865609919663},
        {-0.6713163718228375, 0.511148249454417, -0.03387917194064066, -0.4213163718228375, 0.761148249454417, 0.21612082805935934},
      }},
    {"radam_rect",
      {
        {-0.72925, 0.5045, -0.01, -0.4795, 0.75425, 0.23975},
        {-0.7210115277777778, 0.5006641666666666, -0.011661111111111112, -0.4715113888888889, 0.7501643055555556, 0.23783902777777777},
        {-0.7143170968237705, 0.49819520594262284, -0.014173545081967213, -0.46506667110655736, 0.7474456316598361, 0.2350768806352459},
        {-0.7121891001032264, 0.501475149526879, -0.014559756994578713, -0.4631882308009281, 0.7504760188291775, 0.23444111230771966},
        {-0.7101104274011382, 0.503444283159391, -0.015570441875536809, -0.46135894925149473, 0.7521957613090345, 0.2331810362741066},
        {-0.7086568257900723, 0.5049973253280751, -0.01630295450531483, -0.46015456540572763, 0.7534995857124197, 0.23219930587902976},
      }},
};
// clang-format on

std::vector<std::vector<double>> run(const Variant& c, DType dtype, int steps = kSteps) {
  Tensor p = make_param(p0_values(), kShape, dtype);
  auto opt = c.make({{"w", p}});
  std::vector<std::vector<double>> out;
  for (int k = 0; k < steps; ++k) {
    set_grad(p, grad_values(k));
    opt->step();
    out.push_back(p.to_vector<double>());
  }
  return out;
}

}  // namespace

TEST_CASE("Adamax, NAdam and RAdam match real torch.optim in f64 (1e-12) and f32 (1e-6)") {
  REQUIRE(kTorchVariants.size() == kVariantConfigs.size());
  for (std::size_t c = 0; c < kVariantConfigs.size(); ++c) {
    const TorchTrajectory& ref = kTorchVariants[c];
    const std::string name = ref.name;
    CAPTURE(name);
    REQUIRE(name == kVariantConfigs[c].name);
    auto got64 = run(kVariantConfigs[c], DType::f64), got32 = run(kVariantConfigs[c], DType::f32);
    for (int k = 0; k < kSteps; ++k) {
      CAPTURE(k);
      CHECK(diff(got64[k], ref.steps[k], 1e-12) == "");
      CHECK(diff(got32[k], ref.steps[k], 1e-6) == "");
    }
  }
}

TEST_CASE("Adamax / NAdam / RAdam state saves and loads: a resumed run equals an uninterrupted one") {
  for (const Variant& c : kVariantConfigs) {
    const std::string name = c.name;
    CAPTURE(name);
    Tensor p = make_param(p0_values(), kShape, DType::f64);
    auto opt = c.make({{"w", p}});
    for (int k = 0; k < 3; ++k) {
      set_grad(p, grad_values(k));
      opt->step();
    }
    const TensorMap saved = clone_map(opt->state_dict());
    Tensor q = p.detach().clone().requires_grad_();
    auto resumed = c.make({{"w", q}});
    resumed->load_state_dict(saved);
    for (int k = 3; k < kSteps; ++k) {
      set_grad(p, grad_values(k));
      set_grad(q, grad_values(k));
      opt->step();
      resumed->step();
    }
    CHECK(p.to_vector<double>() == q.to_vector<double>());
  }
}

TEST_CASE("Adamax / NAdam / RAdam refuse PyTorch's invalid options") {
  Tensor p = make_param(p0_values(), kShape, DType::f64);
  CHECK_THROWS_MSG(optim::Adamax({p}, optim::AdamaxOptions(-1.0)), ValueError, "Adamax: Invalid learning rate: -1");
  CHECK_THROWS_MSG(optim::NAdam({p}, optim::NAdamOptions().betas({1.0, 0.9})), ValueError,
                   "NAdam: Invalid beta parameter at index 0: 1 (must be in [0, 1))");
  CHECK_THROWS_MSG(optim::NAdam({p}, optim::NAdamOptions().momentum_decay(-0.1)), ValueError,
                   "NAdam: Invalid momentum_decay value: -0.1");
  CHECK_THROWS_MSG(optim::RAdam({p}, optim::RAdamOptions().eps(-1e-8)), ValueError,
                   "RAdam: Invalid epsilon value: -1e-08");
}
