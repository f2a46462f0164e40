// Hostile calls on the features of the PyTorch-fidelity round (issue 42): int4 / int8
// weights, schedulers and their compositions, GradScaler, L-BFGS, Adamax / NAdam / RAdam,
// sequence-first and 3-D-masked attention, container and tensor indexing, zero_grad,
// activation checkpointing of modules, tensors of 9-64 dims. Each call must either
// throw a typed ag::Error naming the call, or return PyTorch's answer; none may crash
// or touch memory it does not own. CI runs this file under ASan + UBSan as well
// (.ci/run phase 2), which is the point of it.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace ag::optim;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

struct Params {
  Tensor a = randn({2, 3}).requires_grad_(), b = randn({3}).requires_grad_();
  NamedParams named() const { return {{"a", a}, {"b", b}}; }
  void grads(double v = 1.0) {
    a.set_grad(full({2, 3}, v));
    b.set_grad(full({3}, v));
  }
};
}  // namespace

TEST_CASE("hostile: int4 and int8 weights with fields that do not fit") {
  Tensor w = randn({4, 64});
  quant::QuantizedWeight q4 = quant::quantize_weight(w, quant::Format::int4_weight_only, 32);
  Tensor x = randn({2, 64});
  // Scales with NaN or inf are data, not layout: the product carries them, as PyTorch's.
  quant::QuantizedWeight nan_scale = q4;
  nan_scale.scale = q4.scale.clone();
  nan_scale.scale.index_put_({0, 0}, kNaN);
  Tensor y = quant::weight_only_linear(x, nan_scale);
  CHECK(std::isnan(y.index({0, 0}).item<float>()));
  CHECK(std::isfinite(y.index({0, 1}).item<float>()));
  // x of the wrong width, a bias of the wrong length, a 0-row x, a strided x.
  CHECK_THROWS_MSG(quant::weight_only_linear(randn({2, 63}), q4), ShapeError,
                   "weight_only_linear: input shape [2, 63] does not match the quantized");
  CHECK_THROWS_MSG(quant::weight_only_linear(x, q4, randn({5})), ShapeError,
                   "weight_only_linear: bias shape [5] does not match the quantized weight (4,");
  CHECK(quant::weight_only_linear(randn({0, 64}), q4).shape() == Shape{0, 4});
  Tensor wide = randn({64, 4}).t();  // (4, 64) column-major
  CHECK(tc::diff(quant::weight_only_linear(wide, q4), quant::weight_only_linear(wide.contiguous(), q4), 1e-6) == "");
  // Hand-made weights: every field wrong once.
  quant::QuantizedWeight bad = q4;
  bad.group_size = 48;
  CHECK_THROWS_MSG(quant::dequantize(bad), ValueError,
                   "dequantize: int4_weight_only group_size must be 32 or 64, got 48");
  bad = q4;
  bad.pad = -1;
  CHECK_THROWS_MSG(quant::dequantize(bad), ValueError,
                   "dequantize: int4 codes [4, 32] with pad -1 do not fill whole groups of 32");
  bad = q4;
  bad.data = q4.data.narrow(1, 0, 31).contiguous();
  CHECK_THROWS_MSG(quant::weight_only_linear(x, bad), ValueError,
                   "weight_only_linear: int4 codes [4, 31] pack 62 values a row, not a whole");
  bad = q4;
  bad.scale = q4.scale.narrow(0, 0, 3).contiguous();
  CHECK_THROWS_MSG(quant::weight_only_linear(x, bad), ShapeError,
                   "weight_only_linear: scale shape [3, 2] does not match codes [4, 32]");
  bad = q4;
  bad.data = q4.data.to(DType::i8);
  CHECK_THROWS_MSG(quant::weight_only_linear(x, bad), DTypeError,
                   "weight_only_linear: int4_weight_only expects u8 codes, got i8");
  quant::QuantizedWeight empty;
  CHECK_THROWS_MSG(quant::dequantize(empty), ValueError, "dequantize: the quantized weight is undefined");
  nn::Linear lin(64, 4);
  CHECK_THROWS_MSG(lin->set_quantized_weight(bad), DTypeError,
                   "Linear.set_quantized_weight: int4_weight_only expects u8 codes, got i8");
  CHECK_THROWS_MSG(quant::quantize_weight(randn({4, 64}), quant::Format::int4_weight_only, 0), ValueError,
                   "quantize_weight: int4_weight_only group_size must be 32 or 64, got 0");
  CHECK_THROWS_MSG(quant::quantize_weight(randn({4}), quant::Format::int8_weight_only), ShapeError,
                   "quantize_weight: weight must be 2-D (out, in), got shape [4]");
}

