// The README's twenty-line example: a small MLP learns to sum its three inputs.
#include <attograd/attograd.h>
#include <attograd/log.h>
#include <iostream>
using namespace ag;

int main() {
  manual_seed(0);
  Tensor x = randn({64, 3});    // inputs
  Tensor y = x.sum({1}, true);  // target: the sum of each row
  nn::Sequential net(nn::Linear(3, 16), nn::ReLU(), nn::Linear(16, 1));
  optim::Adam opt(net->named_parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step < 500; ++step) {
    Tensor loss = mse_loss(net(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step % 100 == 0) log().info("step {} loss {:.5f}", step, loss.item<float>());
  }
  std::cout << net << "\n" << net(Tensor::from_vector(std::vector<float>{1, 2, 3}, {1, 3})) << "\n";
  nn::save(*net, "net.safetensors");  // loadable in PyTorch
}
