// The registry behind AG_OP_TABLE: families register at static-initialization time (in
// an unspecified order), and all() sorts them by name so the table's order is fixed.
#include <map>

#include "op_table.h"

namespace op_table {
namespace {
std::map<std::string, std::vector<OpCase> (*)()>& families() {
  static std::map<std::string, std::vector<OpCase> (*)()> f;
  return f;
}
}  // namespace

Family::Family(const char* name, std::vector<OpCase> (*make)()) { families()[name] = make; }

const std::vector<OpCase>& all() {
  static const std::vector<OpCase> table = [] {
    std::vector<OpCase> t;
    for (auto& [name, make] : families())
      for (OpCase& c : make()) {
        c.family = name.c_str();
        t.push_back(std::move(c));
      }
    return t;
  }();
  return table;
}

}  // namespace op_table
