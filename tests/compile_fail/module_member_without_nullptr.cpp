// Compiled by tests/compile_fail.cmake: a user's module with `nn::Linear head;` (no
// {nullptr}) must fail with ModuleHolder's message; with -DAG_FIXED it must compile.
#include <attograd/nn.h>

struct GPTImpl : ag::nn::Module {
  GPTImpl() : ag::nn::Module("GPT") { head = register_module("head", ag::nn::Linear(4, 5)); }
#ifdef AG_FIXED
  ag::nn::Linear head{nullptr};
#else
  ag::nn::Linear head;
#endif
};

int main() {
  GPTImpl gpt;
  return gpt.head.is_empty() ? 1 : 0;
}
