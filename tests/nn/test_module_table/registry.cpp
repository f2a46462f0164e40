// The registry behind AG_MODULE_TABLE: families register at static-initialization time
// (in an unspecified order), and all() sorts them by name so the table's order is fixed.
#include <map>

#include "module_table.h"

namespace module_table {
namespace {
std::map<std::string, std::vector<Line> (*)()>& families() {
  static std::map<std::string, std::vector<Line> (*)()> f;
  return f;
}
}  // namespace

Family::Family(const char* name, std::vector<Line> (*make)()) { families()[name] = make; }

const std::vector<Line>& all() {
  static const std::vector<Line> table = [] {
    std::vector<Line> t;
    for (const auto& [name, make] : families())
      for (Line& l : make()) {
        l.family = name.c_str();
        t.push_back(std::move(l));
      }
    return t;
  }();
  return table;
}

}  // namespace module_table
