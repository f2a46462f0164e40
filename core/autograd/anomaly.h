#pragma once
// Anomaly mode's reports (internal to the engine): where a node was created, and the
// check of each closure's gradients for nan and inf.
#include <string>
#include <vector>

#include "attograd/detail/tape.h"

namespace ag::detail {

// "\n'<name>' was created at:\n  #0 ..." for errors, or "" for a node with no trace.
std::string describe_creation(const Node& n);

// Throws AutogradError when a gradient that node `n`'s closure returned for an input in
// `needs` holds nan or inf: the op's name, its inputs' shapes and its creation trace.
void check_gradients(const Node& n, const Grads& grads, const std::vector<bool>& needs);

}  // namespace ag::detail
