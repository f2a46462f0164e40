// Tensor parallelism across heads (nn/tensor_parallel.h). Every rank builds the
// single-process module from the same seed, loads its full state dict into the
// tensor-parallel one and runs both on the same input (float64): the outputs, the input
// gradients and every parameter gradient (gathered into the full layout) must agree to
// 1e-12. Runs as one process and under mpirun -np 2 (dist_tensor_parallel_np2); the
// measured worst errors are printed by rank 0. The differentiable collectives are
// gradchecked across ranks with dist_gradcheck.h.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "dist_gradcheck.h"
#include "tensor_parallel_checks.h"
#include "test_util.h"

using namespace ag;
using dist_test::Placement;
using namespace tp_test;

// ---- the linear layers ---------------------------------------------------------------------
TEST_CASE("ColumnParallelLinear and RowParallelLinear equal nn::Linear") {
  manual_seed(1);
  nn::Linear lin1(6, 8), lin2(8, 4), lin3(nn::LinearOptions(8, 4).bias(false));
  for (auto* l : {&lin1, &lin2, &lin3}) (*l)->to(DType::f64);
  const Tensor x = randn_seeded({3, 2, 6}, 11), x8 = randn_seeded({3, 2, 8}, 12);

  nn::ColumnParallelLinear col(nn::ColumnParallelLinearOptions(6, 8).gather_output(true));
  col->to(DType::f64);
  col->load_full_state_dict(lin1->state_dict());
  check(compare(
      "ColumnParallelLinear(gather_output)", *lin1, *col, {x}, [&](auto& v) { return lin1(v[0]); },
      [&](auto& v) { return col(v[0]); }));

  nn::RowParallelLinear row(nn::RowParallelLinearOptions(8, 4).input_is_parallel(false));
  row->to(DType::f64);
  row->load_full_state_dict(lin2->state_dict());
  check(compare(
      "RowParallelLinear(input_is_parallel=false): scatter", *lin2, *row, {x8}, [&](auto& v) { return lin2(v[0]); },
      [&](auto& v) { return row(v[0]); }));

  // Column (sharded output) -> relu -> Row without bias (sharded input): one all-reduce.
  auto single = std::make_shared<Pair>("fc1", lin1.ptr(), "fc2", lin3.ptr());
  nn::ColumnParallelLinear c(6, 8);
  nn::RowParallelLinear r(nn::RowParallelLinearOptions(8, 4).bias(false));
  auto tp = std::make_shared<Pair>("fc1", c.ptr(), "fc2", r.ptr());
  tp->to(DType::f64);
  nn::load_full_state_dict(*tp, single->state_dict());  // the free function, on a plain module tree
  CHECK(c->weight.size(0) == 8 / dist::world_size());
  CHECK(r->weight.size(1) == 8 / dist::world_size());
  check(compare(
      "ColumnParallelLinear -> relu -> RowParallelLinear(bias=false)", *single, *tp, {x},
      [&](auto& v) { return lin3(relu(lin1(v[0]))); }, [&](auto& v) { return r(relu(c(v[0]))); }));
}

