#pragma once
// Shared by the lm example's tests (test_lm.cpp, test_lm_rnn.cpp).
#include <string>

#include "lm/trainer.h"

namespace lm {

// A short paragraph repeated with small changes, so that the held-out tail is predictable
// from context but not from the previous character alone.
inline std::string paragraph() {
  std::string s;
  const char* names[] = {"the program", "the library", "the work", "the software"};
  for (int i = 0; i < 24; ++i)
    s += std::string("You may copy and distribute ") + names[i % 4] +
         " in any medium, provided that you keep intact all notices. ";
  return s;
}

// Tiny matrices: one thread, so that OpenBLAS's workers do not spin on a shared machine.
inline const bool single_thread = [] {
  set_num_threads(1);
  return true;
}();

}  // namespace lm
