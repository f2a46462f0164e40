#pragma once
/// \file
/// Memory overlap of strided tensors (PyTorch's ATen/MemoryOverlap.h). In-place ops and
/// copy_ refuse to write into a tensor two of whose elements share a memory location
/// (`expand({4}).add_(...)` would lose updates), or from an input that shares only some
/// locations with the written-to tensor (`a.narrow(0, 0, 3).copy_(a.narrow(0, 1, 3))`
/// would read values already overwritten). An input identical to the output (same
/// storage, offset and strides: `x.add_(x)`) is fine, as in PyTorch.
#include "attograd/tensor.h"

namespace ag {

/// Whether a tensor's elements alias each other. too_hard: layouts where deciding costs
/// too much (PyTorch's MemOverlap::TooHard); callers treat it as "no".
enum class MemOverlap : uint8_t { no, yes, too_hard };

/// How two tensors' elements share memory: full = the same location for each index
/// (identical layout over one storage), partial = some but not index for index, no =
/// none, too_hard = not decided (callers that can go through a temporary do).
enum class MemOverlapStatus : uint8_t { full, partial, no, too_hard };

/// Internal overlap: exact for a zero stride on a dim of size > 1, for layouts whose
/// strides nest (each at least the extent of the smaller ones, as any view of a dense
/// tensor), and by listing the locations of up to 2^16 elements; too_hard beyond.
MemOverlap has_internal_overlap(const Tensor& t);

/// Whether t's elements fill [offset, offset + numel) exactly, each location once, in some
/// order of its dims (PyTorch's Tensor::is_non_overlapping_and_dense): contiguous tensors
/// and their permutations; not an expand, nor a slice that skips elements.
bool is_non_overlapping_and_dense(const Tensor& t);

/// ValueError "unsupported operation: more than one element of the written-to tensor
/// refers to a single memory location. Please clone() the tensor before performing the
/// operation." (PyTorch's wording) prefixed by `op` and the layout, when t overlaps itself.
void assert_no_internal_overlap(const Tensor& t, const char* op);

/// The overlap of `a` and `b` (b already broadcast to a's shape, or not: a mapping that
/// differs is never full). Byte ranges over the shared storage decide most cases.
MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b);

/// ValueError "unsupported operation: some elements of the input tensor and the
/// written-to tensor refer to a single memory location. Please clone() the tensor before
/// performing the operation." when `input` (broadcast to `out`'s shape) overlaps `out`
/// partially. Returns the status (full, no or too_hard) otherwise.
MemOverlapStatus assert_no_partial_overlap(const Tensor& out, const Tensor& input, const char* op);

}  // namespace ag