TEST_CASE("dimensions that do not divide by the world size, and bad full state dicts") {
  const int p = dist::world_size();
  if (p > 1) {  // in a world of one every size divides
    auto msg = test_util::error_of<ShapeError>([] { nn::ColumnParallelLinear(4, 3); });
    CHECK(test_util::contains(msg, "out_features 3"));
    CHECK(test_util::contains(msg, "[3, 4]"));
    CHECK(test_util::contains(msg, "world size 2"));
    msg = test_util::error_of<ShapeError>([] { nn::RowParallelLinear(5, 4); });
    CHECK(test_util::contains(msg, "in_features 5"));
    CHECK(test_util::contains(msg, "world size 2"));
    msg = test_util::error_of<ShapeError>([] { nn::TensorParallelMultiheadAttention(9, 3); });
    CHECK(test_util::contains(msg, "num_heads 3"));
    msg = test_util::error_of<ShapeError>(
        [] { nn::TensorParallelMultiheadAttention(nn::GroupedQueryAttentionOptions(8, 4).num_kv_heads(1)); });
    CHECK(test_util::contains(msg, "num_kv_heads 1"));
    msg = test_util::error_of<ShapeError>(
        [] { nn::TensorParallelTransformerEncoderLayer(nn::TransformerLayerOptions(8, 2).dim_feedforward(7)); });
    CHECK(test_util::contains(msg, "dim_feedforward 7"));
  }
  nn::ColumnParallelLinear col(6, 8);
  TensorMap bad;
  bad.insert("weight", zeros({7, 6}));
  bad.insert("bias", zeros({8}));
  auto msg = test_util::error_of<ShapeError>([&] { col->load_full_state_dict(bad); });
  CHECK(test_util::contains(msg, "'weight': checkpoint shape [7, 6], expected the full shape [8, 6]"));
  TensorMap missing;
  missing.insert("weight", zeros({8, 6}));
  CHECK(test_util::contains(test_util::error_of<ValueError>([&] { col->load_full_state_dict(missing); }), "bias"));
  CHECK(test_util::contains(test_util::error_of<ValueError>([] {
                              nn::TensorParallelMultiheadAttention(nn::MultiheadAttentionOptions(8, 2).kdim(4));
                            }),
                            "kdim"));
}

// ---- attention --------------------------------------------------------------------------------
TEST_CASE("TensorParallelMultiheadAttention equals MultiheadAttention with masks") {
  const int64_t B = 2, L = 5, S = 7, E = 8, h = 4;
  manual_seed(2);
  nn::MultiheadAttention single(E, h);
  single->to(DType::f64);
  randomize(*single, 90);
  nn::TensorParallelMultiheadAttention tp(E, h);
  tp->to(DType::f64);
  tp->load_full_state_dict(single->state_dict());
  CHECK(tp->in_proj_weight.size(0) == 3 * E / dist::world_size());

  const Tensor x = randn_seeded({B, L, E}, 21), mem = randn_seeded({B, S, E}, 22), mem2 = randn_seeded({B, S, E}, 23);
  nn::AttentionArgs self;  // causal + key padding (batch 1 ignores its last 2 keys) + additive float mask
  self.causal = true;
  self.key_padding_mask = Tensor::from_vector(std::vector<bool>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {B, L});
  self.attn_mask = randn_seeded({L, L}, 24);
  check(compare(
      "MHA self: causal + key_padding_mask + float mask", *single, *tp, {x},
      [&](auto& v) { return single(v[0], v[0], v[0], self).first; },
      [&](auto& v) { return tp(v[0], v[0], v[0], self).first; }));

  nn::AttentionArgs cross;  // a per-head bool mask (cut to each rank's heads), padding, weights
  cross.attn_mask = random_head_mask(B, h, L, S, 25);
  cross.key_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{7, 4}), S);
  cross.need_weights = true;
  check(compare(
      "MHA cross (k = v): per-head bool mask + padding, weights", *single, *tp, {x, mem},
      [&](auto& v) { return flat_pair(single(v[0], v[1], v[1], cross)); },
      [&](auto& v) { return flat_pair(tp(v[0], v[1], v[1], cross)); }));
  cross.need_weights = false;
  check(compare(
      "MHA cross (k != v): per-head bool mask + padding", *single, *tp, {x, mem, mem2},
      [&](auto& v) { return single(v[0], v[1], v[2], cross).first; },
      [&](auto& v) { return tp(v[0], v[1], v[2], cross).first; }));
}

