// nn::DistributedDataParallel in one process (a world of one): the bucket assignment,
// option checks, and that wrapping changes nothing. The multi-rank behaviour is in
// tests/dist/test_ddp.cpp.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

using Buckets = std::vector<std::vector<int64_t>>;

// Parameters of the given sizes and dtypes, registered as p0, p1, ...
struct ParamsImpl : nn::Module {
  ParamsImpl(const std::vector<std::pair<int64_t, DType>>& spec) : nn::Module("Params") {
    for (std::size_t i = 0; i < spec.size(); ++i)
      register_parameter("p" + std::to_string(i), zeros({spec[i].first}, spec[i].second));
  }
};

Buckets buckets_of(const std::vector<std::pair<int64_t, DType>>& spec, double cap_bytes) {
  nn::DistributedDataParallel ddp(std::make_shared<ParamsImpl>(spec),
                                  nn::DistributedDataParallelOptions().bucket_cap_mb(cap_bytes / (1 << 20)));
  return ddp.bucket_indices();
}

}  // namespace

TEST_CASE("ddp buckets: reverse registration order, at most the cap, one dtype each") {
  const DType f = DType::f32, d = DType::f64;
  // f32 sizes in bytes 40, 40, 40, 40 under a cap of 100: two per bucket, last ones first.
  CHECK(buckets_of({{10, f}, {10, f}, {10, f}, {10, f}}, 100) == Buckets{{3, 2}, {1, 0}});
  // A bucket closes before it would pass the cap; a parameter larger than the cap is alone.
  CHECK(buckets_of({{10, f}, {50, f}, {10, f}, {20, f}}, 100) == Buckets{{3}, {2}, {1}, {0}});
  CHECK(buckets_of({{5, f}, {5, f}, {30, f}}, 100) == Buckets{{2}, {1, 0}});
  // Everything in one bucket under the default 25 MB.
  nn::DistributedDataParallel one(
      std::make_shared<ParamsImpl>(std::vector<std::pair<int64_t, DType>>{{1000, f}, {1000, f}, {1000, f}}));
  CHECK(one.bucket_indices() == Buckets{{2, 1, 0}});
  CHECK(one.options().bucket_cap_mb() == 25);
  CHECK(one.options().broadcast_buffers());
  CHECK_FALSE(one.options().find_unused_parameters());
  // Two dtypes: each fills its own buckets, listed in the order they were opened.
  // p3 f64 (80 B), p2 f32 (40 B), p1 f64 (80 B: 160 > 100, a new f64 bucket), p0 f32 (40 B).
  CHECK(buckets_of({{10, f}, {10, d}, {10, f}, {10, d}}, 100) == Buckets{{3}, {2, 0}, {1}});
}

TEST_CASE("ddp: frozen parameters are not bucketed; tied ones once") {
  manual_seed(0);
  nn::Linear a(3, 3), b(3, 3);
  b->weight = a->weight;  // a tie: parameters() lists it once
  auto seq = nn::Sequential(a, b);
  seq->requires_grad_(true);
  a->bias.requires_grad_(false);
  // trainable: a.weight (0), b.bias (1)
  nn::DistributedDataParallel ddp(seq);
  CHECK(ddp.bucket_indices() == Buckets{{1, 0}});
}

TEST_CASE("ddp: options and arguments are checked") {
  CHECK(contains(error_of<ValueError>([] {
                   nn::DistributedDataParallel(std::make_shared<ParamsImpl>(std::vector<std::pair<int64_t, DType>>{}),
                                               nn::DistributedDataParallelOptions().bucket_cap_mb(0));
                 }),
                 "bucket_cap_mb must be positive"));
  CHECK(contains(error_of<ValueError>([] { nn::DistributedDataParallel(std::shared_ptr<nn::Module>()); }),
                 "the module is null"));
}

TEST_CASE("ddp in a world of one: the plain local backward, no hooks; no_sync nests; the wrapper moves") {
  manual_seed(4);
  nn::Linear lin(4, 2);
  lin->to(DType::f64);
  Tensor x = randn({5, 4}, DType::f64);
  auto grads = [&] {
    std::vector<std::vector<double>> g;
    for (auto& p : lin->parameters()) g.push_back(p.grad().to_vector<double>());
    return g;
  };
  pow(lin(x), 2.0).sum().backward();
  auto alone = grads();
  lin->zero_grad();

  nn::DistributedDataParallel ddp(lin);
  for (auto& p : lin->parameters()) CHECK(p.impl()->post_accumulate_grad_hooks.empty());
  {
    auto outer = ddp.no_sync();
    auto inner = ddp.no_sync();
    pow(lin(x), 2.0).sum().backward();
  }
  CHECK(grads() == alone);
  nn::DistributedDataParallel moved(std::move(ddp));
  CHECK(moved.module().get() == lin.ptr().get());
  lin->zero_grad();
  pow(lin(x), 2.0).sum().backward();
  CHECK(grads() == alone);
  CHECK(moved.comm_stats().reductions == 0);
  CHECK(moved.comm_wait_seconds() == 0);
}
