// A job with a failing rank must end, whole, within seconds and say which rank failed.
//   fault throw N   rank N throws out of main while the others wait in an all-reduce
//   fault kill N    rank N is killed (SIGKILL) while the others wait in an all-reduce
// Run by CTest under tools/mpirun -np 2 (tests/CMakeLists.txt checks the message).
#include <attograd/attograd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  ag::dist::InitGuard dist(&argc, &argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: fault throw|kill RANK\n");
    return 2;
  }
  const std::string what = argv[1];
  const int victim = std::atoi(argv[2]);
  ag::Tensor t = ag::ones({4});
  ag::dist::all_reduce(t);  // everyone is up
  if (ag::dist::rank() == victim) {
    if (what == "kill") std::raise(SIGKILL);
    throw ag::ValueError("fault: rank " + std::to_string(victim) + " fails on purpose");
  }
  for (;;) ag::dist::all_reduce(t);  // would hang forever if the job were not ended
}
