// State dict entries as text (optim/state_text.h).
#include "state_text.h"

#include <cstdio>
#include <stdexcept>

#include "attograd/error.h"

namespace ag::optim::state_text {
namespace {
template <class Convert>
auto parse(const Metadata& state, const std::string& key, const char* who, Convert convert) {
  auto it = state.find(key);
  AG_CHECK(it != state.end(), ValueError, who, ".load_state_dict: missing '", key, "'");
  const std::string& text = it->second;
  std::size_t used = 0;
  decltype(convert(text, &used)) v{};
  try {
    v = convert(text, &used);
  } catch (const std::logic_error&) {  // no number, or out of range
    used = 0;
  }
  AG_CHECK(!text.empty() && used == text.size(), ValueError, who, ".load_state_dict: '", key,
           "' is not a valid number: '", text, "'");
  return v;
}
}  // namespace

int64_t read_int(const Metadata& state, const std::string& key, const char* who) {
  return parse(state, key, who,
               [](const std::string& s, std::size_t* used) { return static_cast<int64_t>(std::stoll(s, used)); });
}

double read_double(const Metadata& state, const std::string& key, const char* who) {
  return parse(state, key, who, [](const std::string& s, std::size_t* used) { return std::stod(s, used); });
}

std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

}  // namespace ag::optim::state_text
