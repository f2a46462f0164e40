#pragma once
/// \file
/// The former name of <attograd/optim/training_state.h> (save_checkpoint / load_checkpoint:
/// a training run's state in one file), kept so that existing includes build.
#include "attograd/optim/training_state.h"