TEST_CASE("hostile: scheduler arguments PyTorch refuses, and compositions that do not fit") {
  Params p;
  SGD opt(p.named(), SGDOptions(0.1));
  CHECK_THROWS_MSG(StepLR(opt, 0), ValueError, "StepLR: step_size must be positive, got 0");
  CHECK_THROWS_MSG(StepLR(opt, -3), ValueError, "StepLR: step_size must be positive, got -3");
  CHECK_THROWS_MSG(ExponentialLR(opt, kNaN), ValueError, "ExponentialLR: gamma must be finite and >= 0, got nan");
  CHECK_THROWS_MSG(
      LinearLR(opt, 0.0), ValueError,
      "LinearLR: Starting multiplicative factor expected to be greater than 0 and");  // start_factor must be > 0
  CHECK_THROWS_MSG(LinearLR(opt, 0.5, 1.5), ValueError,
                   "LinearLR: Ending multiplicative factor expected to be between 0 and 1, got");
  CHECK_THROWS_MSG(ConstantLR(opt, 1.5), ValueError,
                   "ConstantLR: Constant multiplicative factor expected to be between 0 and 1,");
  CHECK_THROWS_MSG(ConstantLR(opt, kNaN), ValueError,
                   "ConstantLR: Constant multiplicative factor expected to be between 0 and 1,");
  CHECK_THROWS_MSG(PolynomialLR(opt, 0), ValueError, "PolynomialLR: total_iters must be positive, got 0");
  CHECK_THROWS_MSG(CosineAnnealingWarmRestarts(opt, 0), ValueError,
                   "CosineAnnealingWarmRestarts: Expected positive integer T_0, but got 0");
  CHECK_THROWS_MSG(CosineAnnealingWarmRestarts(opt, 3, 0), ValueError,
                   "CosineAnnealingWarmRestarts: Expected integer T_mult >= 1, but got 0");
  CHECK_THROWS_MSG(CosineAnnealingWarmRestarts(opt, 3, 1, kInf), ValueError,
                   "CosineAnnealingWarmRestarts: eta_min must be finite and >= 0, got inf");
  CHECK_THROWS_MSG(CosineAnnealingLR(opt, 4, -0.1), ValueError,
                   "CosineAnnealingLR: eta_min must be finite and >= 0, got -0.1");
  CHECK_THROWS_MSG(CyclicLR(opt, CyclicLROptions({0.01}, {0.1}).step_size_up(0)), ValueError,
                   "CyclicLR: step sizes must be positive, got up 0 and down 0");
  CHECK_THROWS_MSG(CyclicLR(opt, CyclicLROptions({0.01, 0.02, 0.03}, {0.1})), ValueError,
                   "CyclicLR: expected 1 values for base_lr, got 3");
  CHECK_THROWS_MSG(CyclicLR(opt, CyclicLROptions({}, {0.1})), ValueError,
                   "CyclicLR: expected 1 values for base_lr, got 0");
  CHECK_THROWS_MSG(OneCycleLR(opt, OneCycleLROptions(0.5, 0)), ValueError,
                   "OneCycleLR: Expected positive integer total_steps, but got 0");
  CHECK_THROWS_MSG(OneCycleLR(opt, OneCycleLROptions(std::vector<double>{0.5, 0.2, 0.1}, 10)), ValueError,
                   "OneCycleLR: expected 1 values for max_lr, got 3");

  CHECK_THROWS_MSG(ChainedScheduler({}), ValueError, "ChainedScheduler: no schedulers");
  CHECK_THROWS_MSG(ChainedScheduler({nullptr}), ValueError,
                   "ChainedScheduler expects all schedulers to belong to the same optimizer,");
  Params q;
  SGD other(q.named(), SGDOptions(0.1));
  StepLR a(opt, 2), b(other, 2);
  CHECK_THROWS_MSG(ChainedScheduler({&a, &b}), ValueError,
                   "ChainedScheduler expects all schedulers to belong to the same optimizer,");
  CHECK_THROWS_MSG(SequentialLR(opt, {&a, &b}, {3}), ValueError,
                   "Sequential Schedulers expects all schedulers to belong to the same");
  CHECK_THROWS_MSG(
      SequentialLR(opt, {&a}, {3}), ValueError,
      "Sequential Schedulers expects number of schedulers provided to be one more");  // one milestone per switch
  ExponentialLR e(opt, 0.9);
  SequentialLR seq(opt, {&a, &e}, {2});
  Metadata st = seq.state_dict();
  st["steps"] = "-5";
  CHECK_THROWS_MSG(seq.load_state_dict(st), ValueError,
                   "SequentialLR.load_state_dict: 'steps' must be a count >= 0, got '-5'");
  st = seq.state_dict();
  st["steps"] = "abc";
  CHECK_THROWS_MSG(seq.load_state_dict(st), ValueError,
                   "SequentialLR.load_state_dict: 'steps' must be a count >= 0, got 'abc'");
  st = seq.state_dict();
  st.erase(st.begin());
  CHECK_THROWS_MSG(seq.load_state_dict(st), ValueError, "scheduler.load_state_dict: missing 'base_lr.0'");
  for (int i = 0; i < 5; ++i) seq.step();  // still sane after the refused loads
  CHECK(std::isfinite(opt.lr()));

  // Accepted as PyTorch accepts them, with PyTorch's numbers: milestones in any order
  // (a Counter there), LinearLR over 0 iterations (start_factor once, then unchanged).
  Params r;
  SGD o1(r.named(), SGDOptions(1.0)), o2(Params().named(), SGDOptions(1.0)), o3(Params().named(), SGDOptions(1.0));
  MultiStepLR unsorted(o1, {5, 3, 3}, 0.5), sorted(o2, {3, 3, 5}, 0.5);
  LinearLR zero_iters(o3, 0.5, 1.0, 0);
  for (int i = 0; i < 7; ++i) {
    unsorted.step(), sorted.step(), zero_iters.step();
    CHECK(o1.lr() == o2.lr());
    CHECK(o3.lr() == 0.5);
  }
  CHECK(o1.lr() == 0.125);
}

