// sweep_plot: draws tools/bench_sweep's results as two log-log pictures with PLplot
// (examples/common/plot.h): milliseconds per sequence and peak MiB per sequence against
// the sequence length L, one line per (side, mask).
//
//   sweep_plot sweep.json sweep.png sweep_mem.png
//
// Errors (unreadable JSON, a field missing, nothing to draw) end with status 1 and a
// message; a picture is written whole or not at all (plot.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/plot.h"

namespace {

using examples::plot::Color;
using examples::plot::Series;

// Side -> colour; causal lines a lighter shade of the same hue.
Color color_of(const std::string& side, bool causal) {
  static const std::map<std::string, std::pair<Color, Color>> colors = {{"attograd", {{31, 119, 180}, {120, 180, 225}}},
                                                                        {"libtorch", {{214, 39, 40}, {245, 140, 140}}},
                                                                        {"pytorch", {{44, 160, 44}, {150, 215, 140}}}};
  auto it = colors.find(side);
  if (it == colors.end()) return {90, 90, 90};
  return causal ? it->second.second : it->second.first;
}

std::string label_of(const std::string& side, bool causal) {
  static const std::map<std::string, std::string> names = {
      {"attograd", "attograd"}, {"libtorch", "LibTorch"}, {"pytorch", "PyTorch"}};
  auto it = names.find(side);
  return (it == names.end() ? side : it->second) + (causal ? " causal" : "");
}

// One series per (side, mask) of `key` against L, in the order the points came.
std::vector<Series> series_of(const nlohmann::json& doc, const std::string& key) {
  std::vector<Series> out;
  std::map<std::pair<std::string, bool>, std::size_t> index;
  for (const auto& p : doc.at("points")) {
    if (!p.contains(key)) continue;  // a failed point
    const std::pair<std::string, bool> id{p.at("side").get<std::string>(), p.at("causal").get<bool>()};
    if (!index.count(id)) {
      index[id] = out.size();
      out.push_back({label_of(id.first, id.second), {}, {}, color_of(id.first, id.second)});
    }
    Series& s = out[index[id]];
    s.xs.push_back(p.at("L").get<double>());
    s.ys.push_back(p.at(key).get<double>());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: sweep_plot SWEEP.json TIME.png MEMORY.png\n";
    return 2;
  }
  try {
    std::ifstream f(argv[1]);
    if (!f) throw std::runtime_error(std::string("cannot read ") + argv[1]);
    const nlohmann::json doc = nlohmann::json::parse(f);
    const std::string shape = "MHA fwd+bwd (E " + std::to_string(doc.at("E").get<int>()) + ", " +
                              std::to_string(doc.at("heads").get<int>()) + " heads, " +
                              std::to_string(doc.at("threads").get<int>()) + "T)";
    examples::plot::log_log_chart(argv[2], shape + ": time", series_of(doc, "ms_per_seq"), "sequence length L",
                                  "ms per sequence");
    examples::plot::log_log_chart(argv[3], shape + ": peak memory", series_of(doc, "mib_per_seq"), "sequence length L",
                                  "peak MiB per sequence");
  } catch (const std::exception& e) {
    std::cerr << "sweep_plot: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