TEST_CASE("TensorParallelMultiheadAttention equals GroupedQueryAttention (h = 4, g = 2)") {
  const int64_t B = 2, L = 6, S = 4, E = 8;
  manual_seed(3);
  auto o = nn::GroupedQueryAttentionOptions(E, 4).num_kv_heads(2);
  nn::GroupedQueryAttention single(o);
  single->to(DType::f64);
  randomize(*single, 90);
  nn::TensorParallelMultiheadAttention tp(o);
  tp->to(DType::f64);
  tp->load_full_state_dict(single->state_dict());
  CHECK(tp->num_kv_heads_per_partition() == 2 / dist::world_size());
  CHECK(tp->k_proj->weight.size(0) == 4 / dist::world_size());

  const Tensor x = randn_seeded({B, L, E}, 31), mem = randn_seeded({B, S, E}, 32);
  nn::AttentionArgs self;
  self.causal = true;
  self.key_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{6, 4}), L);
  self.attn_mask = randn_seeded({L, L}, 33);
  check(compare(
      "GQA self: causal + padding + float mask", *single, *tp, {x},
      [&](auto& v) { return single(v[0], v[0], v[0], self).first; },
      [&](auto& v) { return tp(v[0], v[0], v[0], self).first; }));
  nn::AttentionArgs cross;
  cross.attn_mask = random_head_mask(1, 4, L, S, 34).squeeze(0);  // (h, L, S)
  cross.need_weights = true;
  check(compare(
      "GQA cross: per-head bool mask, weights", *single, *tp, {x, mem},
      [&](auto& v) { return flat_pair(single(v[0], v[1], v[1], cross)); },
      [&](auto& v) { return flat_pair(tp(v[0], v[1], v[1], cross)); }));

  // Built from the module itself: the same slices.
  nn::TensorParallelMultiheadAttention from(*single);
  CHECK(worst(diff(from->q_proj->weight, tp->q_proj->weight)) == 0.0);
  CHECK(worst(diff(from->v_proj->bias, tp->v_proj->bias)) == 0.0);
}

// ---- feed-forward and layers ---------------------------------------------------------------------
TEST_CASE("TensorParallelFeedForward equals Linear -> GELU -> Linear, initialized from the same seed") {
  manual_seed(4);
  nn::TensorParallelFeedForward tp(nn::TensorParallelFeedForwardOptions(8, 12).activation(nn::Activation::GELU));
  manual_seed(4);
  nn::Linear l1(8, 12), l2(12, 8);
  auto single = std::make_shared<Pair>("linear1", l1.ptr(), "linear2", l2.ptr());
  // Same generator state, same model: the gathered weights are the single-process ones, bit for bit.
  const double same = worst(test_util::map_diff(tp->full_state_dict(), single->state_dict()).empty() ? 0.0 : 1.0);
  CHECK(same == 0.0);
  single->to(DType::f64);
  tp->to(DType::f64);
  check(compare(
      "TensorParallelFeedForward (GELU)", *single, *tp, {randn_seeded({2, 3, 8}, 41)},
      [&](auto& v) { return l2(gelu(l1(v[0]))); }, [&](auto& v) { return tp(v[0]); }));
}

TEST_CASE("TensorParallelTransformerEncoderLayer equals TransformerEncoderLayer") {
  const Tensor src = randn_seeded({2, 6, 8}, 51), src_mask = randn_seeded({6, 6}, 52);
  const Tensor pad = logical_not(keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{6, 4}), 6));
  for (bool norm_first : {false, true}) {
    for (auto act : {nn::Activation::ReLU, nn::Activation::GELU}) {
      auto o =
          nn::TransformerLayerOptions(8, 4).dim_feedforward(12).dropout(0.0).norm_first(norm_first).activation(act);
      manual_seed(5);
      nn::TransformerEncoderLayer single(o);
      single->to(DType::f64);
      randomize(*single, 90);
      nn::TensorParallelTransformerEncoderLayer tp(o);
      tp->to(DType::f64);
      tp->load_full_state_dict(single->state_dict());
      std::string what = std::string("encoder layer norm_first=") + (norm_first ? "true " : "false") +
                         (act == nn::Activation::GELU ? " GELU" : " ReLU") + ", float mask + padding";
      check(compare(
          what, *single, *tp, {src}, [&](auto& v) { return single(v[0], src_mask, pad); },
          [&](auto& v) { return tp(v[0], src_mask, pad); }));
    }
  }
  // From an existing layer (its options, dtype and weights).
  manual_seed(6);
  nn::TransformerEncoderLayer single(nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  single->to(DType::f64);
  nn::TensorParallelTransformerEncoderLayer tp(*single);
  check(compare(
      "encoder layer built from the single-process layer", *single, *tp, {src}, [&](auto& v) { return single(v[0]); },
      [&](auto& v) { return tp(v[0]); }));
}