TEST_CASE("hostile: GradScaler options, double unscale, non-finite gradients") {
  using amp::GradScaler;
  using amp::GradScalerOptions;
  CHECK_THROWS_MSG(GradScaler(GradScalerOptions().init_scale(kNaN)), ValueError,
                   "GradScaler: the scale must be finite and > 0, got nan");
  CHECK_THROWS_MSG(GradScaler(GradScalerOptions().init_scale(-1)), ValueError,
                   "GradScaler: the scale must be finite and > 0, got -1");
  CHECK_THROWS_MSG(GradScaler(GradScalerOptions().growth_factor(0.5)), ValueError,
                   "GradScaler: The growth factor must be > 1.0 (and finite), got 0.5");
  CHECK_THROWS_MSG(GradScaler(GradScalerOptions().backoff_factor(1.5)), ValueError,
                   "GradScaler: The backoff factor must be < 1.0 (and > 0), got 1.5");
  CHECK_THROWS_MSG(GradScaler(GradScalerOptions().growth_interval(0)), ValueError,
                   "GradScaler: growth_interval must be > 0, got 0");
  Params p;
  SGD opt(p.named(), SGDOptions(0.1));
  GradScaler scaler;
  CHECK_THROWS_MSG(scaler.scale(Tensor{}), ValueError, "GradScaler.scale: outputs is an undefined tensor");
  p.grads(kInf);
  scaler.unscale_(opt);
  CHECK_THROWS_MSG(
      scaler.unscale_(opt), AutogradError,
      "GradScaler.unscale_: unscale_() has already been called on this optimizer");  // once per step, as PyTorch
  const Tensor before = p.a.detach().clone();
  CHECK_FALSE(scaler.step(opt));  // inf found: skipped
  CHECK(tc::diff(p.a, before, 0.0) == "");
  scaler.update();
  CHECK(scaler.get_scale() == 32768.0);
  CHECK_THROWS_MSG(scaler.update(kNaN), ValueError, "GradScaler.update: the scale must be finite and > 0, got nan");
  CHECK_THROWS_MSG(scaler.update(0.0), ValueError, "GradScaler.update: the scale must be finite and > 0, got 0");
  Metadata st = scaler.state_dict();
  st["scale"] = "inf";
  CHECK_THROWS_MSG(scaler.load_state_dict(st), ValueError,
                   "GradScaler.load_state_dict: the scale must be finite and > 0, got inf");
  CHECK(scaler.get_scale() == 32768.0);
}

