#pragma once
// The example's three classifiers of (B, 1, 28, 28) images into 10 classes, one module
// type with PyTorch's layer names (a state dict loads into the same layout there):
//   logistic  fc: Linear(784, 10) on the flattened image (multinomial logistic regression)
//   mlp       fc1: Linear(784, h) -> ReLU -> fc2: Linear(h, h) -> ReLU -> fc3: Linear(h, 10)
//   cnn       a small residual network, by default Arch::resnet9 (the default widths
//             (c1, c2, c3) = (32, 64, 128), c0 = c1 / 2; Page's DAWNBench ResNet-9 for
//             CIFAR-10, its widths quartered, for 28 x 28):
//             prep:   conv 3x3 (1 -> c0) -> BN -> ReLU                  (B, c0, 28, 28)
//             layer1: conv 3x3 (c0 -> c1) -> BN -> ReLU -> max pool 2   (B, c1, 14, 14)
//             res1:   x + (conv 3x3 -> BN -> ReLU) x 2                  (B, c1, 14, 14)
//             layer2: conv 3x3 (c1 -> c2) -> BN -> ReLU -> max pool 2   (B, c2, 7, 7)
//             layer3: conv 3x3 (c2 -> c3) -> BN -> ReLU -> max pool 2   (B, c3, 3, 3)
//             res3:   x + (conv 3x3 -> BN -> ReLU) x 2                  (B, c3, 3, 3)
//             global max pool -> fc: Linear(c3, 10)                      (B, 10)
//             or Arch::resnet (He et al. 2016, torchvision's BasicBlock):
//             conv1 3x3 (1 -> c1) -> bn1 -> ReLU                       (B, c1, 28, 28)
//             layer1: BasicBlock(c1 -> c1)                              (B, c1, 28, 28)
//             layer2: BasicBlock(c1 -> c2, stride 2, 1x1 downsample)    (B, c2, 14, 14)
//             layer3: BasicBlock(c2 -> c3, stride 2, 1x1 downsample)    (B, c3, 7, 7)
//             global average pool -> fc: Linear(c3, 10)                 (B, 10)
//             (widths and blocks per stage are options). ResNet-9 spends its
//             multiply-adds at 14 x 14 and below, where more channels fit the same time:
//             on Fashion-MNIST it reached a higher accuracy per second of training
//             (examples/fashion/README.md). Every BatchNorm is an nn::BatchNorm2d; a
//             data-parallel run turns them into nn::SyncBatchNorm
//             (nn::convert_sync_batchnorm: statistics over the global batch, as one process
//             holding it would compute them).
// Legend: B batch, C channels, 28 x 28 pixels.
#include <attograd/attograd.h>

#include <string>
#include <vector>

namespace fashion {

using namespace ag;

enum class ModelKind { logistic, mlp, cnn };
// The CNN's architecture: resnet9 (the default) or resnet (torchvision's BasicBlocks).
enum class Arch { resnet9, resnet };
Arch arch_of(const std::string& name);  // "resnet9", "resnet"; ValueError otherwise
std::string arch_name(Arch arch);
// The CNN's head: gap averages each channel over the last stage's 7 x 7 positions
// (torchvision's ResNet), flatten keeps where each feature was (c3 * 7 * 7 inputs to fc).
enum class Head { gap, flatten };
ModelKind model_kind(const std::string& name);  // "logistic", "mlp", "cnn"; ValueError otherwise
std::string model_name(ModelKind kind);

struct ModelOptions {
  ModelOptions(ModelKind kind = ModelKind::cnn) : kind_(kind) {}
  AG_ARG(ModelKind, kind);
  AG_ARG(Arch, arch) = Arch::resnet9;
  AG_ARG(std::vector<int64_t>, widths) = {32, 64, 128};  // cnn: channels of the three stages
  AG_ARG(std::vector<int64_t>, blocks) = {1, 1, 1};      // resnet: BasicBlocks per stage
  AG_ARG(Head, head) = Head::gap;                        // resnet: what fc reads
  // resnet: each block's last BatchNorm starts with weight 0, so that every block starts as
  // the identity (torchvision's zero_init_residual; Goyal et al. 2017).
  AG_ARG(bool, zero_init_residual) = false;
  AG_ARG(int64_t, hidden) = 256;  // mlp: width of the two hidden layers
  AG_ARG(int64_t, classes) = 10;
};

// torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), the
// shortcut a 1x1 strided conv + BatchNorm when the shape changes, else the identity.
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride);
  Tensor forward(const Tensor& x);  // (B, in, H, W) -> (B, out, H / stride, W / stride)

  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Sequential downsample{nullptr};  // 1x1 conv + BatchNorm, or none
};
AG_MODULE(BasicBlock);

class ClassifierImpl : public nn::Module {
 public:
  explicit ClassifierImpl(const ModelOptions& options);
  Tensor forward(const Tensor& x);  // (B, 1, 28, 28) -> logits (B, classes)
  void pretty_print(std::ostream& os) const override;

  ModelOptions options;
  nn::Linear fc{nullptr}, fc1{nullptr}, fc2{nullptr}, fc3{nullptr};  // the ones its kind uses
  // resnet9: conv -> BN -> ReLU (-> max pool) stacks, res1 / res3 added to their input
  nn::Sequential prep{nullptr}, layer1{nullptr}, res1{nullptr}, layer2{nullptr}, layer3{nullptr}, res3{nullptr};
  // resnet
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  std::vector<BasicBlock> blocks;  // registered as layer<stage>.<i>
};
AG_MODULE(Classifier);

}  // namespace fashion
