// Op table lines: views (ops/view.cpp).
#include "op_table.h"

namespace op_table {
AG_OP_TABLE(view) {
  return {
      {"reshape",
       {{3, 4}},
       [](auto& x) {
         return reshape(x[0], {2, 6});
       }},
      {"reshape 0-d to [1,1]",
       {Shape{}},
       [](auto& x) {
         return reshape(x[0], {1, 1});
       }},
      {"reshape -1",
       {{2, 3, 2}},
       [](auto& x) {
         return x[0].reshape({-1, 2});
       }},
      {"reshape non-contiguous (copies)", {{3, 4}}, [](auto& x) { return x[0].t().reshape({12}); }},
      {"view",
       {{3, 4}},
       [](auto& x) {
         return view(x[0], {4, 3});
       }},
      {"view -1 split dim",
       {{2, 6}},
       [](auto& x) {
         return x[0].view({2, -1, 2});
       }},
      {"transpose", {{2, 3, 4}}, [](auto& x) { return transpose(x[0], 0, 2); }},
      {"transpose negative dims", {{2, 3, 4}}, [](auto& x) { return x[0].transpose(-1, -2) * 2.0; }},
      {"transpose 0-d", {Shape{}}, [](auto& x) { return transpose(x[0], 0, -1) * 2.0; }},
      {"transpose by the method t()", {{3, 4}}, [](auto& x) { return x[0].t(); }},
      {"permute",
       {{2, 3, 4}},
       [](auto& x) {
         return permute(x[0], {2, 0, 1});
       }},
      {"permute negative dims",
       {{2, 3, 4}},
       [](auto& x) {
         return x[0].permute({-1, 0, 1}) * 2.0;
       }},
      {"unsqueeze", {{3, 4}}, [](auto& x) { return unsqueeze(x[0], 1); }},
      {"unsqueeze -1 non-contiguous", {{3, 4}}, [](auto& x) { return x[0].unsqueeze(-1); }, transposed},
      {"unsqueeze 0-d", {Shape{}}, [](auto& x) { return x[0].unsqueeze(0) * 2.0; }},
      {"squeeze all", {{3, 1, 4, 1}}, [](auto& x) { return squeeze(x[0]); }},
      {"squeeze dim", {{3, 1, 4}}, [](auto& x) { return x[0].squeeze(1); }},
      {"squeeze dim of size > 1 (no-op)", {{3, 4}}, [](auto& x) { return x[0].squeeze(0); }},
      {"expand",
       {{3, 1}},
       [](auto& x) {
         return expand(x[0], {2, 3, 4});
       }},
      {"expand 0-d",
       {Shape{}},
       [](auto& x) {
         return expand(x[0], {2, 3});
       }},
      {"expand -1",
       {{1, 4}},
       [](auto& x) {
         return x[0].expand({3, -1});
       }},
      {"slice with step", {{3, 5}}, [](auto& x) { return slice(x[0], 1, 1, 5, 2); }},
      {"slice negative start", {{4, 3}}, [](auto& x) { return x[0].slice(0, -3, 3); }},
      {"slice of a slice", {{4, 6}}, [](auto& x) { return x[0].slice(1, 0, 6, 2).slice(0, 1, 4, 2); }},
      {"select", {{3, 4}}, [](auto& x) { return select(x[0], 1, -1); }},
      {"select to 0-d", {{3}}, [](auto& x) { return x[0].select(0, 1) * 2.0; }},
      {"select dim 0 non-contiguous", {{3, 4}}, [](auto& x) { return x[0].select(0, 1); }, transposed},
      {"narrow", {{3, 4}}, [](auto& x) { return narrow(x[0], 1, 1, 2); }},
      {"flatten", {{2, 3, 2}}, [](auto& x) { return flatten(x[0]); }},
      {"flatten range", {{2, 3, 2}}, [](auto& x) { return x[0].flatten(1, 2); }},
      {"flatten non-contiguous", {{2, 3, 2}}, [](auto& x) { return x[0].transpose(0, 2).flatten(0, 1); }},
      {"flatten 0-d", {Shape{}}, [](auto& x) { return flatten(x[0]) * 2.0; }},
      {"unflatten",
       {{2, 6}},
       [](auto& x) {
         return unflatten(x[0], 1, {2, -1});
       }},
      {"unflatten non-contiguous",
       {{4, 3}},
       [](auto& x) {
         return unflatten(x[0], -2, {2, 1, 2});
       },
       transposed},
      {"movedim", {{2, 3, 4}}, [](auto& x) { return movedim(x[0], 0, -1); }},
      {"movedim vector",
       {{2, 3, 4, 5}},
       [](auto& x) {
         return movedim(x[0], {0, 1}, {2, 0});
       }},
      {"diagonal", {{3, 4}}, [](auto& x) { return diagonal(x[0]); }},
      {"diagonal negative offset non-square", {{4, 3}}, [](auto& x) { return diagonal(x[0], -1); }},
      {"diagonal 3-D dims non-contiguous", {{2, 3, 4}}, [](auto& x) { return diagonal(x[0], 1, -1, 0); }, transposed},
      {"diagonal of a broadcast input",
       {{3, 1}},
       [](auto& x) {
         return diagonal(x[0].expand({3, 4}), 1);
       }},
      {"split size",
       {{2, 5}},
       [](auto& x) {
         auto p = split(x[0], 2, 1);  // sizes 2, 2, 1
         return cat({p[2], p[0] * 2.0, p[1] * 3.0}, 1);
       }},
      {"split sizes",
       {{4, 2}},
       [](auto& x) {
         auto p = split(x[0], std::vector<int64_t>{1, 3}, 0);
         return cat({p[1], p[0] * 2.0}, 0);
       }},
      {"chunk",
       {{5, 2}},
       [](auto& x) {
         auto p = chunk(x[0], 3, 0);  // sizes 2, 2, 1
         return cat({p[0] * 3.0, p[2], p[1] * 2.0}, 0);
       }},
  };
}

}  // namespace op_table
