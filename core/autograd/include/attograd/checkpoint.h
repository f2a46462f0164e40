#pragma once
/// \file
/// The former name of <attograd/activation_checkpoint.h> (ag::checkpoint, activation
/// checkpointing), kept so that existing includes build.
#include "attograd/activation_checkpoint.h"