TEST_CASE("TensorParallelTransformerDecoderLayer equals TransformerDecoderLayer with memory and masks") {
  const Tensor tgt = randn_seeded({2, 5, 8}, 61), memory = randn_seeded({2, 6, 8}, 62);
  nn::TransformerMasks m;
  m.tgt_causal = true;
  m.tgt_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{5, 3}), 5);
  m.memory_keep_mask = keep_mask_from_lengths(Tensor::from_vector(std::vector<int64_t>{6, 4}), 6);
  m.memory_mask = randn_seeded({5, 6}, 63);
  for (bool norm_first : {false, true}) {
    auto o = nn::TransformerLayerOptions(8, 4)
                 .dim_feedforward(12)
                 .dropout(0.0)
                 .norm_first(norm_first)
                 .activation(norm_first ? nn::Activation::GELU : nn::Activation::ReLU);
    manual_seed(7);
    nn::TransformerDecoderLayer single(o);
    single->to(DType::f64);
    randomize(*single, 90);
    nn::TensorParallelTransformerDecoderLayer tp(o);
    tp->to(DType::f64);
    tp->load_full_state_dict(single->state_dict());
    std::string what = std::string("decoder layer norm_first=") + (norm_first ? "true" : "false") +
                       ", memory, causal + padding + float memory mask, cross weights";
    check(compare(
        what, *single, *tp, {tgt, memory},
        [&](auto& v) { return flat_pair(single->forward_with_cross_weights(v[0], v[1], m)); },
        [&](auto& v) { return flat_pair(tp->forward_with_cross_weights(v[0], v[1], m)); }));
    // Built from the layer itself: the same slices, so the same full state dict.
    nn::TensorParallelTransformerDecoderLayer from(*single);
    CHECK(worst(test_util::map_diff(from->full_state_dict(), single->state_dict()).empty() ? 0.0 : 1.0) == 0.0);
  }
}

TEST_CASE("dropout in training mode: replicated tensors stay the same on every rank") {
  // dropout1..3 draw from the default generator, alike on every rank; the attention and
  // feed-forward dropout inside the parallel region from tensor_parallel_generator().
  nn::tensor_parallel_manual_seed(11);
  auto o = nn::TransformerLayerOptions(8, 4).dim_feedforward(12).dropout(0.5);
  nn::TensorParallelTransformerDecoderLayer tp(o);
  tp->to(DType::f64);
  const Tensor tgt = randn_seeded({2, 40, 8}, 91), memory = randn_seeded({2, 33, 8}, 92);
  Tensor y = tp(tgt, memory);
  CHECK(dist_test::detail::spread_across_ranks(y) == 0.0);
  tp->eval();
  CHECK(worst(diff(y, tp(tgt, memory))) > 1e-3);  // the masks were applied
}