TEST_CASE("hostile: L-BFGS with a throwing, NaN or inf closure") {
  Tensor x = ones({3}, DType::f64).requires_grad_();
  LBFGS opt({{"x", x}}, LBFGSOptions().line_search_fn("strong_wolfe"));
  int calls = 0;
  CHECK_THROWS_MSG(opt.step([&]() -> Tensor {
    if (++calls == 2) throw ValueError("closure failed");
    opt.zero_grad();
    Tensor l = (x * x).sum();
    l.backward();
    return l;
  }),
                   ValueError, "closure failed");
  CHECK(x.isfinite().all().item<bool>());  // the line search's trial point may be kept, never garbage
  // A NaN loss: PyTorch's comparisons with NaN are false; the step ends, nothing crashes.
  Tensor y = ones({3}, DType::f64).requires_grad_();
  LBFGS nan_opt({{"y", y}}, LBFGSOptions().max_iter(5).line_search_fn("strong_wolfe"));
  nan_opt.step([&] {
    nan_opt.zero_grad();
    Tensor l = (y * kNaN).sum();
    l.backward();
    return l;
  });
  // Gradients of inf: no crash, the counters stay consistent.
  Tensor z = ones({2}, DType::f64).requires_grad_();
  LBFGS inf_opt({{"z", z}}, LBFGSOptions().max_iter(3));
  inf_opt.step([&] {
    inf_opt.zero_grad();
    z.set_grad(full({2}, kInf, DType::f64));
    return full({}, 1.0, DType::f64);
  });
  CHECK(inf_opt.func_evals() >= 1);
  // A loss that does not depend on the parameters: no gradient, returns at once.
  Tensor w = ones({2}, DType::f64).requires_grad_();
  LBFGS none({{"w", w}});
  CHECK(none.step([] { return full({}, 3.0, DType::f64); }).item<double>() == 3.0);
  CHECK(none.n_iter() == 0);
  // Zero-element parameters.
  Tensor e = zeros({0}, DType::f64).requires_grad_();
  LBFGS empty_opt({{"e", e}});
  CHECK(empty_opt.step([] { return full({}, 0.0, DType::f64); }).item<double>() == 0.0);
  // Garbage in a state dict.
  TensorMap sd = opt.state_dict();
  sd.insert("lbfgs.n_iter", full({}, -1.0, DType::i64));
  CHECK_THROWS_MSG(opt.load_state_dict(sd), ValueError,
                   "LBFGS.load_state_dict: 'lbfgs.n_iter' must be one i64 in [0, 2^53], got []");
  sd = opt.state_dict();
  sd.insert("lbfgs.t", full({}, kNaN, DType::f64));
  if (sd.contains("lbfgs.d"))
    CHECK_THROWS_MSG(opt.load_state_dict(sd), ValueError,
                     "LBFGS.load_state_dict: 'lbfgs.t' must be one finite float, got [] f64");
}

TEST_CASE("hostile: Adamax, NAdam and RAdam options and state") {
  Params p;
  CHECK_THROWS_MSG(Adamax(p.named(), AdamaxOptions().betas({1.0, 0.999})), ValueError,
                   "Adamax: Invalid beta parameter at index 0: 1 (must be in [0, 1))");
  CHECK_THROWS_MSG(Adamax(p.named(), AdamaxOptions().eps(-1)), ValueError, "Adamax: Invalid epsilon value: -1");
  CHECK_THROWS_MSG(NAdam(p.named(), NAdamOptions().momentum_decay(-1)), ValueError,
                   "NAdam: Invalid momentum_decay value: -1");
  CHECK_THROWS_MSG(NAdam(p.named(), NAdamOptions(kNaN)), ValueError, "NAdam: Invalid learning rate: nan");
  CHECK_THROWS_MSG(RAdam(p.named(), RAdamOptions().betas({0.9, -0.1})), ValueError,
                   "RAdam: Invalid beta parameter at index 1: -0.1 (must be in [0, 1))");
  CHECK_THROWS_MSG(RAdam(p.named(), RAdamOptions().weight_decay(kInf)), ValueError,
                   "RAdam: Invalid weight_decay value: inf");
  NAdam opt(p.named());
  p.grads();
  opt.step();
  TensorMap st = opt.state_dict();
  st.insert("a.mu_product", full({}, 2.0, DType::f64));
  CHECK_THROWS_MSG(opt.load_state_dict(st), ValueError,
                   "optimizer.load_state_dict: 'a.mu_product' must lie in (0, 1], got 2");
  st = opt.state_dict();
  st.insert("a.exp_avg_sq", full({2, 3}, -1.0));
  CHECK_THROWS_MSG(opt.load_state_dict(st), ValueError,
                   "optimizer.load_state_dict: 'a.exp_avg_sq' element 0 is -1; it must be");
  st = opt.state_dict();
  st.insert("a.step", full({}, 1e18, DType::i64));
  CHECK_THROWS_MSG(opt.load_state_dict(st), ValueError,
                   "optimizer.load_state_dict: 'a.step' must be a step count in [0, 2^53], got");
  opt.step();  // still steps after the refused loads
  CHECK(p.a.isfinite().all().item<bool>());
}

