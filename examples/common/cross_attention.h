#pragma once
// The cross-attention pictures of the encoder-decoder examples (copy_task, translate):
// every decoder layer's per-head weights for one sentence, teacher-forced on its target.
#include <attograd/attograd.h>

#include <string>
#include <vector>

#include "common/plot.h"

namespace examples {

// Decoder input x (1, T, E) against memory (1, S, E) -> per layer the weights (h, T, S).
inline std::vector<ag::Tensor> cross_attention_maps(ag::nn::TransformerDecoderImpl& decoder, ag::Tensor x,
                                                    const ag::Tensor& memory, const ag::Tensor& memory_keep_mask) {
  ag::NoGradGuard no_grad;
  ag::nn::TransformerMasks m;
  m.tgt_causal = true;
  m.memory_keep_mask = memory_keep_mask;
  std::vector<ag::Tensor> maps;
  for (std::size_t i = 0; i < decoder.layers->size(); ++i) {
    auto [y, w] = decoder.layers->at<ag::nn::TransformerDecoderLayerImpl>(i)->forward_with_cross_weights(x, memory, m);
    maps.push_back(w.select(0, 0));
    x = y;
  }
  return maps;
}

// One row of heatmaps per layer, one map per head; rows labelled with the output tokens,
// columns with the source tokens.
inline void draw_cross_attention(const std::string& path, const std::string& title, const std::vector<ag::Tensor>& maps,
                                 const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  const int64_t H = maps.at(0).size(0), T = maps[0].size(1), S = maps[0].size(2);
  std::vector<std::vector<std::vector<double>>> grid;
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < maps.size(); ++l) {
    grid.emplace_back();
    for (int64_t k = 0; k < H; ++k) grid.back().push_back(maps[l].select(0, k).to_vector<double>());
    titles.push_back("decoder layer " + std::to_string(l + 1) + (l + 1 == maps.size() ? " (last)" : ""));
  }
  plot::heatmaps(path, title, grid, static_cast<int>(T), static_cast<int>(S), rows, cols, titles);
}

}  // namespace examples
