#pragma once
// ag_bench's recurrent workloads (ag_bench_rnn.cpp; ag_bench.cpp's header describes them).
// Include after bench_harness.h.

namespace bench {

// 18: nn::LSTM(512, 512, 2 layers) forward + backward on (T 100, B 32, 512), loss out.sum()
Timings lstm_training(const Args& a);
// 19: nn::GRU(512, 512, 2 layers) inference at B 1, one step per call, 100 calls
Timings gru_streaming(const Args& a);

}  // namespace bench