TEST_CASE("hostile: attention with masks, layouts and lengths that do not fit") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).add_zero_attn(true));
  nn::MultiheadAttention sf(nn::MultiheadAttentionOptions(8, 2).batch_first(false));
  Tensor q = randn({3, 4, 8});
  nn::AttentionArgs bad3d;
  bad3d.attn_mask = zeros({5, 4, 4}, DType::b8);  // not B * heads = 6
  CHECK_THROWS_MSG(mha(q, q, q, bad3d), ShapeError,
                   "MultiheadAttention: attn_mask shape [5, 4, 4] cannot be broadcast to (B,");
  nn::AttentionArgs wrong_s;
  wrong_s.attn_mask = zeros({4, 3}, DType::b8);
  CHECK_THROWS_MSG(mha(q, q, q, wrong_s), ShapeError,
                   "MultiheadAttention: attn_mask shape [4, 3] cannot be broadcast to (B, h,");
  nn::AttentionArgs kpm;
  kpm.key_padding_mask = ones({3, 4}, DType::b8);  // every key is padding: the zero key remains
  Tensor out = mha(q, q, q, kpm).first;
  CHECK(out.isfinite().all().item<bool>());
  nn::AttentionArgs both;
  both.key_padding_mask = zeros({3, 4}, DType::b8);
  both.key_keep_mask = ones({3, 4}, DType::b8);
  CHECK_THROWS_MSG(mha(q, q, q, both), ValueError, "MultiheadAttention: give key_keep_mask (true = real key) or");
  CHECK_THROWS_MSG(
      sf(q, q, randn({3, 5, 8})), ShapeError,
      "MultiheadAttention(batch_first=false): batch sizes (dim 1) of query [3, 4,");  // key and value lengths differ (dim 0)
  CHECK_THROWS_MSG(sf(randn({4, 8}), randn({4, 8}), randn({4, 8})), ShapeError,
                   "MultiheadAttention(batch_first=false): query, key and value must be 3-D");
  CHECK(sf(randn({0, 3, 8}), randn({2, 3, 8}), randn({2, 3, 8})).first.shape() == Shape{0, 3, 8});
  CHECK(sf(randn({4, 0, 8}), randn({2, 0, 8}), randn({2, 0, 8})).first.shape() == Shape{4, 0, 8});
  nn::Transformer t(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).batch_first(false));
  CHECK_THROWS_MSG(t(randn({5, 2, 8}), randn({4, 2, 7})), ShapeError,
                   "Transformer: src [5, 2, 8] and tgt [4, 2, 7] must be (S, B, 8) and (T, B,");
  nn::TransformerMasks m;
  m.src_key_padding_mask = zeros({5, 2}, DType::b8);  // (S, B): the wrong way round
  CHECK_THROWS_MSG(t->forward(randn({5, 2, 8}), randn({4, 2, 8}), m), ShapeError,
                   "MultiheadAttention: key_padding_mask shape [5, 2] must be (B, S) = [2, 5]");
}

