// PackedSequence and the packing functions of torch.nn.utils.rnn. Packing and unpacking
// are one index_select each over the rows (so the tape holds one gather, whose backward
// scatters the gradient back), not a slice per time step.
#include "attograd/nn/packed_sequence.h"

#include <algorithm>
#include <numeric>

#include "attograd/detail/error_context.h"

namespace ag::nn::utils::rnn {
namespace {

std::vector<int64_t> to_vector(const Tensor& t) {
  const Tensor c = t.to(DType::i64).contiguous();
  const int64_t* p = c.data<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

Tensor i64(const std::vector<int64_t>& v) { return tensor(v, DType::i64); }

std::string str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The inverse permutation.
std::vector<int64_t> invert(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  AG_CHECK(batch_sizes_.defined() && batch_sizes_.dim() == 1 && !is_floating(batch_sizes_.dtype()), ValueError,
           "PackedSequence: batch_sizes must be a 1-D integer tensor, got ", batch_sizes_.shape());
  AG_CHECK(data_.defined() && data_.dim() >= 1, ShapeError, "PackedSequence: data must have a row dim, got ",
           data_.shape());
  const std::vector<int64_t> bs = to_vector(batch_sizes_);
  int64_t sum = 0;
  for (size_t t = 0; t < bs.size(); ++t) {
    AG_CHECK(bs[t] > 0 && (t == 0 || bs[t] <= bs[t - 1]), ValueError,
             "PackedSequence: batch_sizes must be positive and non-increasing, got ", str(bs));
    sum += bs[t];
  }
  AG_CHECK(sum == data_.size(0), ShapeError, "PackedSequence: batch_sizes ", str(bs), " sum to ", sum, ", data ",
           data_.shape(), " has ", data_.size(0), " rows");
  batch_sizes_ = batch_sizes_.to(DType::i64);
  if (sorted_indices_.defined()) {
    const int64_t B = bs.empty() ? 0 : bs[0];
    std::vector<int64_t> perm = to_vector(sorted_indices_);
    std::vector<int64_t> check = perm;
    std::sort(check.begin(), check.end());
    bool ok = static_cast<int64_t>(perm.size()) == B;
    for (size_t i = 0; ok && i < check.size(); ++i) ok = check[i] == static_cast<int64_t>(i);
    AG_CHECK(ok, ValueError, "PackedSequence: sorted_indices ", str(perm), " must be a permutation of ", B,
             " sequences");
    sorted_indices_ = i64(perm);
    if (!unsorted_indices_.defined()) unsorted_indices_ = i64(invert(perm));
  }
}

std::vector<int64_t> PackedSequence::batch_sizes_vector() const { return to_vector(batch_sizes_); }

PackedSequence PackedSequence::to(DType dtype) const {
  return PackedSequence(data_.to(dtype), batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths_in, bool batch_first,
                                    bool enforce_sorted) try {
  AG_CHECK(input.dim() >= 2, ShapeError, "pack_padded_sequence: input ", input.shape(),
           " must be (T, B, *) or (B, T, *) with batch_first");
  Tensor x = batch_first ? input.transpose(0, 1) : input;  // (T, B, *)
  const int64_t T = x.size(0), B = x.size(1);
  AG_CHECK(static_cast<int64_t>(lengths_in.size()) == B, ShapeError, "pack_padded_sequence: ", lengths_in.size(),
           " lengths for input ", input.shape(), " of ", B, " sequences");
  for (int64_t l : lengths_in)
    AG_CHECK(l >= 1 && l <= T, ValueError, "pack_padded_sequence: lengths ", str(lengths_in), " must lie in [1, ", T,
             "] for input ", input.shape(), (l < 1 ? " (a zero-length sequence)" : ""));
  std::vector<int64_t> order(B), lengths = lengths_in;
  std::iota(order.begin(), order.end(), 0);
  if (enforce_sorted) {
    AG_CHECK(std::is_sorted(lengths.begin(), lengths.end(), std::greater<>()), ValueError,
             "pack_padded_sequence: lengths ", str(lengths),
             " must be sorted in decreasing order with enforce_sorted = true (pass enforce_sorted = false "
             "for unsorted ones)");
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
    for (int64_t i = 0; i < B; ++i) lengths[i] = lengths_in[order[i]];
  }
  // batch_sizes[t] = how many sorted sequences are longer than t; row (t, b) of the
  // (T, B) grid is packed when b < batch_sizes[t].
  std::vector<int64_t> bs(lengths[0]), rows;
  for (int64_t t = 0; t < lengths[0]; ++t) {
    bs[t] = std::count_if(lengths.begin(), lengths.end(), [t](int64_t l) { return l > t; });
    for (int64_t b = 0; b < bs[t]; ++b) rows.push_back(t * B + order[b]);
  }
  Shape flat{T * B};
  for (int64_t d = 2; d < x.dim(); ++d) flat.push_back(x.size(d));
  Tensor data = index_select(x.reshape(flat), 0, i64(rows));
  if (enforce_sorted) return PackedSequence(data, i64(bs));
  return PackedSequence(data, i64(bs), i64(order));
} catch (const Error& e) { detail::rethrow_in_op("pack_padded_sequence", e); }

PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first, bool enforce_sorted) {
  AG_CHECK(lengths.defined() && lengths.dim() == 1 && !is_floating(lengths.dtype()), ValueError,
           "pack_padded_sequence: lengths must be a 1-D integer tensor, got ", lengths.shape(), " ",
           lengths.defined() ? lengths.dtype() : DType::i64);
  return pack_padded_sequence(input, to_vector(lengths), batch_first, enforce_sorted);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) try {
  const std::vector<int64_t> bs = sequence.batch_sizes_vector();
  const Tensor& data = sequence.data();
  const int64_t steps = static_cast<int64_t>(bs.size()), B = steps ? bs[0] : 0, N = data.size(0);
  const int64_t T = total_length.value_or(steps);
  AG_CHECK(T >= steps, ValueError, "pad_packed_sequence: total_length ", T, " is shorter than the longest sequence's ",
           steps, " steps");
  // Row (t, b) of the padded grid takes packed row offset[t] + b, or the padding row N.
  std::vector<int64_t> rows(T * B, N), lengths(B, 0);
  for (int64_t t = 0, o = 0; t < steps; o += bs[t], ++t)
    for (int64_t b = 0; b < bs[t]; ++b) rows[t * B + b] = o + b, lengths[b] = t + 1;
  Shape pad_shape = data.shape();
  pad_shape[0] = 1;
  const Tensor rows_ext = cat({data, full(pad_shape, padding_value, data.dtype())}, 0);
  Shape grid{T, B};
  for (int64_t d = 1; d < data.dim(); ++d) grid.push_back(data.size(d));
  Tensor padded = index_select(rows_ext, 0, i64(rows)).reshape(grid);
  Tensor len = i64(lengths);
  if (sequence.unsorted_indices().defined()) {
    padded = index_select(padded, 1, sequence.unsorted_indices());
    len = index_select(len, 0, sequence.unsorted_indices());
  }
  return {batch_first ? padded.transpose(0, 1) : padded, len};
} catch (const Error& e) { detail::rethrow_in_op("pad_packed_sequence", e); }

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) try {
  AG_CHECK(!sequences.empty(), ValueError, "pad_sequence: no sequences");
  int64_t longest = 0;
  for (const Tensor& s : sequences) {
    AG_CHECK(s.dim() >= 1, ShapeError, "pad_sequence: a sequence of shape ", s.shape(), " has no length dim");
    AG_CHECK(s.dim() == sequences[0].dim() &&
                 std::equal(s.shape().begin() + 1, s.shape().end(), sequences[0].shape().begin() + 1),
             ShapeError, "pad_sequence: trailing dims differ: ", sequences[0].shape(), " and ", s.shape());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) {
    if (s.size(0) == longest) {
      padded.push_back(s);
      continue;
    }
    Shape fill_shape = s.shape();
    fill_shape[0] = longest - s.size(0);
    padded.push_back(cat({s, full(fill_shape, padding_value, s.dtype())}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
} catch (const Error& e) { detail::rethrow_in_op("pad_sequence", e); }

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.dim() >= 1 ? s.size(0) : 0);
  return pack_padded_sequence(pad_sequence(sequences), lengths, false, enforce_sorted);
}

}  // namespace ag::nn::utils::rnn
