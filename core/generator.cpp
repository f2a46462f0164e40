#include "attograd/generator.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "attograd/error.h"

namespace ag {

namespace {
std::mutex g_default_mu;  // guards the default generator (see generator.h)
}

std::unique_lock<std::mutex> Generator::lock() const {
  if (this == &default_generator()) return std::unique_lock<std::mutex>(g_default_mu);
  return {};
}

void Generator::manual_seed(uint64_t seed) {
  auto hold = lock();
  reseed(seed);
}

void Generator::reseed(uint64_t seed) {
  seed_ = seed;
  uint64_t x = seed;
  for (auto& word : s_) {  // splitmix64: never an all-zero state
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    word = z ^ (z >> 31);
  }
  has_spare_ = false;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  double u2 = uniform();
  double r = std::sqrt(-2.0 * std::log(u1));
  double th = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(th);
  has_spare_ = true;
  return r * std::cos(th);
}

int64_t Generator::integer(int64_t low, int64_t high) {
  AG_CHECK(low < high, ValueError, "randint: empty range [", low, ", ", high, ")");
  // high - low and low + r in uint64: up to 2^64 - 1 wide (INT64_MIN..INT64_MAX), where
  // the int64 arithmetic would overflow; the sum converts back exactly (C++20 modulo).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  // Rejection sampling removes modulo bias.
  uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t r;
  do r = next_u64();
  while (r >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
}

std::string Generator::state() const {
  auto hold = lock();
  std::ostringstream os;
  os << seed_ << ' ' << has_spare_ << ' ';
  os.precision(17);
  os << std::hexfloat << spare_ << std::defaultfloat;
  for (uint64_t w : s_) os << ' ' << w;
  return os.str();
}

void Generator::set_state(const std::string& s) {
  // state() writes "<seed> <has_spare 0|1> <spare as a hex float> <w0> <w1> <w2> <w3>";
  // anything else (a missing or extra field, a bad number, an all-zero xoshiro state,
  // which would only ever give zeros) is refused and changes nothing.
  std::istringstream is(s);
  uint64_t seed = 0;
  int has_spare = -1;
  std::string spare_text, extra;
  std::array<uint64_t, 4> words{};
  is >> seed >> has_spare >> spare_text;
  for (auto& w : words) is >> w;
  char* end = nullptr;
  const double spare = spare_text.empty() ? 0.0 : std::strtod(spare_text.c_str(), &end);
  const bool ok = !is.fail() && !(is >> extra) && (has_spare == 0 || has_spare == 1) && end != nullptr &&
                  *end == '\0' && std::isfinite(spare) && (words[0] | words[1] | words[2] | words[3]) != 0;
  AG_CHECK(ok, ValueError, "Generator::set_state: malformed state text '", s.size() > 80 ? s.substr(0, 80) + "..." : s,
           "' (expected '<seed> <0|1> <spare> <4 nonzero state words>', as state() writes)");
  auto hold = lock();
  seed_ = seed;
  has_spare_ = has_spare == 1;
  spare_ = spare;
  s_ = words;
}

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ag