// ---- checkpoints ------------------------------------------------------------------------------------
TEST_CASE("full_state_dict: TP -> full -> single module, and one file between 1 and N ranks") {
  const auto o = nn::TransformerLayerOptions(8, 4).dim_feedforward(12).dropout(0.0);
  const Tensor tgt = randn_seeded({2, 5, 8}, 71), memory = randn_seeded({2, 6, 8}, 72);
  nn::TransformerMasks m;
  m.tgt_causal = true;
  manual_seed(8);
  nn::TransformerDecoderLayer single(o);
  manual_seed(8);
  nn::TensorParallelTransformerDecoderLayer tp(o);
  // The same generator state gives the same layer, whatever the number of ranks.
  CHECK(worst(test_util::map_diff(tp->full_state_dict(), single->state_dict()).empty() ? 0.0 : 1.0) == 0.0);

  // Move the TP layer away from its initial weights: one SGD step on its own shards.
  tp->to(DType::f64);
  (tp(tgt, memory, m) * randn_seeded({2, 5, 8}, 73)).sum().backward();
  {
    NoGradGuard no_grad;
    for (Tensor& p : tp->parameters()) p.sub_(p.grad(), 0.1);
  }
  const TensorMap full = tp->full_state_dict();
  CHECK(full.at("self_attn.in_proj_weight").shape() == Shape({24, 8}));
  CHECK(full.at("linear2.weight").shape() == Shape({8, 12}));
  nn::TransformerDecoderLayer restored(o);  // other weights, replaced by the full state dict
  restored->to(DType::f64);
  restored->load_state_dict(full);
  NoGradGuard no_grad;
  const double e = worst(diff(restored(tgt, memory, m), tp(tgt, memory, m)));
  if (dist::rank() == 0)
    std::printf("[tp np%d] TP -> full_state_dict -> single layer: output %.1e\n", dist::world_size(), e);
  CHECK(e < kTol);

  // Rank 0 writes one file; every rank loads it, into a TP layer and a single one.
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(AG_TMP_DIR) / "dist_tensor_parallel" / ("np" + std::to_string(dist::world_size()));
  const std::string path = (dir / "decoder_layer.safetensors").string();
  if (dist::rank() == 0) {
    fs::create_directories(dir);
    save_safetensors(path, full);
  }
  dist::barrier();
  manual_seed(9);
  nn::TensorParallelTransformerDecoderLayer again(o);
  again->to(DType::f64);
  again->load_full_state_dict(load_safetensors(path));
  CHECK(worst(test_util::map_diff(again->full_state_dict(), full).empty() ? 0.0 : 1.0) == 0.0);
  nn::TransformerDecoderLayer one(o);
  one->to(DType::f64);
  nn::load(*one, path);
  CHECK(worst(test_util::map_diff(one->state_dict(), full).empty() ? 0.0 : 1.0) == 0.0);
}

