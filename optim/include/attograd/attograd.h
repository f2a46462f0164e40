#pragma once
/// \file
/// Umbrella header: `#include <attograd/attograd.h>`
#include "attograd/autograd.h"
#include "attograd/dtype.h"
#include "attograd/error.h"
#include "attograd/factory.h"
#include "attograd/generator.h"
#include "attograd/runtime.h"
#include "attograd/safetensors.h"
#include "attograd/shape.h"
#include "attograd/storage.h"
#include "attograd/tensor.h"
#include "attograd/version.h"
#include "attograd/dist.h"
#include "attograd/ops.h"
#include "attograd/nn.h"
#include "attograd/optim.h"
