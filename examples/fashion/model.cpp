// The example's classifiers: see model.h.
#include "fashion/model.h"

#include <ostream>

namespace fashion {

ModelKind model_kind(const std::string& name) {
  if (name == "logistic") return ModelKind::logistic;
  if (name == "mlp") return ModelKind::mlp;
  if (name == "cnn") return ModelKind::cnn;
  AG_CHECK(false, ValueError, "--model must be cnn, mlp or logistic, got '", name, "'");
  return ModelKind::cnn;
}

std::string model_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::logistic: return "logistic";
    case ModelKind::mlp: return "mlp";
    case ModelKind::cnn: return "cnn";
  }
  return "?";
}

Arch arch_of(const std::string& name) {
  if (name == "resnet9") return Arch::resnet9;
  if (name == "resnet") return Arch::resnet;
  AG_CHECK(false, ValueError, "--arch must be resnet9 or resnet, got '", name, "'");
  return Arch::resnet9;
}

std::string arch_name(Arch arch) { return arch == Arch::resnet9 ? "resnet9" : "resnet"; }

namespace {

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  // No bias: the BatchNorm after it has one (torchvision's ResNet).
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride({stride}).padding(std::vector<int64_t>{1}).bias(false));
}

// conv 3x3 -> BatchNorm -> ReLU appended to `s` (names s.<k>, s.<k+1>, s.<k+2>).
void conv_bn_relu(nn::Sequential& s, int64_t in, int64_t out) {
  s->push_back(conv3x3(in, out, 1));
  s->push_back(nn::BatchNorm2d(out));
  s->push_back(nn::ReLU());
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t in, int64_t out, int64_t stride) : nn::Module("BasicBlock") {
  conv1 = register_module("conv1", conv3x3(in, out, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(out));
  conv2 = register_module("conv2", conv3x3(out, out, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(out));
  if (stride != 1 || in != out) {
    // torchvision's names: downsample.0 (the 1x1 conv) and downsample.1 (its BatchNorm).
    downsample = register_module("downsample", nn::Sequential());
    downsample->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride({stride}).bias(false)));
    downsample->push_back(nn::BatchNorm2d(out));
  }
}

Tensor BasicBlockImpl::forward(const Tensor& x) {
  Tensor y = relu(bn1(conv1(x)));  // (B, out, H / stride, W / stride)
  y = bn2(conv2(y));
  Tensor shortcut = downsample.is_empty() ? x : downsample(x);  // (B, out, H / stride, W / stride)
  return relu(y + shortcut);
}

