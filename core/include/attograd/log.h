#pragma once
/// \file
/// ag::log() with spdlog's API: ag::log().info("step {} loss {:.4f}", step, loss);
#include <spdlog/spdlog.h>

#include "attograd/runtime.h"
