#pragma once
// The translate example's results: test-set BLEU and chrF for greedy decoding, beam
// search and a copy-the-source baseline, samples, pictures and metrics.json.
#include <string>
#include <vector>

#include "catalog.h"
#include "trainer.h"

namespace translate {

struct History {
  std::vector<double> step, loss;                    // every training step
  std::vector<double> val_step, val_loss, val_bleu;  // every evaluation
};

struct ReportOptions {
  int64_t beam = 4;
  double length_penalty = 0.6;
  double train_seconds = 0;
  int64_t train_tokens = 0;
  std::string lang = "fr";
  const Corpus* corpus = nullptr;
};

// Scores the test split, prints the table and samples, and writes to `out`: metrics.json,
// samples.txt, loss.png, bleu.png, attention.png.
void report(const std::string& out, Run& run, const Subword& sw, const std::vector<Pair>& test_text,
            const std::vector<TokenPair>& test, const History& h, const ReportOptions& o);

}  // namespace translate
