#pragma once
/// \file
/// Everything in optim: `#include <attograd/optim.h>`
#include "attograd/optim/training_state.h"
#include "attograd/optim/clip.h"
#include "attograd/optim/grad_scaler.h"
#include "attograd/optim/lbfgs.h"
#include "attograd/optim/optimizer.h"
#include "attograd/optim/scheduler.h"
