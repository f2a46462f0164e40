#pragma once
/// \file
/// deprecated: include <attograd/ops.h> or the family header (ops/README.md lists them).
#include "attograd/ops.h"
