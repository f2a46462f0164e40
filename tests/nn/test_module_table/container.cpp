// Module table lines: containers (attograd/nn/container.h) with children: construction,
// printing and state-dict keys (and Sequential's forward). Printing differences from
// PyTorch: children without options print no "()", C++'s true, and the parameter
// containers print no entries (torch lists each "Parameter containing: [...]");
// ParameterDict keeps its keys in insertion order, torch 1.13 sorts them.
#include "module_table.h"

namespace module_table {

AG_MODULE_TABLE(container) {
  return {
      {.name = "Sequential",
       .make = [] { return unary(nn::Sequential(nn::Linear(2, 3), nn::ReLU())); },
       .inputs = {{2, 2}},
       .outputs = {{2, 3}},
       .diffs = {{"ReLU()", "ReLU"}, kTrue}},
      {.name = "ModuleList",
       .make = [] { return no_forward(nn::ModuleList(nn::Linear(2, 3), nn::ReLU())); },
       .grad = Grad::none,  // no forward
       .diffs = {{"ReLU()", "ReLU"}, kTrue}},
      {.name = "ModuleDict",
       .make =
           [] {
             return no_forward(
                 nn::ModuleDict(nn::ModuleDictImpl::Items{{"lin", nn::Linear(2, 3).ptr()}, {"act", nn::ReLU().ptr()}}));
           },
       .grad = Grad::none,  // no forward
       .diffs = {{"ReLU()", "ReLU"}, kTrue}},
      {.name = "ParameterList",
       .make =
           [] {
             return no_forward(nn::ParameterList(std::vector<Tensor>{zeros({2, 3}), zeros({4})}));
           },
       .grad = Grad::none,  // no forward
       .diffs = {{"ParameterList(\n"
                  "    (0): Parameter containing: [torch.float32 of size 2x3]\n"
                  "    (1): Parameter containing: [torch.float32 of size 4]\n"
                  ")",
                  "ParameterList"}}},
      {.name = "ParameterDict",
       .make =
           [] {
             return no_forward(
                 nn::ParameterDict(nn::ParameterDictImpl::Items{{"w", zeros({2, 3})}, {"b", zeros({4})}}));
           },
       .grad = Grad::none,  // no forward
       .diffs = {{"ParameterDict(\n"
                  "    (b): Parameter containing: [torch.FloatTensor of size 4]\n"
                  "    (w): Parameter containing: [torch.FloatTensor of size 2x3]\n"
                  ")",
                  "ParameterDict"}},
       .order_differs = true},
  };
}

}  // namespace module_table
