#pragma once
/// \file
/// Every differentiable op: this header includes each op family's header (and the core
/// headers they build on). Each family is one header in attograd/ops/ and one source in
/// ops/, where each op's backward sits beside its forward; ops/README.md lists the
/// families and their ops. Composite ops (var, logsumexp, softsign, attention, ...) are
/// built from primitives and get their gradients for free.
#include "attograd/tape.h"
#include "attograd/autocast.h"
#include "attograd/factory.h"
#include "attograd/tensor.h"

#include "attograd/ops/activation.h"
#include "attograd/ops/attention.h"
#include "attograd/ops/binary.h"
#include "attograd/ops/comparison.h"
#include "attograd/ops/conv.h"
#include "attograd/ops/distributed.h"
#include "attograd/ops/indexing.h"
#include "attograd/ops/linalg.h"
#include "attograd/ops/loss.h"
#include "attograd/ops/norm.h"
#include "attograd/ops/pool.h"
#include "attograd/ops/position.h"
#include "attograd/ops/promotion.h"
#include "attograd/ops/random.h"
#include "attograd/ops/reduction.h"
#include "attograd/ops/rnn.h"
#include "attograd/ops/scan_sort.h"
#include "attograd/ops/shape.h"
#include "attograd/ops/softmax.h"
#include "attograd/ops/unary.h"
#include "attograd/ops/upsample.h"
#include "attograd/ops/view.h"
