// ag_bench's recurrent workloads, 18 and 19 (ag_bench.cpp's header describes them; the
// twins are libtorch_bench.cpp's and torch_bench.py's). T steps, B batch, I input
// features, H hidden features, L layers.
#include <attograd/attograd.h>

#include <cstdint>
#include <tuple>

// Its name in usage messages (bench_harness.h), as in ag_bench.cpp.
constexpr const char* kProgram = "ag_bench";
#include "bench_harness.h"
#include "ag_bench_rnn.h"

namespace bench {

using namespace ag;

// ---- 18: LSTM forward + backward -------------------------------------------------------
// x (T, B, I) time-major, not requiring grad; backward from out.sum() to every parameter;
// the gradients dropped before each repetition.
Timings lstm_training(const Args& a) {
  const int64_t T = 100, B = a.batch > 0 ? a.batch : 32, H = 512, L = 2;
  manual_seed(0);
  nn::LSTM lstm(nn::LSTMOptions(H, H).num_layers(L));
  Tensor x = randn({T, B, H});  // (T, B, I)
  Timings t = run_reps(a, [&] {
    lstm->zero_grad();
    auto [out, hc] = lstm->forward(x);  // out (T, B, H); h_n, c_n (L, B, H)
    sum(out).backward();
  });
  t.info = {{"steps", T},       {"batch", B},  {"input_size", H},
            {"hidden_size", H}, {"layers", L}, {"parameters", lstm->num_parameters()}};
  return t;
}

// ---- 19: GRU inference, one step per call ------------------------------------------------
// A streaming decoder's loop at B 1: each call takes one step x_t (1, 1, I) and the hidden
// state (L, 1, H) the previous call returned; a repetition is a new stream of T calls from
// zeros, under NoGradGuard.
Timings gru_streaming(const Args& a) {
  const int64_t T = 100, H = 512, L = 2;
  manual_seed(0);
  nn::GRU gru(nn::GRUOptions(H, H).num_layers(L));
  gru->eval();
  Tensor x = randn({T, 1, H});  // (T, 1, I): the stream's inputs, one step per call
  Tensor h;                     // (L, 1, H)
  Timings t = run_reps(a, [&] {
    NoGradGuard no_grad;
    h = zeros({L, 1, H});
    for (int64_t s = 0; s < T; ++s) h = std::get<1>(gru->forward(x.narrow(0, s, 1), h));  // out (1, 1, H) unused
  });
  t.info = {{"steps", T},       {"batch", 1},  {"input_size", H},
            {"hidden_size", H}, {"layers", L}, {"parameters", gru->num_parameters()}};
  return t;
}

}  // namespace bench
