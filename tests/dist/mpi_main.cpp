// The doctest main of the distributed tests: every rank runs the same test cases in the
// same order (they call collectives together), and the job fails when any rank fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <attograd/dist.h>
#include <attograd/factory.h>

int main(int argc, char** argv) {
  ag::dist::InitGuard dist(&argc, &argv);
  doctest::Context context(argc, argv);
  int rc = context.run();
  if (context.shouldExit()) return rc;
  ag::Tensor worst = ag::Tensor::from_vector(std::vector<int64_t>{rc});
  ag::dist::all_reduce(worst, ag::dist::ReduceOp::MAX);
  return static_cast<int>(worst.item<int64_t>());
}
