#pragma once
// The public ops, read from the op family headers (AG_OPS_INCLUDE_DIR, set for test_ops
// and test_tensor_methods in tests/CMakeLists.txt): test_ops checks that each has an op
// table line and an nn::functional name, test_tensor_methods that each torch.Tensor
// method among them has a method form on ag::Tensor.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace test_ops {

// The public ops by header: every function in the public op headers
// (ops/include/attograd/**.h) that returns a Tensor, a pair or a vector of them, keyed by
// the header's name without ".h" (attograd/ops/unary.h -> "unary": its op family).
inline std::map<std::string, std::set<std::string>> ops_by_header() {
  namespace fs = std::filesystem;
  static const std::regex decl(
      R"(^(?:Tensor|RnnLayerOutput|std::pair<Tensor, Tensor>|std::vector<Tensor>|std::tuple<[A-Za-z, ]*>)\s+(operator\S+?|\w+)\()");
  std::map<std::string, std::set<std::string>> ops;
  for (const auto& entry : fs::recursive_directory_iterator(AG_OPS_INCLUDE_DIR)) {
    // Factories make tensors from nothing differentiable (tests/test_tensor_factory.cpp).
    if (entry.path().extension() != ".h" || entry.path().filename() == "factory.h") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, decl) && line.find("= delete") == std::string::npos)
        ops[entry.path().stem().string()].insert(m[1]);
    }
  }
  return ops;
}

// Every public op's name.
inline std::set<std::string> public_ops() {
  std::set<std::string> names;
  for (const auto& entry : ops_by_header()) names.insert(entry.second.begin(), entry.second.end());
  return names;
}

}  // namespace test_ops
