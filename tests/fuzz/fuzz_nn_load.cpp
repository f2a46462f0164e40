// nn::load (a module's load_state_dict from a safetensors file) on arbitrary bytes: it
// returns or throws ag::Error, and a rejected file leaves every parameter and buffer
// bit-identical. An accepted file with strict loading has set every one of them.
// The module: Embedding(5, 3) -> LayerNorm(3) -> Linear(3, 2), state-dict keys
// 0.weight (5, 3), 1.weight (3), 1.bias (3), 2.weight (2, 3), 2.bias (2).
#include "fuzz_util.h"

namespace nn = ag::nn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  static nn::Sequential model = [] {
    ag::manual_seed(1);
    return nn::Sequential(nn::Embedding(5, 3), nn::LayerNorm(std::vector<int64_t>{3}), nn::Linear(3, 2));
  }();
  static const ag::TensorMap initial = fuzz::clone_map(model->state_dict());

  const std::string& path = file.write(data, size);
  // Each input starts from the same weights, so that a crash reproduces from its file.
  model->load_state_dict(initial);
  const bool strict = size % 2 == 0;
  const ag::TensorMap before = fuzz::clone_map(model->state_dict());
  if (fuzz::accepts("nn::load", [&] { nn::load(*model, path, strict); })) {
    if (!strict) return 0;
    // Strict: the state now equals the file's tensors (same dtypes: the module is f32,
    // and a floating f64 tensor is converted).
    ag::TensorMap want;
    for (const auto& [k, t] : ag::load_safetensors(path)) want.insert(k, t.to(ag::DType::f32));
    if (auto d = fuzz::map_diff(model->state_dict(), want); !d.empty())
      fuzz::fail("nn::load accepted the file but the module does not hold its values: " + d);
    return 0;
  }
  if (auto d = fuzz::map_diff(model->state_dict(), before); !d.empty())
    fuzz::fail("nn::load rejected the file but changed the module: " + d);
  return 0;
}