ClassifierImpl::ClassifierImpl(const ModelOptions& o) : nn::Module("Classifier"), options(o) {
  const int64_t pixels = 28 * 28;
  switch (o.kind()) {
    case ModelKind::logistic: fc = register_module("fc", nn::Linear(pixels, o.classes())); break;
    case ModelKind::mlp:
      AG_CHECK(o.hidden() > 0, ValueError, "Classifier: mlp hidden width ", o.hidden(), " must be positive");
      fc1 = register_module("fc1", nn::Linear(pixels, o.hidden()));
      fc2 = register_module("fc2", nn::Linear(o.hidden(), o.hidden()));
      fc3 = register_module("fc3", nn::Linear(o.hidden(), o.classes()));
      break;
    case ModelKind::cnn: {
      const auto& w = o.widths();
      if (o.arch() == Arch::resnet9) {
        AG_CHECK(w.size() == 3 && w[0] > 1 && w[1] > 0 && w[2] > 0, ValueError,
                 "Classifier: resnet9 takes three positive stage widths (the first at least 2), got ", w.size());
        const int64_t c0 = w[0] / 2;
        auto stack = [&](const char* name, int64_t in, int64_t out, bool pool) {
          nn::Sequential s = register_module(name, nn::Sequential());
          conv_bn_relu(s, in, out);
          if (pool) s->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
          return s;
        };
        prep = stack("prep", 1, c0, false);
        layer1 = stack("layer1", c0, w[0], true);
        res1 = stack("res1", w[0], w[0], false);
        conv_bn_relu(res1, w[0], w[0]);
        layer2 = stack("layer2", w[0], w[1], true);
        layer3 = stack("layer3", w[1], w[2], true);
        res3 = stack("res3", w[2], w[2], false);
        conv_bn_relu(res3, w[2], w[2]);
        fc = register_module("fc", nn::Linear(w[2], o.classes()));
        break;
      }
      const auto& n = o.blocks();
      AG_CHECK(!w.empty() && w.size() == n.size(), ValueError, "Classifier: ", w.size(), " stage widths and ", n.size(),
               " block counts; need one of each per stage");
      for (std::size_t s = 0; s < w.size(); ++s)
        AG_CHECK(w[s] > 0 && n[s] > 0, ValueError, "Classifier: stage ", s + 1, " has width ", w[s], " and ", n[s],
                 " blocks; both must be positive");
      conv1 = register_module("conv1", conv3x3(1, w[0], 1));
      bn1 = register_module("bn1", nn::BatchNorm2d(w[0]));
      int64_t in = w[0];
      for (std::size_t s = 0; s < w.size(); ++s) {
        auto stage = register_module("layer" + std::to_string(s + 1), nn::ModuleList());
        for (int64_t i = 0; i < n[s]; ++i) {
          // Every stage after the first halves the image in its first block.
          BasicBlock b(in, w[s], s > 0 && i == 0 ? 2 : 1);
          stage->push_back(b);
          blocks.push_back(b);
          in = w[s];
        }
      }
      if (o.zero_init_residual()) {
        NoGradGuard no_grad;
        for (BasicBlock& b : blocks) b->bn2->weight.zero_();
      }
      // Each stage after the first halves the side: 28 -> 14 -> 7 with three stages.
      const int64_t side = 28 >> (w.size() - 1);
      AG_CHECK(side > 0, ValueError, "Classifier: ", w.size(), " stages halve 28 x 28 images to nothing");
      fc = register_module("fc", nn::Linear(o.head() == Head::gap ? in : in * side * side, o.classes()));
      break;
    }
  }
}

Tensor ClassifierImpl::forward(const Tensor& x) {
  AG_CHECK(x.dim() == 4 && x.size(1) == 1 && x.size(2) == 28 && x.size(3) == 28, ShapeError,
           "Classifier: expected images (B, 1, 28, 28), got ", x.shape());
  switch (options.kind()) {
    case ModelKind::logistic: return fc(x.flatten(1));  // (B, 784) -> (B, 10)
    case ModelKind::mlp: return fc3(relu(fc2(relu(fc1(x.flatten(1))))));
    case ModelKind::cnn: {
      if (options.arch() == Arch::resnet9) {
        Tensor h = layer1(prep(x));  // (B, c1, 14, 14)
        h = h + res1(h);             // (B, c1, 14, 14)
        h = layer3(layer2(h));       // (B, c3, 3, 3)
        h = h + res3(h);             // (B, c3, 3, 3)
        return fc(h.amax({2, 3}));   // global max pool (B, c3) -> (B, 10)
      }
      Tensor h = relu(bn1(conv1(x)));         // (B, c1, 28, 28)
      for (BasicBlock& b : blocks) h = b(h);  // (B, c3, 7, 7)
      // (B, c3) by global average pooling, or (B, c3 * 49) flattened -> (B, 10)
      return fc(options.head() == Head::gap ? h.mean({2, 3}) : h.flatten(1));
    }
  }
  return {};
}

void ClassifierImpl::pretty_print(std::ostream& os) const {
  os << "Classifier(" << model_name(options.kind());
  if (options.kind() == ModelKind::mlp) os << ", hidden=" << options.hidden();
  if (options.kind() == ModelKind::cnn && options.arch() == Arch::resnet9) {
    const auto& w = options.widths();
    os << ", resnet9, widths=[" << w[0] / 2 << ", " << w[0] << ", " << w[1] << ", " << w[2] << "]";
  } else if (options.kind() == ModelKind::cnn) {
    os << ", widths=[";
    for (std::size_t s = 0; s < options.widths().size(); ++s)
      os << (s ? ", " : "") << options.widths()[s] << " x" << options.blocks()[s];
    os << "], head=" << (options.head() == Head::gap ? "gap" : "flatten");
  }
  os << ")";
}

}  // namespace fashion
