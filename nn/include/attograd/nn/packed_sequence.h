#pragma once
/// \file
/// Variable-length batches for the recurrent modules, as LibTorch's
/// `torch::nn::utils::rnn` (PyTorch's `torch.nn.utils.rnn`): a PackedSequence holds the
/// time steps one after another, step t's batch_sizes[t] still-running sequences first
/// (sequences sorted by decreasing length), so a recurrent layer never computes a padded
/// step. All functions are differentiable in the data (gathers recorded on the tape).
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "attograd/ops.h"

namespace ag::nn::utils::rnn {

/// torch::nn::utils::rnn::PackedSequence.
class PackedSequence {
 public:
  /// data (N, *): the packed rows; batch_sizes (T) i64: rows per step, non-increasing;
  /// sorted_indices (B) i64: the original batch index of each packed column (undefined
  /// when the batch came sorted); unsorted_indices its inverse (computed when omitted).
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});
  const Tensor& data() const { return data_; }                          ///< (N, *)
  const Tensor& batch_sizes() const { return batch_sizes_; }            ///< (T) i64
  const Tensor& sorted_indices() const { return sorted_indices_; }      ///< (B) i64 or undefined
  const Tensor& unsorted_indices() const { return unsorted_indices_; }  ///< (B) i64 or undefined
  /// batch_sizes as integers.
  std::vector<int64_t> batch_sizes_vector() const;
  /// The same packing with data converted to dtype.
  PackedSequence to(DType dtype) const;
  bool is_cuda() const { return false; }            ///< CPU only
  bool defined() const { return data_.defined(); }  ///< whether it holds data

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs a padded batch: input (T, B, *) or (B, T, *) with batch_first; lengths (B),
/// i64, each in [1, T]. enforce_sorted demands decreasing lengths (ValueError naming
/// them otherwise); without it the batch is sorted and sorted_indices recorded.
PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
/// The same with lengths as integers.
PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);

/// Unpacks to (padded (T, B, *) or (B, T, *), lengths (B) i64) in the original batch
/// order, padding with padding_value; total_length (>= the longest length) pads to that
/// many steps.
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

/// Stacks sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), padding
/// with padding_value.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0);

/// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

}  // namespace ag::nn::utils::rnn
