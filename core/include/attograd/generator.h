#pragma once
// Seedable random numbers that repeat exactly across runs and platforms: a 64-bit
// Mersenne Twister (its output sequence is fixed by the C++ standard) with our own
// uniform and normal transforms (std:: distributions are implementation-defined).
#include <cstdint>
#include <random>
#include <string>

namespace ag {

class Generator {
 public:
  explicit Generator(uint64_t seed = 5489) { manual_seed(seed); }
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }

  uint64_t next_u64() { return engine_(); }
  double uniform();                              // [0, 1), 53 random bits
  double normal();                               // N(0, 1), Box-Muller
  int64_t integer(int64_t low, int64_t high);    // [low, high), unbiased

  // The full state as text, for checkpoints; set_state throws ValueError on bad text.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_ = 0;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

Generator& default_generator();
void manual_seed(uint64_t seed);  // seeds the default generator

}  // namespace ag
