#pragma once
/// \file
/// DecoderKVCache: the keys and values of the positions decoded so far, for cached
/// (incremental) decoding with GroupedQueryAttention::forward_step and
/// MultiheadAttention::forward_step. Legend: B batch, g key/value heads (h for
/// MultiheadAttention), t cached positions, d key head dim, dv value head dim.
#include <cstdint>
#include <vector>

#include "attograd/tensor.h"

namespace ag::nn {

// ---- DecoderKVCache: keys and values of the positions decoded so far ----
/// One Layer per attention layer holds k (B, g, t, d) and v (B, g, t, dv) in buffers whose
/// position dim has capacity >= t and doubles when full, so an append copies only the new
/// positions (amortized O(1) per token) where a cat per step would copy all t each step.
/// keys()/values() are views (B, g, t, d) into the buffers; no copy. The cache holds values
/// without autograd history: cached decoding is inference (train with forward).
struct DecoderKVCache {
  /// One attention layer's cached keys (B, g, t, d) and values (B, g, t, dv).
  class Layer {
   public:
    /// k (B, g, n, d), v (B, g, n, dv): n new positions. The first append fixes B, g, d,
    /// dv and the dtype; later ones must match (ShapeError / DTypeError).
    void append(const Tensor& k, const Tensor& v);
    Tensor keys() const;    ///< (B, g, t, d), a view
    Tensor values() const;  ///< (B, g, t, dv), a view
    /// t, the positions cached.
    int64_t length() const { return length_; }
    /// Positions the buffers hold before they grow.
    int64_t capacity() const { return k_.defined() ? k_.size(2) : 0; }
    /// Bytes of K and V per cached position and batch row: g * (d + dv) * itemsize.
    int64_t bytes_per_token() const;
    int64_t bytes_allocated() const;  ///< both buffers, capacity included
    void clear();                     ///< forgets the positions and frees the buffers

   private:
    void append_impl(const Tensor& k, const Tensor& v);
    Tensor k_, v_;  ///< (B, g, capacity, d), (B, g, capacity, dv)
    int64_t length_ = 0;
  };

  DecoderKVCache() = default;
  /// One empty Layer per attention layer.
  explicit DecoderKVCache(std::size_t num_layers) : layers(num_layers) {}
  /// One entry per layer, in order.
  std::vector<Layer> layers;
  /// t of the first layer (0 when empty).
  int64_t length() const { return layers.empty() ? 0 : layers[0].length(); }
  int64_t bytes_per_token() const;  ///< summed over the layers
};

}  // namespace ag::nn
