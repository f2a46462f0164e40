#pragma once
// The copy task draws with the examples' shared PNG plotting code.
#include "common/plot.h"

namespace copy_task {
namespace plot = ::examples::plot;
}  // namespace copy_task
