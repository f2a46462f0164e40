// Op table lines: the differentiable collectives (attograd/ops/distributed.h). test_ops
// runs as one process, a world of one, where each is the identity (or a copy of the
// right shape); tests/dist/ checks them across 2 ranks under mpirun.
#include "op_table.h"

namespace op_table {

AG_OP_TABLE(distributed) {
  return {
      {"copy_to_parallel_region", {{2, 3}}, [](auto& x) { return dist::copy_to_parallel_region(x[0]); }},
      {"reduce_from_parallel_region", {{2, 3}}, [](auto& x) { return dist::reduce_from_parallel_region(x[0]); }},
      {"gather_from_parallel_region scatter_to_parallel_region",
       {{2, 4}, {3, 4}},
       [](auto& x) {
         return matmul(dist::gather_from_parallel_region(x[0]), dist::scatter_to_parallel_region(x[1]).t());
       }},
      {"all_reduce functional", {{2, 3}}, [](auto& x) { return mul(dist::functional::all_reduce(x[0]), x[0]); }},
      {"all_gather functional dim 1",
       {{2, 3}},
       [](auto& x) { return dist::functional::all_gather(x[0], 1); },
       transposed},
      {"reduce_scatter functional dim 0", {{4, 3}}, [](auto& x) { return dist::functional::reduce_scatter(x[0], 0); }},
  };
}

}  // namespace op_table
