// The world as this process sees it, and the one-process fallback.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

using namespace ag;

TEST_CASE("dist: the world agrees with mpirun") {
  CHECK(dist::is_initialized());
  CHECK(dist::world_size() >= 1);
  CHECK(dist::rank() >= 0);
  CHECK(dist::rank() < dist::world_size());
  Tensor t = Tensor::from_vector(std::vector<double>{1.0});
  dist::all_reduce(t);
  CHECK(t.item<double>() == doctest::Approx(dist::world_size()));
}