TEST_CASE("hostile: container and tensor indexing out of range, wrong types") {
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU());
  CHECK_THROWS_MSG(seq[2], IndexError, "Sequential: index 2 is out of range for 2 modules");
  CHECK_THROWS_MSG(seq[-3], IndexError, "Sequential: index -3 is out of range for 2 modules");
  CHECK_THROWS_MSG(seq->ptr<nn::Conv2dImpl>(0), ValueError, "Sequential: item 0 is a Linear, not the requested type");
  CHECK(seq->ptr<nn::ReLUImpl>(-1) != nullptr);
  nn::ModuleList list;
  CHECK_THROWS_MSG(list[0], IndexError, "ModuleList: index 0 is out of range for 0 modules");
  Tensor x = randn({2, 3});
  CHECK_THROWS_MSG(x[2], IndexError, "operator[]: index 2 is out of bounds for dimension 0 with size 2 (shape");
  CHECK_THROWS_MSG(x[-3], IndexError, "operator[]: index -3 is out of bounds for dimension 0 with size 2 (shape");
  CHECK_THROWS_MSG(full({}, 1.0)[0], IndexError,
                   "operator[]: too many indices for tensor of dimension 0 (shape [], 1 dims");
  CHECK_THROWS_MSG(x[Tensor::from_vector(std::vector<int64_t>{0, 5})], IndexError,
                   "operator[]: index 5 is out of bounds for dimension 0 with size 2 (indexed");
  CHECK_THROWS_MSG(x[Tensor::from_vector(std::vector<double>{0.0})], IndexError,
                   "operator[]: tensors used as indices must be long, int or bool tensors, got");
  CHECK(x[-1].shape() == Shape{3});
}

TEST_CASE("hostile: zero_grad and module checkpointing at the edges") {
  Params p;
  SGD opt(p.named(), SGDOptions(0.1));
  opt.zero_grad(false);  // no gradients yet: nothing to zero
  CHECK_FALSE(p.a.grad().defined());
  p.a.set_grad(randn({3, 2}).t());  // a strided gradient
  opt.zero_grad(false);
  CHECK(p.a.grad().abs().sum().item<float>() == 0.0f);
  nn::Linear lin(3, 2);
  Tensor in = randn({4, 3}).requires_grad_();
  Tensor y = ag::checkpoint(lin, in);
  y.sum().backward();
  CHECK(in.grad().defined());
  CHECK_THROWS_MSG(ag::checkpoint(lin, randn({4, 5})), ShapeError,
                   "linear: input shape [4, 5] does not match weight shape [2, 3] (expected");
}

TEST_CASE("hostile: tensors of 9 to 64 dims through views, reductions, indexing and files") {
  Tensor x = ones(Dims::filled(64, 1));
  CHECK(x.sum({0, 63}).dim() == 62);
  CHECK_THROWS_MSG(x.reshape(Dims::filled(65, 1)), ShapeError, "shape: more than 64 dims are not supported");
  CHECK_THROWS_MSG(x.unsqueeze(-1), ShapeError, "unsqueeze: a tensor of shape");
  CHECK_THROWS_MSG(x.index({indexing::None}), ShapeError, "unsqueeze: a tensor of shape");
  CHECK(x.permute([] {
           std::vector<int64_t> perm(64);
           for (int64_t i = 0; i < 64; ++i) perm[size_t(i)] = 63 - i;
           return perm;
         }())
            .is_contiguous());
  CHECK_THROWS_MSG(x.permute(std::vector<int64_t>(64, 0)), IndexError,
                   "permute: dim 0 repeats in the permutation (shape");
  Tensor idx = zeros(Dims::filled(63, 1), DType::i64);
  CHECK(randn({2, 3}).index({idx}).dim() == 64);
  CHECK_THROWS_MSG(randn({2, 3}).index({zeros(Dims::filled(64, 1), DType::i64)}), ShapeError,
                   "shape: more than 64 dims are not supported");
  Tensor big = randn({1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  CHECK(matmul(big, randn({2, 3})).dim() == 10);
  CHECK_THROWS_MSG(matmul(big, randn({3, 3})), ShapeError,
                   "matmul: shapes [1, 2, 1, 2, 1, 2, 1, 2, 1, 2] and [3, 3] cannot be");
  std::string dir = test_util::tmp_dir("test_hostile_calls", "dims");
  TensorMap m;
  m.insert("x", x);
  save_safetensors(dir + "/x.safetensors", m);
  CHECK(load_safetensors(dir + "/x.safetensors").at("x").dim() == 64);
}
