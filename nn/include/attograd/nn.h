#pragma once
/// \file
/// Everything in nn: `#include <attograd/nn.h>`
#include "attograd/nn/activation.h"
#include "attograd/nn/attention.h"
#include "attograd/nn/beam_search.h"
#include "attograd/nn/container.h"
#include "attograd/nn/distributed.h"
#include "attograd/nn/functional.h"
#include "attograd/nn/gqa.h"
#include "attograd/nn/init.h"
#include "attograd/nn/kv_cache.h"
#include "attograd/nn/layers.h"
#include "attograd/nn/llama.h"
#include "attograd/nn/loss.h"
#include "attograd/nn/module.h"
#include "attograd/nn/tensor_parallel.h"
#include "attograd/nn/transformer.h"