// ---- gradcheck across ranks ---------------------------------------------------------------------------
TEST_CASE("gradcheck across ranks: the differentiable collectives, first and second derivatives") {
  const int p = dist::world_size(), rank = dist::rank();
  struct Case {
    const char* name;
    dist_test::Fn fn;
    Placement in, out;
    Shape shape;
  };
  const std::vector<Case> cases = {
      {"copy_to_parallel_region",
       [](auto& v) { return dist::copy_to_parallel_region(v[0]); },
       Placement::replicated,
       Placement::sharded,
       {2, 3}},
      {"reduce_from_parallel_region",
       [](auto& v) { return dist::reduce_from_parallel_region(v[0]); },
       Placement::sharded,
       Placement::replicated,
       {2, 3}},
      {"gather_from_parallel_region",
       [](auto& v) { return dist::gather_from_parallel_region(v[0]); },
       Placement::sharded,
       Placement::replicated,
       {2, 3}},
      {"scatter_to_parallel_region",
       [](auto& v) { return dist::scatter_to_parallel_region(v[0]); },
       Placement::replicated,
       Placement::sharded,
       {3, 4}},
      {"functional::all_reduce SUM",
       [](auto& v) { return dist::functional::all_reduce(v[0]); },
       Placement::sharded,
       Placement::sharded,
       {2, 3}},
      {"functional::all_reduce AVG",
       [](auto& v) { return dist::functional::all_reduce(v[0], dist::ReduceOp::AVG); },
       Placement::sharded,
       Placement::sharded,
       {2, 3}},
      {"functional::all_gather dim 0",
       [](auto& v) { return dist::functional::all_gather(v[0], 0); },
       Placement::sharded,
       Placement::sharded,
       {2, 3}},
      {"functional::all_gather dim 1",
       [](auto& v) { return dist::functional::all_gather(v[0], 1); },
       Placement::sharded,
       Placement::sharded,
       {2, 3}},
      {"functional::reduce_scatter dim 0",
       [](auto& v) { return dist::functional::reduce_scatter(v[0], 0); },
       Placement::sharded,
       Placement::sharded,
       {4, 3}},
      {"functional::reduce_scatter dim 1",
       [](auto& v) { return dist::functional::reduce_scatter(v[0], 1); },
       Placement::sharded,
       Placement::sharded,
       {3, 4}},
  };
  for (const Case& c : cases) {
    // Replicated inputs are drawn alike on every rank, sharded ones per rank. Squared
    // first, so that the collective's gradient also depends on the input.
    const Tensor x = randn_seeded(c.shape, c.in == Placement::replicated ? 100 : 101 + rank).requires_grad_();
    GradcheckOptions opt;
    opt.name = c.name;
    auto squared = [&](const std::vector<Tensor>& v) { return c.fn({v[0] * v[0]}); };
    auto r = dist_test::gradcheck_across_ranks(squared, {x}, {c.in}, c.out, opt);
    CHECK_MESSAGE(r.ok, r.message);
    auto rr = dist_test::gradgradcheck_across_ranks(squared, x, c.in, c.out, opt);
    CHECK_MESSAGE(rr.ok, rr.message);
  }
  // The check can fail: an identity declared replicated -> sharded has the wrong backward
  // (it should all-reduce, as copy_to_parallel_region does) as soon as there are 2 ranks.
  GradcheckOptions opt;
  opt.name = "identity as copy_to_parallel_region";
  auto r = dist_test::gradcheck_across_ranks([](auto& v) { return v[0] * 1.0; },
                                             {randn_seeded({2, 3}, 100).requires_grad_()}, {Placement::replicated},
                                             Placement::sharded, opt);
  CHECK(r.ok == (p == 1));
  // And the second-order check: copy_to_parallel_region with a right backward that is
  // not differentiable (a raw all-reduce of the detached gradient) passes the first
  // check and fails the second.
  auto raw_copy_to = [](const std::vector<Tensor>& v) {
    return record("raw_copy_to", v[0].detach().clone(), {v[0]}, [](const Tensor& g, NeedsGrad) {
      Tensor s = g.detach().clone();
      dist::all_reduce(s);
      return Grads{s};
    });
  };
  const Tensor x = randn_seeded({2, 3}, 100).requires_grad_();
  opt.name = "raw_copy_to";
  CHECK(dist_test::gradcheck_across_ranks(raw_copy_to, {x}, {Placement::replicated}, Placement::sharded, opt).ok);
  CHECK(!dist_test::gradgradcheck_across_ranks(raw_copy_to, x, Placement::replicated, Placement::sharded, opt).ok);
}

TEST_CASE("gradcheck across ranks: tensor-parallel attention with respect to its inputs") {
  manual_seed(10);
  nn::TensorParallelMultiheadAttention mha(8, 4), gqa(nn::GroupedQueryAttentionOptions(8, 4).num_kv_heads(2));
  mha->to(DType::f64);
  gqa->to(DType::f64);
  nn::AttentionArgs args;
  args.causal = true;
  args.attn_mask = randn_seeded({3, 4}, 81);
  const Tensor x = randn_seeded({1, 3, 8}, 82).requires_grad_(), mem = randn_seeded({1, 4, 8}, 83).requires_grad_();
  for (auto* m : {&mha, &gqa}) {
    GradcheckOptions opt;
    opt.name = (*m)->packed() ? "TP MultiheadAttention (query, memory)" : "TP GQA (query, memory)";
    auto r =
        dist_test::gradcheck_across_ranks([&](auto& v) { return (*m)(v[0], v[1], v[1], args).first; }, {x, mem},
                                          {Placement::replicated, Placement::replicated}, Placement::replicated, opt);
    CHECK_MESSAGE(r.ok, r.message);
  }
}
