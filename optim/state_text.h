#pragma once
// State dicts kept as text (schedulers, ReduceLROnPlateau, GradScaler: they go into a
// checkpoint's metadata): reading an entry as exactly one number, writing doubles exactly.
#include <cstdint>
#include <string>

#include "attograd/safetensors.h"

namespace ag::optim::state_text {

// state[key] as one integer or one double. std::stoll / std::stod alone would read
// "7junk" as 7 and "2.5" as 2: here the whole text must be the number. ValueError
// "<who>.load_state_dict: missing '<key>'" or "... '<key>' is not a valid number: '<text>'".
int64_t read_int(const Metadata& state, const std::string& key, const char* who);
double read_double(const Metadata& state, const std::string& key, const char* who);

// v as a hex float ("%a"), which reads back bit for bit.
std::string exact(double v);

}  // namespace ag::optim::state_text
